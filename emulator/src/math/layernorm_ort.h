// layernorm_ort.h - layer normalization rounded as onnxruntime's CPU LayerNormalization kernel for float
// (its MLAS AVX2 kernel, what an x86-64 wheel runs): bit for bit, so that a float LayerNormalization between
// quantized layers requantizes to the same int8 values as onnxruntime's.
#pragma once

#include <cstdint>

namespace accel_emu {

// Each of `rows` rows of x (length n) normalized, scaled by s[n] and shifted by b[n] (b may be null). A row of 8
// or more: the mean from a double sum in four lanes, the variance a float sum of the squared deviations in eight
// lanes (each a fused multiply-add), inv_std_dev = 1 / sqrt(var / n + eps), y = fma((x - mean) * inv_std_dev, s,
// b). A shorter one: Welford's mean and variance in float, y = (x - mean) / std_dev * s + b. mean and
// inv_std_dev (one value per row) may be null.
void layernorm_rows_ort(const float* x, const float* s, const float* b, float* y, float* mean, float* inv_std_dev,
                        int64_t rows, int64_t n, float eps);

}  // namespace accel_emu
