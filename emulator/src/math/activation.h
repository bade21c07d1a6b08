// activation.h - the fused activations of FORMAT.md (the node's act field with act_alpha, act_beta),
// applied to float buffers: in place after an op, from one buffer to another, or with a per-row bias.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph.h"

namespace accel_emu {

// Applies a fused activation in place to n floats.
void apply_activation(Act act, float alpha, float beta, float* data, size_t n);

// Is `act` a known activation code?
bool valid_activation(uint32_t act);

// y[i] = act(x[i]) for i < n (x may equal y); `act` is a known code.
void activation_map(Act act, float alpha, float beta, const float* x, float* y, size_t n);

namespace kern {

// y[r*ld + c] = act(y[r*ld + c] + bias[r]) for r < rows, c < cols (bias may be null).
void bias_act_rows(float* y, int64_t rows, int64_t cols, int64_t ld, const float* bias, Act act, float alpha,
                   float beta);

}  // namespace kern
}  // namespace accel_emu
