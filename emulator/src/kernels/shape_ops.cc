// shape_ops.cc - ops that only move data: copy (FORMAT.md op 12), transpose (13), concat (14).
#include <cstring>

#include "kernel_util.h"
#include "op_defs.h"

namespace accel_emu {
namespace {

size_t no_scratch(const Graph&, const Node&) { return 0; }

// ---- copy: Reshape, Flatten, Identity; any dtype, bytes unchanged.

bool validate_copy(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "copy";
    if (!kern::check_common(g, n, op, {1, 1, 1, 1}, kern::DTypeRule::Any, kern::ActRule::MustBeNone, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.dtype != y.dtype)
        return kern::fail(err, op, cat("input dtype ", x.dtype, " differs from output dtype ", y.dtype));
    if (x.numel != y.numel)
        return kern::fail(err, op, cat("element counts differ: ", kern::dims_str(x), " vs ", kern::dims_str(y)));
    return true;
}

void run_copy(const KernelArgs& a) {
    if (a.in[0] != a.out[0]) std::memmove(a.out[0], a.in[0], kern::out_desc(a, 0).bytes);
}

// ---- transpose

bool validate_transpose(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "transpose";
    if (!kern::check_common(g, n, op, {1, 1, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::MustBeNone, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (y.ndim != x.ndim) return kern::fail(err, op, cat("output rank ", y.ndim, " differs from input rank ", x.ndim));
    bool seen[kMaxDims] = {false};
    for (int i = 0; i < x.ndim; ++i) {
        const int64_t p = n.ints[i];
        if (p < 0 || p >= x.ndim) return kern::fail(err, op, cat("perm[", i, "] = ", p, " outside 0..", x.ndim - 1));
        if (seen[p]) return kern::fail(err, op, cat("perm repeats axis ", p));
        seen[p] = true;
        if (y.dims[i] != x.dims[p])
            return kern::fail(err, op, cat("output dim ", i, " is ", y.dims[i], ", input dim ", p, " is ", x.dims[p]));
    }
    return true;
}

// out[i*ldo + j] = in[i + j*ldi] for i < rows, j < cols, in cache-sized square blocks.
ACCEL_HOT void transpose2d(const float* ACCEL_RESTRICT in, int64_t ldi, float* ACCEL_RESTRICT out, int64_t ldo,
                           int64_t rows, int64_t cols) {
    constexpr int64_t T = 16;
    for (int64_t i0 = 0; i0 < rows; i0 += T) {
        const int64_t i1 = i0 + T < rows ? i0 + T : rows;
        for (int64_t j0 = 0; j0 < cols; j0 += T) {
            const int64_t j1 = j0 + T < cols ? j0 + T : cols;
            for (int64_t i = i0; i < i1; ++i)
                for (int64_t j = j0; j < j1; ++j) out[i * ldo + j] = in[i + j * ldi];
        }
    }
}

void run_transpose(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    const float* X = kern::in_f(a, 0);
    float* Y = kern::out_f(a, 0);
    const int r = xd.ndim;
    int64_t xs[kMaxDims], stride = 1;
    for (int i = r - 1; i >= 0; --i) xs[i] = stride, stride *= xd.dims[i];
    // Output axes with their input strides; size-1 axes dropped, axes adjacent in both merged.
    int64_t od[kMaxDims], is[kMaxDims];
    int nd = 0;
    for (int i = 0; i < r; ++i) {
        const int64_t d = yd.dims[i], s = xs[a.node->ints[i]];
        if (d == 1) continue;
        if (nd > 0 && is[nd - 1] == s * d) {
            od[nd - 1] *= d;
            is[nd - 1] = s;
            continue;
        }
        od[nd] = d, is[nd] = s, ++nd;
    }
    if (nd == 0 || (nd == 1 && is[0] == 1)) {
        std::memcpy(Y, X, sizeof(float) * yd.numel);
        return;
    }
    int64_t os[kMaxDims];
    stride = 1;
    for (int i = nd - 1; i >= 0; --i) os[i] = stride, stride *= od[i];
    const int in_last = nd - 1;
    int b = 0;  // the output axis holding the input's innermost axis
    while (b < in_last && is[b] != 1) ++b;
    // Odometer over every axis but the innermost output axis and b.
    int64_t ext[kMaxDims], si[kMaxDims], so[kMaxDims], idx[kMaxDims] = {0};
    int no = 0;
    for (int i = 0; i < nd; ++i)
        if (i != in_last && i != b) ext[no] = od[i], si[no] = is[i], so[no] = os[i], ++no;
    const int64_t blocks = yd.numel / (od[in_last] * (b == in_last ? 1 : od[b]));
    int64_t oi = 0, oo = 0;
    for (int64_t t = 0; t < blocks; ++t) {
        if (b == in_last)
            std::memcpy(Y + oo, X + oi, sizeof(float) * od[in_last]);
        else
            transpose2d(X + oi, is[in_last], Y + oo, os[b], od[b], od[in_last]);
        for (int d = no - 1; d >= 0; --d) {
            oi += si[d];
            oo += so[d];
            if (++idx[d] < ext[d]) break;
            oi -= si[d] * ext[d];
            oo -= so[d] * ext[d];
            idx[d] = 0;
        }
    }
}

// ---- concat

bool validate_concat(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "concat";
    if (!kern::check_common(g, n, op, {1, SIZE_MAX, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::MustBeNone,
                            err))
        return false;
    const TensorDesc& y = kern::output(g, n, 0);
    const int64_t axis = n.ints[0];
    if (axis < 0 || axis >= y.ndim) return kern::fail(err, op, cat("axis ", axis, " outside 0..", y.ndim - 1));
    int64_t sum = 0;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
        const TensorDesc* x = kern::input(g, n, k);
        if (!x) return kern::fail(err, op, cat("input ", k, " is absent"));
        bool ok = x->ndim == y.ndim;
        for (int i = 0; ok && i < y.ndim; ++i) ok = i == axis || x->dims[i] == y.dims[i];
        if (!ok)
            return kern::fail(err, op, cat("input ", k, " shape ", kern::dims_str(*x), " does not match output ",
                                           kern::dims_str(y), " outside axis ", axis));
        if (!kern::add_ok(sum, x->dims[axis], &sum)) return kern::fail(err, op, "axis sizes overflow");
    }
    if (sum != y.dims[axis])
        return kern::fail(err, op, cat("input sizes along axis ", axis, " sum to ", sum, ", output has ",
                                       y.dims[axis]));
    return true;
}

void run_concat(const KernelArgs& a) {
    const TensorDesc& yd = kern::out_desc(a, 0);
    const int axis = static_cast<int>(a.node->ints[0]);
    const int64_t outer = kern::prod(yd.dims, 0, axis);
    const int64_t inner = kern::prod(yd.dims, axis + 1, yd.ndim);
    const size_t k = a.node->inputs.size();
    float* y = kern::out_f(a, 0);
    for (int64_t o = 0; o < outer; ++o)
        for (size_t i = 0; i < k; ++i) {
            const int64_t len = kern::in_desc(a, i).dims[axis] * inner;
            std::memcpy(y, kern::in_f(a, i) + o * len, sizeof(float) * len);
            y += len;
        }
}

}  // namespace

const OpDef kCopyDef = {"copy", validate_copy, no_scratch, run_copy, nullptr, nullptr};
const OpDef kTransposeDef = {"transpose", validate_transpose, no_scratch, run_transpose, nullptr, nullptr};
const OpDef kConcatDef = {"concat", validate_concat, no_scratch, run_concat, nullptr, nullptr};

}  // namespace accel_emu
