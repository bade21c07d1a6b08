// layernorm.cc - see layernorm.h. Two passes over each row, which is in cache: the mean, then the
// variance from the deviations (no cancellation from a sum of squares).
#include "math/layernorm.h"

#include <cmath>

#include "math/fast_math.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

struct Deviation2 {
    float mean;
    ACCEL_INLINE float operator()(float v) const { return (v - mean) * (v - mean); }
};

ACCEL_HOT void normalize_rows(const float* ACCEL_RESTRICT x, const float* ACCEL_RESTRICT s,
                              const float* ACCEL_RESTRICT b, float* ACCEL_RESTRICT y, int64_t rows, int64_t n,
                              float eps) {
    const float inv_n = 1.f / static_cast<float>(n);
    for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
        const float mean = kern::sum_reduce(x, n) * inv_n;
        const float var = kern::sum_map(x, n, Deviation2{mean}) * inv_n;
        const float rstd = 1.f / std::sqrt(var + eps);
        if (b)
            for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * s[i] + b[i];
        else
            for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * s[i];
    }
}

}  // namespace

// A plain function in front of the clones: an ifunc symbol would otherwise be exported from the driver.
void layernorm_rows(const float* x, const float* s, const float* b, float* y, int64_t rows, int64_t n, float eps) {
    normalize_rows(x, s, b, y, rows, n, eps);
}

}  // namespace accel_emu
