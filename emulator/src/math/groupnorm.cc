// groupnorm.cc - see groupnorm.h. Two passes over each group: the mean, then the variance from the
// deviations (no cancellation from a sum of squares), as layernorm.cc does for its rows.
#include "math/groupnorm.h"

#include <cmath>

#include "math/fast_math.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

struct Deviation2 {
    float mean;
    ACCEL_INLINE float operator()(float v) const { return (v - mean) * (v - mean); }
};

ACCEL_HOT void normalize_groups(const float* ACCEL_RESTRICT x, const float* ACCEL_RESTRICT s,
                                const float* ACCEL_RESTRICT b, float* ACCEL_RESTRICT y, int64_t batch, int64_t channels,
                                int64_t groups, int64_t inner, float eps) {
    const int64_t per_group = channels / groups, n = per_group * inner;
    const float inv_n = 1.f / static_cast<float>(n);
    for (int64_t r = 0; r < batch * groups; ++r, x += n, y += n) {
        const float mean = kern::sum_reduce(x, n) * inv_n;
        const float var = kern::sum_map(x, n, Deviation2{mean}) * inv_n;
        const float rstd = 1.f / std::sqrt(var + eps);
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
               int64_t groups, int64_t inner, float eps) {
    normalize_groups(x, s, b, y, batch, channels, groups, inner, eps);
}

}  // namespace accel_emu
