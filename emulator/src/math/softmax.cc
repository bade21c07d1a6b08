// softmax.cc - see softmax.h. The exponentials are fast_math.h's, the row max and sum its 16-way
// reductions; along a middle axis the work is vectorized across `inner`.
#include "math/softmax.h"

#include "math/fast_math.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

struct Exp {
    ACCEL_INLINE float operator()(float v) const { return kern::exp_approx(v); }
};

// Contiguous rows of length n.
ACCEL_HOT void rows_softmax(const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
        const float m = kern::max_reduce(x, n);
        for (int64_t i = 0; i < n; ++i) y[i] = kern::exp_approx(x[i] - m);
        const float inv = 1.f / kern::sum_reduce(y, n);
        for (int64_t i = 0; i < n; ++i) y[i] *= inv;
    }
}

// The log is taken of the sum, never of a quotient: x - max is exact near the max, where log(softmax)
// would lose every digit.
ACCEL_HOT void rows_log_softmax(const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y, int64_t rows, int64_t n) {
    for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
        const float m = kern::max_reduce(x, n);
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] - m;
        const float lse = kern::log_approx(kern::sum_map(y, n, Exp{}));
        for (int64_t i = 0; i < n; ++i) y[i] -= lse;
    }
}

// Softmax along the middle axis of [outer, n, inner] with inner > 1: vectorized across `inner`, in
// chunks whose running max and sum fit on the stack.
template <bool kLog>
ACCEL_INLINE void strided_softmax_impl(const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y, int64_t outer, int64_t n,
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
                    if (kLog) {
                        yr[j] = xr[j] - mx[j];
                        sm[j] += kern::exp_approx(yr[j]);
                    } else {
                        yr[j] = kern::exp_approx(xr[j] - mx[j]);
                        sm[j] += yr[j];
                    }
                }
            }
            for (int64_t j = 0; j < c; ++j) sm[j] = kLog ? kern::log_approx(sm[j]) : 1.f / sm[j];
            for (int64_t k = 0; k < n; ++k) {
                float* yr = yo + k * inner + j0;
                for (int64_t j = 0; j < c; ++j) {
                    if (kLog) yr[j] -= sm[j];
                    else yr[j] *= sm[j];
                }
            }
        }
    }
}

ACCEL_HOT void strided_softmax(const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y, int64_t outer, int64_t n,
                               int64_t inner) {
    strided_softmax_impl<false>(x, y, outer, n, inner);
}

ACCEL_HOT void strided_log_softmax(const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y, int64_t outer, int64_t n,
                                   int64_t inner) {
    strided_softmax_impl<true>(x, y, outer, n, inner);
}

}  // namespace

// Plain functions in front of the clones: an ifunc symbol would otherwise be exported from the driver.
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, bool log) {
    if (log) rows_log_softmax(x, y, rows, n);
    else rows_softmax(x, y, rows, n);
}

void softmax_strided(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, bool log) {
    if (log) strided_log_softmax(x, y, outer, n, inner);
    else strided_softmax(x, y, outer, n, inner);
}

}  // namespace accel_emu
