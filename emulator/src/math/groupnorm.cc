// groupnorm.cc - see groupnorm.h. Each group normalized by its statistics (norm_stats.h), as layernorm.cc
// does for its rows.
#include "math/groupnorm.h"

#include "math/math_util.h"
#include "math/norm_stats.h"

namespace accel_emu {
namespace {

ACCEL_HOT void normalize_groups(const float* ACCEL_RESTRICT x, const float* ACCEL_RESTRICT s,
                                const float* ACCEL_RESTRICT b, float* ACCEL_RESTRICT y, int64_t batch, int64_t channels,
                                int64_t groups, int64_t inner, float eps, int64_t r0, int64_t r1) {
    (void)batch;
    const int64_t per_group = channels / groups, n = per_group * inner;
    x += r0 * n;
    y += r0 * n;
    for (int64_t r = r0; r < r1; ++r, x += n, y += n) {
        float mean, rstd;
        kern::mean_rstd(x, n, eps, &mean, &rstd);
        const int64_t c0 = (r % groups) * per_group;
        for (int64_t c = 0; c < per_group; ++c) {
            const float scale = rstd * s[c0 + c], shift = b[c0 + c];
            const float* xc = x + c * inner;
            float* yc = y + c * inner;
            for (int64_t i = 0; i < inner; ++i) yc[i] = (xc[i] - mean) * scale + shift;
        }
    }
}

}  // namespace

// A plain function in front of the clones: an ifunc symbol would otherwise be exported from the driver.
void groupnorm(const float* x, const float* s, const float* b, float* y, int64_t batch, int64_t channels,
               int64_t groups, int64_t inner, float eps, int64_t r0, int64_t r1) {
    normalize_groups(x, s, b, y, batch, channels, groups, inner, eps, r0, r1);
}

}  // namespace accel_emu
