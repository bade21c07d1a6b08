// softmax.h - max-subtracted softmax over contiguous rows, or along the middle axis of [outer, n, inner].
#pragma once

#include <cstdint>

namespace accel_emu {

// Each of `rows` contiguous rows of length n: y = exp(x - max) / sum.
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n);

// Softmax along the middle axis of [outer, n, inner], inner > 1.
void softmax_strided(const float* x, float* y, int64_t outer, int64_t n, int64_t inner);

}  // namespace accel_emu
