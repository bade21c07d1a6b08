// qtable.h - the 256-entry tables of the 8-bit elementwise ops (qactivation): each input byte dequantized,
// put through the op's float function, quantized, as onnxruntime builds its QLinearSigmoid,
// QLinearLeakyRelu and QLinearConcat tables.
#pragma once

#include <cstdint>

#include "graph.h"
#include "math/quantize.h"

namespace accel_emu {

// table[b] for each byte b of X's dtype: quantize(f(float32(b - z_x) * s_x)) with Y's parameters. f is the
// activation `act` (with alpha, beta) as onnxruntime's float kernels compute it (relu, clip, sigmoid: its
// rational approximation MlasComputeLogistic, tanh: MlasComputeTanh's, leaky relu, hard sigmoid, hard swish; the others
// as the emulator's float kernels); Act::None is the identity (a requantization).
void make_qtable(Act act, float alpha, float beta, const QParams& qx, const QParams& qy, uint8_t table[256]);

// onnxruntime's float32 logistic (MlasComputeLogistic's FMA kernel): an odd rational approximation on
// [-18, 18], evaluated with fused multiply-adds.
float ort_logistic(float x);
// onnxruntime's float32 tanh (MlasComputeTanh's FMA kernel): a rational approximation on [-9, 9].
float ort_tanh(float x);

}  // namespace accel_emu
