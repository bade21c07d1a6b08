// softmax.h - max-subtracted softmax and log softmax over contiguous rows, or along the middle axis of [outer, n,
// inner].
#pragma once

#include <cstdint>

namespace accel_emu {

// Each of `rows` contiguous rows of length n: y = exp(x - max) / sum, or with `log` y = (x - max) - log(sum)
// (sum: of exp(x - max) over the row).
void softmax_rows(const float* x, float* y, int64_t rows, int64_t n, bool log);

// Softmax (or log softmax) along the middle axis of [outer, n, inner], inner > 1.
void softmax_strided(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, bool log);

}  // namespace accel_emu
