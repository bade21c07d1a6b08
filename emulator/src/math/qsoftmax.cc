// qsoftmax.cc - see qsoftmax.h. One row at a time, summed in its order, each element divided in double, as
// onnxruntime 1.32 does; the table is made with the C library's logf and exp, which are what it calls.
#include "math/qsoftmax.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "math/exact_rounding.h"

namespace accel_emu {
namespace {

template <typename T>
void rows(const float* table, const T* x, T* y, int64_t outer, int64_t n, int64_t inner, const QParams& qy) {
    const float yinv = std::floor(1.0f / qy.scale);
    const int32_t hi = qmax_of(qy.is_signed), lo = qmin_of(qy.is_signed);
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            const T* xr = x + o * n * inner + i;
            T* yr = y + o * n * inner + i;
            int32_t top = xr[0];
            for (int64_t j = 1; j < n; ++j) top = std::max<int32_t>(top, xr[j * inner]);
            float sum = 0.f;
            for (int64_t j = 0; j < n; ++j) sum += table[top - xr[j * inner]];
            for (int64_t j = 0; j < n; ++j) {
                // In double, as onnxruntime's loop computes it: the product is exact, the quotient is at
                // most floor(1 / s_y).
                const double v = std::nearbyint(static_cast<double>(table[top - xr[j * inner]]) * yinv / sum) + qy.zero;
                yr[j * inner] = static_cast<T>(std::max<double>(std::min<double>(v, hi), lo));
            }
        }
}

}  // namespace

void qsoftmax_table(float x_scale, int64_t n, float table[256]) {
    const float fmax_n = FLT_MAX / static_cast<float>(n);
    double b = std::log(fmax_n);  // the float logf, as onnxruntime calls it
    b = std::max(0.0, b - 5.0) / static_cast<double>(x_scale);
    for (int d = 0; d < 256; ++d)
        table[d] = static_cast<float>(std::exp((-static_cast<double>(d) + b) * static_cast<double>(x_scale)));
}

void qsoftmax(const float table[256], const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
              const QParams& qy) {
    if (qy.is_signed) rows(table, static_cast<const int8_t*>(x), static_cast<int8_t*>(y), outer, n, inner, qy);
    else rows(table, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), outer, n, inner, qy);
}

}  // namespace accel_emu
