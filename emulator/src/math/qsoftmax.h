// qsoftmax.h - the quantized softmax (ops/qsoftmax.cc: FORMAT.md op 37) with onnxruntime's QLinearSoftmax
// arithmetic: a table of exponentials by distance from the row's maximum, a float32 sum, a float32 divide.
#pragma once

#include <cstdint>

#include "math/quantize.h"

namespace accel_emu {

// table[d] = float32(exp((b - d) * s_x)) in double for d = 0..255 (the distance of an element below its
// row's maximum), b = max(0, logf(float32(FLT_MAX / n)) - 5) / s_x, n the elements per softmax.
void qsoftmax_table(float x_scale, int64_t n, float table[256]);

// Softmax over `n` elements `stride` apart, for `outer` x `inner` such rows (row (o, i) starts at
// o * n * stride + i): y = clamp(nearbyint(double(t) * floor(1 / s_y) / sum(t)) + z_y), the sum in float32
// in row order, the rest in double.
void qsoftmax(const float table[256], const void* x, void* y, int64_t outer, int64_t n, int64_t inner,
              const QParams& qy);

}  // namespace accel_emu
