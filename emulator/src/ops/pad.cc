// pad.cc - pad (FORMAT.md op 49): Y is X with elements added before and after each axis, filled with a
// constant, the nearest edge element, the mirror image or the wrapped-around input; any dtype. Negative
// pads (ONNX's cropping) never reach here: the compiler slices first.
#include <cstring>

#include "math/strided_copy.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "pad";

using kern::no_scratch;

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dtype(x, y, kOp, "input 0", err)) return false;
    if (y.ndim != x.ndim) return kern::fail(err, kOp, cat("output rank ", y.ndim, " differs from input rank ", x.ndim));
    const PadParams p = PadParams::of(n);
    const int64_t mode = static_cast<int64_t>(p.mode);
    if (mode < 0 || mode > static_cast<int64_t>(PadMode::Wrap))
        return kern::fail(err, kOp, cat("mode ", mode, " is not constant (0), reflect (1), edge (2) or wrap (3)"));
    for (int i = 0; i < kMaxDims; ++i) {
        const int64_t b = p.begin[i];
        if (i >= x.ndim) {
            if (b != 0)
                return kern::fail(err, kOp, cat("begin of axis ", i, " is ", b, ", not 0: the rank is ", x.ndim));
            continue;
        }
        int64_t end = 0;
        if (b < 0 || !kern::add_ok(x.dims[i], b, &end) || end > y.dims[i])
            return kern::fail(err, kOp,
                              cat("axis ", i, ": ", b, " elements before an input of ", x.dims[i],
                                  " do not fit an output of ", y.dims[i]));
    }
    if (const TensorDesc* v = kern::input(g, n, 1)) {
        if (p.mode != PadMode::Constant)
            return kern::fail(err, kOp, "a constant value (input 1) is given but the mode is not constant");
        if (!kern::same_dtype(*v, y, kOp, "constant value (input 1)", err)) return false;
        if (v->numel != 1)
            return kern::fail(err, kOp, cat("constant value (input 1) has ", v->numel, " elements, not 1"));
    }
    return true;
}

// The input index that output index o of an axis reads (the axis has d input elements, b added before
// it), or -1 for the constant.
inline int64_t source(int64_t o, int64_t b, int64_t d, PadMode mode) {
    int64_t i = o - b;
    if (i >= 0 && i < d) return i;
    switch (mode) {
        case PadMode::Constant: return -1;
        case PadMode::Edge: return i < 0 ? 0 : d - 1;
        case PadMode::Wrap: i %= d; return i < 0 ? i + d : i;
        case PadMode::Reflect: {
            if (d == 1) return 0;
            const int64_t period = 2 * (d - 1);
            i %= period;
            if (i < 0) i += period;
            return i < d ? i : period - i;
        }
    }
    return -1;
}

template <class T>
void pad_rows(const KernelArgs& a, const PadParams& p) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    const T* x = static_cast<const T*>(a.in[0]);
    T* y = static_cast<T*>(a.out[0]);
    T value{};
    if (a.node->inputs.size() > 1 && a.in[1] != nullptr) std::memcpy(&value, a.in[1], sizeof value);
    const int nd = yd.ndim;
    if (nd == 0) {
        *y = *x;
        return;
    }
    int64_t xs[kMaxDims];
    kern::dense_strides(xd.dims, xd.ndim, xs);
    const int last = nd - 1;
    const int64_t ny = yd.dims[last], nx = xd.dims[last], b = p.begin[last];
    const int64_t after = ny - b - nx;  // >= 0 (validate)
    const int64_t rows = yd.numel / ny;
    // Rows in parts (shape only; a copy moves the same bytes whichever worker does it), each starting its
    // odometer at its first row.
    a.par->for_ranges(rows, split_parts(rows, yd.numel, kMinElemsPerPart), [&](int64_t r0, int64_t r1, int) {
        int64_t idx[kMaxDims] = {0};
        for (int64_t i = last - 1, rest = r0; i >= 0; --i) {
            idx[i] = rest % yd.dims[i];
            rest /= yd.dims[i];
        }
        T* yr = y + r0 * ny;
        for (int64_t r = r0; r < r1; ++r, yr += ny) {
            int64_t off = 0;
            bool inside = true;
            for (int i = 0; i < last && inside; ++i) {
                const int64_t j = source(idx[i], p.begin[i], xd.dims[i], p.mode);
                inside = j >= 0;
                off += j * xs[i];
            }
            if (!inside) {
                for (int64_t k = 0; k < ny; ++k) yr[k] = value;
            } else {
                const T* row = x + off;
                if (p.mode == PadMode::Constant) {
                    for (int64_t k = 0; k < b; ++k) yr[k] = value;
                    for (int64_t k = 0; k < after; ++k) yr[b + nx + k] = value;
                } else {
                    for (int64_t k = 0; k < b; ++k) yr[k] = row[source(k, b, nx, p.mode)];
                    for (int64_t k = b + nx; k < ny; ++k) yr[k] = row[source(k, b, nx, p.mode)];
                }
                std::memcpy(yr + b, row, static_cast<size_t>(nx) * sizeof(T));
            }
            for (int i = last - 1; i >= 0; --i) {  // the odometer over the outer output axes
                if (++idx[i] < yd.dims[i]) break;
                idx[i] = 0;
            }
        }
    });
}

void run(const KernelArgs& a) {
    const PadParams p = PadParams::of(*a.node);
    switch (dtype_size(kern::in_desc(a, 0).dtype)) {
        case 1: return pad_rows<uint8_t>(a, p);
        case 2: return pad_rows<uint16_t>(a, p);
        case 4: return pad_rows<uint32_t>(a, p);
        default: return pad_rows<uint64_t>(a, p);
    }
}

}  // namespace

const OpDef kPadDef = {kOp, validate, no_scratch, run, nullptr, nullptr};

}  // namespace accel_emu
