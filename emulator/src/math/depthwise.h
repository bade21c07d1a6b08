// depthwise.h - direct depthwise convolution (one input channel per output channel), one plane at a
// time: portable row kernels (depthwise.cc) and, with AVX-512, a kernel over the stride phases of the
// plane and its flattened rows (depthwise_avx512.cc).
#pragma once

#include <cstdint>

#include "graph.h"
#include "math/conv_geom.h"

namespace accel_emu {

// One image-channel plane of a depthwise conv (one input channel per output channel):
// y[OH*OW] = conv(x[H*W], w[kh*kw]) + bias, before the activation.
void depthwise_plane(const ConvGeom& q, const float* x, const float* w, float bias, float* y);

// Any plane size, strides 1 and 2, no dilation, up to 7x7 (AVX-512; depthwise_avx512.cc): does
// geometry q (depthwise) take this path?
bool depthwise_avx512_applies(FloatIsa isa, const ConvGeom& q);
int64_t depthwise_avx512_scratch_floats(const ConvGeom& q);
// Channels [c0, c1) of one image: y[c][OH*OW] = act(conv(x[c][H*W], w[c][kh*kw]) + bias[c]); bias nullable.
// Channels are independent, so threads may share them out.
void depthwise_avx512(const ConvGeom& q, const float* x, const float* w, const float* bias, Act act, float alpha,
                      float beta, int64_t c0, int64_t c1, float* y, float* scratch);

// Planes of at most 32x32 outputs, 16 channels to a vector (AVX-512; conv_small_depthwise.cc): depthwise_avx512
// hands them over, the same arguments, when depthwise_small_applies(q).
bool depthwise_small_applies(const ConvGeom& q);
int64_t depthwise_small_scratch_floats(const ConvGeom& q);
void depthwise_small(const ConvGeom& q, const float* x, const float* w, const float* bias, Act act, float alpha,
                     float beta, int64_t c0, int64_t c1, float* y, float* scratch);

}  // namespace accel_emu
