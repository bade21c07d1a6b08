// im2col.h - the im2col matrix of a conv, a tile of columns at a time, for the im2col + sgemm path of
// ops/conv.cc (CPUs without AVX-512, and convs with fewer output positions than a vector).
#pragma once

#include <cstdint>

#include "math/conv_geom.h"

namespace accel_emu {

// Columns [p0, p0 + t) of the im2col matrix of one group, x at the group's first input channel, into
// col[K][t]: row (c, ki, kj), column p = oh*OW + ow; taps outside the input are 0.
void im2col(const ConvGeom& q, const float* x, int64_t p0, int64_t t, float* col);
// The same of 8-bit integers (int8 or uint8 as bytes), taps outside the input reading `pad` (the zero point).
void im2col(const ConvGeom& q, const uint8_t* x, int64_t p0, int64_t t, uint8_t pad, uint8_t* col);

}  // namespace accel_emu
