// softmax.cc - softmax (FORMAT.md op 15), max-subtracted. ints[1] = 0: over one axis (opset >= 13);
// 1: over all dims from the axis on (opset < 13), i.e. rows of the input flattened to 2-D there.
#include "fast_math.h"
#include "kernel_util.h"
#include "op_defs.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "softmax";

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, kOp, {1, 1, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::MustBeNone, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dims(x, y))
        return kern::fail(err, kOp, cat("output shape ", kern::dims_str(y), " differs from input ", kern::dims_str(x)));
    if (n.ints[0] < 0 || n.ints[0] >= x.ndim)
        return kern::fail(err, kOp, cat("axis ", n.ints[0], " outside 0..", x.ndim - 1));
    if (n.ints[1] != 0 && n.ints[1] != 1)
        return kern::fail(err, kOp, cat("mode ", n.ints[1], " is not 0 (one axis) or 1 (axis and after)"));
    return true;
}

size_t scratch_bytes(const Graph&, const Node&) { return 0; }

// Contiguous rows of length n.
ACCEL_HOT void rows_softmax(const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
        const float m = kern::max_reduce(x, n);
        for (int64_t i = 0; i < n; ++i) y[i] = kern::exp_approx(x[i] - m);
        const float inv = 1.f / kern::sum_reduce(y, n);
        for (int64_t i = 0; i < n; ++i) y[i] *= inv;
    }
}

// Softmax along the middle axis of [outer, n, inner] with inner > 1: vectorized across `inner`, in
// chunks whose running max and sum fit on the stack.
ACCEL_HOT void strided_softmax(const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y, int64_t outer, int64_t n,
                               int64_t inner) {
    constexpr int64_t CH = 256;
    float mx[CH], sm[CH];
    for (int64_t o = 0; o < outer; ++o) {
        const float* xo = x + o * n * inner;
        float* yo = y + o * n * inner;
        for (int64_t j0 = 0; j0 < inner; j0 += CH) {
            const int64_t c = inner - j0 < CH ? inner - j0 : CH;
            for (int64_t j = 0; j < c; ++j) mx[j] = xo[j0 + j], sm[j] = 0.f;
            for (int64_t k = 1; k < n; ++k) {
                const float* xr = xo + k * inner + j0;
                for (int64_t j = 0; j < c; ++j) mx[j] = xr[j] > mx[j] ? xr[j] : mx[j];
            }
            for (int64_t k = 0; k < n; ++k) {
                const float* xr = xo + k * inner + j0;
                float* yr = yo + k * inner + j0;
                for (int64_t j = 0; j < c; ++j) {
                    yr[j] = kern::exp_approx(xr[j] - mx[j]);
                    sm[j] += yr[j];
                }
            }
            for (int64_t j = 0; j < c; ++j) sm[j] = 1.f / sm[j];
            for (int64_t k = 0; k < n; ++k) {
                float* yr = yo + k * inner + j0;
                for (int64_t j = 0; j < c; ++j) yr[j] *= sm[j];
            }
        }
    }
}

void run(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const int axis = static_cast<int>(a.node->ints[0]);
    const int64_t outer = kern::prod(xd.dims, 0, axis);
    const int64_t n = xd.dims[axis];
    const int64_t inner = kern::prod(xd.dims, axis + 1, xd.ndim);
    if (a.node->ints[1] == 1 || inner == 1) rows_softmax(kern::in_f(a, 0), kern::out_f(a, 0), outer, n * inner);
    else strided_softmax(kern::in_f(a, 0), kern::out_f(a, 0), outer, n, inner);
}

}  // namespace

const OpDef kSoftmaxDef = {kOp, validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
