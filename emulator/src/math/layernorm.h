// layernorm.h - layer normalization of contiguous rows.
#pragma once

#include <cstdint>

namespace accel_emu {

// Each of `rows` rows of x (length n) normalized by its mean and biased variance, then scaled by s[n]
// and shifted by b[n] (b may be null): y = (x - mean) / sqrt(var + eps) * s + b.
void layernorm_rows(const float* x, const float* s, const float* b, float* y, int64_t rows, int64_t n, float eps);

}  // namespace accel_emu
