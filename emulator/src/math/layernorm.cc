// layernorm.cc - see layernorm.h. Each row, which is in cache, normalized by its statistics (norm_stats.h).
#include "math/layernorm.h"

#include "math/math_util.h"
#include "math/norm_stats.h"

namespace accel_emu {
namespace {

ACCEL_HOT void normalize_rows(const float* ACCEL_RESTRICT x, const float* ACCEL_RESTRICT s,
                              const float* ACCEL_RESTRICT b, float* ACCEL_RESTRICT y, int64_t rows, int64_t n,
                              float eps) {
    for (int64_t r = 0; r < rows; ++r, x += n, y += n) {
        float mean, rstd;
        kern::mean_rstd(x, n, eps, &mean, &rstd);
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
