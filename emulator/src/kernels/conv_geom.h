// conv_geom.h - the geometry of a validated conv node, shared by the GEMM path (conv.cc) and the
// depthwise kernel (depthwise.cc).
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

}  // namespace accel_emu
