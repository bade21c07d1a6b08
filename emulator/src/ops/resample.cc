// resample.cc - a 1-D filter along one axis with constant taps (FORMAT.md op 81): Y[.., o, ..] is the sum
// over k of W[o, k] * X[.., I[o, k], ..]. The compiler lowers Resize's cubic, antialiased and
// tf_crop_and_resize forms to one of these per resized axis, with taps and weights computed as onnxruntime
// computes them; the products and sums are rounded one by one in tap order, as onnxruntime's loops do. A row's
// taps end at the first index -1 (rows of fewer taps are padded so, and a padding tap reads nothing: a
// 0 * inf would make a NaN onnxruntime does not).
#include <cstring>

#include "math/exact_rounding.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "resample";

struct View { int64_t outer, in_len, out_len, inner, taps; };

View view_of(const TensorDesc& x, const TensorDesc& ind, int64_t axis) {
    View v{1, x.dims[axis], ind.dims[0], 1, ind.dims[1]};
    for (int i = 0; i < axis; ++i) v.outer *= x.dims[i];
    for (int i = static_cast<int>(axis) + 1; i < x.ndim; ++i) v.inner *= x.dims[i];
    return v;
}

using kern::no_scratch;

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& ind = *kern::input(g, n, 1);
    const TensorDesc& w = *kern::input(g, n, 2);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.dtype != ACCEL_DTYPE_FLOAT32 || w.dtype != ACCEL_DTYPE_FLOAT32 || y.dtype != ACCEL_DTYPE_FLOAT32)
        return fail(err, kOp, "X, W and Y must be float32");
    if (ind.dtype != ACCEL_DTYPE_INT32) return fail(err, kOp, cat("I is ", dtype_name(ind.dtype), ", not int32"));
    const int64_t axis = ResampleParams::of(n).axis;
    if (x.ndim < 1 || axis < 0 || axis >= x.ndim) return fail(err, kOp, cat("axis ", axis, " outside 0..", x.ndim - 1));
    if (ind.ndim != 2 || !kern::same_dims(ind, w) || ind.dims[1] < 1)
        return fail(err, kOp,
                    cat("I ", kern::dims_str(ind), " and W ", kern::dims_str(w), " are not both [OA, K] with K >= 1"));
    bool ok = y.ndim == x.ndim;
    for (int i = 0; ok && i < x.ndim; ++i) ok = y.dims[i] == (i == axis ? ind.dims[0] : x.dims[i]);
    if (!ok)
        return fail(err, kOp,
                    cat("output ", kern::dims_str(y), " is not input ", kern::dims_str(x), " with axis ", axis,
                        " of I's ", ind.dims[0]));
    if (!kern::constant_known(g, ind) || !kern::constant_known(g, w))
        return fail(err, kOp, "I and W must be constants");
    for (int64_t i = 0; i < ind.numel; ++i) {
        const int64_t v = kern::constant_index(g, ind, i);
        if (v < -1 || v >= x.dims[axis])
            return fail(err, kOp, cat("tap index ", v, " at position ", i, " is outside -1..", x.dims[axis] - 1));
    }
    return true;
}

void run(const KernelArgs& a) {
    const View v = view_of(kern::in_desc(a, 0), kern::in_desc(a, 1), ResampleParams::of(*a.node).axis);
    const float* x = kern::in_f(a, 0);
    const int32_t* ind = static_cast<const int32_t*>(a.in[1]);
    const float* w = kern::in_f(a, 2);
    float* y = kern::out_f(a, 0);
    for (int64_t p = 0; p < v.outer; ++p) {
        const float* xp = x + p * v.in_len * v.inner;
        float* yp = y + p * v.out_len * v.inner;
        for (int64_t o = 0; o < v.out_len; ++o) {
            const int32_t* io = ind + o * v.taps;
            const float* wo = w + o * v.taps;
            float* yo = yp + o * v.inner;
            if (v.inner == 1) {
                float acc = 0.f;
                for (int64_t k = 0; k < v.taps && io[k] >= 0; ++k) acc += wo[k] * xp[io[k]];
                yo[0] = acc;
                continue;
            }
            // Rows along the inner axes: each output element still sums its taps in order.
            for (int64_t s = 0; s < v.inner; ++s) yo[s] = 0.f;
            for (int64_t k = 0; k < v.taps && io[k] >= 0; ++k) {
                const float* xr = xp + static_cast<int64_t>(io[k]) * v.inner;
                const float wk = wo[k];
                for (int64_t s = 0; s < v.inner; ++s) yo[s] += wk * xr[s];
            }
        }
    }
}

}  // namespace

const OpDef kResampleDef = {kOp, validate, no_scratch, run, nullptr, nullptr};

}  // namespace accel_emu
