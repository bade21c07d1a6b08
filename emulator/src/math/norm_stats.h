// norm_stats.h - the statistics layer and group normalization share: a run's mean and 1 / standard deviation,
// in two passes over it (the mean, then the variance from the deviations: no cancellation from a sum of
// squares). Inline, so that it is compiled for each ISA clone of its caller.
#pragma once

#include <cmath>
#include <cstdint>

#include "math/fast_math.h"
#include "math/math_util.h"

namespace accel_emu {
namespace kern {

struct Deviation2 {
    float mean;
    ACCEL_INLINE float operator()(float v) const { return (v - mean) * (v - mean); }
};

// mean and 1 / sqrt(biased variance + eps) of x[0..n).
ACCEL_INLINE void mean_rstd(const float* x, int64_t n, float eps, float* mean, float* rstd) {
    const float inv_n = 1.f / static_cast<float>(n);
    const float m = sum_reduce(x, n) * inv_n;
    const float var = sum_map(x, n, Deviation2{m}) * inv_n;
    *mean = m;
    *rstd = 1.f / std::sqrt(var + eps);
}

}  // namespace kern
}  // namespace accel_emu
