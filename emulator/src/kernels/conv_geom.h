// conv_geom.h - the geometry of a validated conv node, shared by the GEMM path (conv.cc) and the
// depthwise kernels (depthwise.cc, conv_dw_blocked.cc).
#pragma once

#include <cstdint>

#include "graph.h"

namespace accel_emu {

struct ConvGeom {
    int64_t N, C, H, W, M, G, Cg, Mg, kh, kw, sh, sw, pt, pl, dh, dw, OH, OW;
    int64_t P;     // OH * OW, output positions per image
    int64_t K;     // Cg * kh * kw, the GEMM depth
    bool depthwise, pointwise;
    int64_t tile;  // im2col columns per GEMM (0 when no im2col)
};

// One image-channel plane of a depthwise conv (one input channel per output channel):
// y[OH*OW] = conv(x[H*W], w[kh*kw]) + bias, before the activation.
void depthwise_plane(const ConvGeom& q, const float* x, const float* w, float bias, float* y);

// Small planes, 16 channels at a time (AVX-512): does geometry q (depthwise) take this path?
bool depthwise_blocked_applies(const ConvGeom& q);
int64_t depthwise_blocked_scratch_floats(const ConvGeom& q);
// One image: y[C][OH*OW] = act(conv(x[C][H*W], w[C][kh*kw]) + bias); bias nullable.
void depthwise_blocked(const ConvGeom& q, const float* x, const float* w, const float* bias, Act act, float alpha,
                       float beta, float* y, float* scratch);

}  // namespace accel_emu
