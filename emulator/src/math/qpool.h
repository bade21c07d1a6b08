// qpool.h - quantized average pooling (ops/qpool.cc: FORMAT.md ops 35, 36) with onnxruntime's arithmetic:
// QLinearGlobalAveragePool sums the integers and requantizes the sum; QLinearAveragePool averages the
// dequantized values in float32 and quantizes the mean.
#pragma once

#include <cstdint>

#include "math/fixpoint.h"
#include "math/pool.h"
#include "math/quantize.h"

namespace accel_emu {

// y[p] for plane p < planes of n elements each: requantize(sum(x) - zero_x * n) with multiplier
// float32(s_x / float32(s_y * n)). x and y are int8 or uint8 as qx and qy say.
void qglobal_avg_pool(const void* x, void* y, int64_t planes, int64_t n, const QParams& qx, const QParams& qy);

// One plane: y[OH*OW] = saturate(nearbyint(mean / s_y + z_y)) with mean the float32 sum, in window order, of
// float32(s_x * (x - z_x)) over the window's elements inside the input, divided by the count (the whole
// window with include_pad).
void qavg_pool_plane(const PoolGeom& q, bool include_pad, const void* x, void* y, const QParams& qx, const QParams& qy);

// A device's rules (math/fixpoint.h): the sum of the window's elements inside the input (the padding adds 0;
// the divisor is always kh * kw, count_include_pad or not) times c.mult, shifted right by c.shift with the
// devices' rounding (half up), saturated. Global pooling: one window of n elements per plane.
void fixed_avg_pool_plane(const PoolGeom& q, const void* x, void* y, const AvgCoef& c, bool is_signed);
void fixed_global_avg_pool(const void* x, void* y, int64_t planes, int64_t n, const AvgCoef& c, bool is_signed);

}  // namespace accel_emu
