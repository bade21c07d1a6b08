// shape_ops.cc - ops that only move data: copy (FORMAT.md op 12), transpose (13), concat (14); any
// dtype, the same on every input and output.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "math/strided_copy.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

using kern::no_scratch;

// ---- copy: Reshape, Flatten, Identity; any dtype, bytes unchanged.

bool validate_copy(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "copy";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dtype(x, y, op, "input 0", err)) return false;
    if (x.numel != y.numel)
        return kern::fail(err, op, cat("element counts differ: ", kern::dims_str(x), " vs ", kern::dims_str(y)));
    return true;
}

// Buffers that do not overlap are copied in 4 KB-unit ranges across the core's threads.
void run_copy(const KernelArgs& a) {
    if (a.in[0] == a.out[0]) return;
    const auto* x = static_cast<const unsigned char*>(a.in[0]);
    auto* y = static_cast<unsigned char*>(a.out[0]);
    const int64_t bytes = static_cast<int64_t>(kern::out_desc(a, 0).bytes);
    const auto xi = reinterpret_cast<uintptr_t>(x), yi = reinterpret_cast<uintptr_t>(y);
    if (xi < yi + static_cast<uintptr_t>(bytes) && yi < xi + static_cast<uintptr_t>(bytes)) {
        std::memmove(y, x, static_cast<size_t>(bytes));
        return;
    }
    constexpr int64_t kUnit = 4096;
    const int64_t units = (bytes + kUnit - 1) / kUnit;
    a.par->for_ranges(units, split_parts(units, kern::out_desc(a, 0).numel, kMinElemsPerPart),
                      [&](int64_t u0, int64_t u1, int) {
                          const int64_t b0 = u0 * kUnit, b1 = std::min(bytes, u1 * kUnit);
                          std::memcpy(y + b0, x + b0, static_cast<size_t>(b1 - b0));
                      });
}

// ---- transpose

bool validate_transpose(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "transpose";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dtype(x, y, op, "input 0", err)) return false;
    if (y.ndim != x.ndim) return kern::fail(err, op, cat("output rank ", y.ndim, " differs from input rank ", x.ndim));
    const TransposeParams tp = TransposeParams::of(n);
    bool seen[kMaxDims] = {false};
    for (int i = 0; i < x.ndim; ++i) {
        const int64_t p = tp.perm[i];
        if (p < 0 || p >= x.ndim) return kern::fail(err, op, cat("perm[", i, "] = ", p, " outside 0..", x.ndim - 1));
        if (seen[p]) return kern::fail(err, op, cat("perm repeats axis ", p));
        seen[p] = true;
        if (y.dims[i] != x.dims[p])
            return kern::fail(err, op, cat("output dim ", i, " is ", y.dims[i], ", input dim ", p, " is ", x.dims[p]));
    }
    return true;
}

void run_transpose(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    int64_t xs[kMaxDims], strides[kMaxDims];
    kern::dense_strides(xd.dims, xd.ndim, xs);
    const TransposeParams p = TransposeParams::of(*a.node);
    for (int i = 0; i < xd.ndim; ++i) strides[i] = xs[p.perm[i]];
    kern::strided_copy(a.in[0], strides, kern::out_desc(a, 0), a.out[0], *a.par);
}

// ---- concat

bool validate_concat(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "concat";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& y = kern::output(g, n, 0);
    const int64_t axis = ConcatParams::of(n).axis;
    if (axis < 0 || axis >= y.ndim) return kern::fail(err, op, cat("axis ", axis, " outside 0..", y.ndim - 1));
    int64_t sum = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
        const TensorDesc* x = kern::input(g, n, k);
        if (!x) return kern::fail(err, op, cat("input ", k, " is absent"));
        if (!kern::same_dtype(*x, y, op, cat("input ", k).c_str(), err)) return false;
        bool ok = x->ndim == y.ndim;
        for (int i = 0; ok && i < y.ndim; ++i) ok = i == axis || x->dims[i] == y.dims[i];
        if (!ok)
            return kern::fail(err, op,
                              cat("input ", k, " shape ", kern::dims_str(*x), " does not match output ",
                                  kern::dims_str(y), " outside axis ", axis));
        if (!kern::add_ok(sum, x->dims[axis], &sum)) return kern::fail(err, op, "axis sizes overflow");
    }
    if (sum != y.dims[axis])
        return kern::fail(err, op,
                          cat("input sizes along axis ", axis, " sum to ", sum, ", output has ", y.dims[axis]));
    return true;
}

// The output is outer rows of the inputs' runs side by side. Threaded, it is cut into equal ranges of its
// bytes (in 4 KB units, shape only), each filled by copying the parts of the runs that fall in it.
void run_concat(const KernelArgs& a) {
    const TensorDesc& yd = kern::out_desc(a, 0);
    const int axis = static_cast<int>(ConcatParams::of(*a.node).axis);
    const int64_t outer = kern::prod(yd.dims, 0, axis);
    const int64_t inner = kern::prod(yd.dims, axis + 1, yd.ndim) * static_cast<int64_t>(dtype_size(yd.dtype));
    const size_t k = a.node->inputs.size();
    const int64_t row = yd.dims[axis] * inner, total = outer * row;  // bytes
    auto* y = static_cast<unsigned char*>(a.out[0]);
    constexpr int64_t kUnit = 4096;
    const int64_t units = (total + kUnit - 1) / kUnit;
    a.par->for_ranges(units, split_parts(units, yd.numel, kMinElemsPerPart), [&](int64_t u0, int64_t u1, int) {
        const int64_t b0 = u0 * kUnit, b1 = std::min(total, u1 * kUnit);
        for (int64_t o = b0 / row; o < outer && o * row < b1; ++o) {
            int64_t at = o * row;  // output byte of input i's run in row o
            for (size_t i = 0; i < k && at < b1; ++i) {
                const int64_t len = kern::in_desc(a, i).dims[axis] * inner;
                const int64_t from = std::max(at, b0), to = std::min(at + len, b1);
                if (from < to)
                    std::memcpy(y + from, static_cast<const unsigned char*>(a.in[i]) + o * len + (from - at),
                                static_cast<size_t>(to - from));
                at += len;
            }
        }
    });
}

}  // namespace

const OpDef kCopyDef = {"copy", validate_copy, no_scratch, run_copy, nullptr, nullptr};
const OpDef kTransposeDef = {"transpose", validate_transpose, no_scratch, run_transpose, nullptr, nullptr};
const OpDef kConcatDef = {"concat", validate_concat, no_scratch, run_concat, nullptr, nullptr};

}  // namespace accel_emu
