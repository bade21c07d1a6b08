// groupnorm.h - group normalization of a dense [N, C, inner] tensor (GroupNormalization,
// InstanceNormalization).
#pragma once

#include <cstdint>

namespace accel_emu {

// For each n < batch and each of `groups` groups of channels/groups consecutive channels, the group's
// elements (channels/groups rows of `inner`) are normalized by their mean and biased variance, then channel
// c is scaled by s[c] and shifted by b[c]: y = (x - mean) * (1 / sqrt(var + eps) * s[c]) + b[c].
// Only the groups [r0, r1) of the batch * groups (each group's values do not depend on the range).
void groupnorm(const float* x, const float* s, const float* b, float* y, int64_t batch, int64_t channels,
               int64_t groups, int64_t inner, float eps, int64_t r0, int64_t r1);

}  // namespace accel_emu
