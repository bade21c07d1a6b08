// depthwise.h - direct depthwise convolution (one input channel per output channel): one plane at a
// time (depthwise.cc), or small planes 16 channels at a time with AVX-512 (conv_dw_blocked.cc).
#pragma once

#include <cstdint>

#include "graph.h"
#include "math/conv_geom.h"

namespace accel_emu {

// One image-channel plane of a depthwise conv (one input channel per output channel):
// y[OH*OW] = conv(x[H*W], w[kh*kw]) + bias, before the activation.
void depthwise_plane(const ConvGeom& q, const float* x, const float* w, float bias, float* y);

// Small planes, 16 channels at a time (AVX-512): does geometry q (depthwise) take this path?
bool depthwise_blocked_applies(FloatIsa isa, const ConvGeom& q);
int64_t depthwise_blocked_scratch_floats(const ConvGeom& q);
// One image's channels [16 * block0, 16 * block1) (within C): y[C][OH*OW] = act(conv(x[C][H*W], w[C][kh*kw]) +
// bias); bias nullable. Blocks are independent, so threads may share them out.
void depthwise_blocked(const ConvGeom& q, const float* x, const float* w, const float* bias, Act act, float alpha,
                       float beta, float* y, float* scratch, int64_t block0, int64_t block1);
constexpr int64_t kDepthwiseBlock = 16;  // channels per block of depthwise_blocked

}  // namespace accel_emu
