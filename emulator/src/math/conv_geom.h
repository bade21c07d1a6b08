// conv_geom.h - the geometry of a validated conv node (ops/conv.cc fills it), which the conv math takes:
// im2col, the packed conv GEMM and the depthwise kernels.
#pragma once

#include <cstdint>

namespace accel_emu {

struct ConvGeom {
    int64_t N, C, H, W, M, G, Cg, Mg, kh, kw, sh, sw, pt, pl, dh, dw, OH, OW;
    int64_t P;     // OH * OW, output positions per image
    int64_t K;     // Cg * kh * kw, the GEMM depth
    bool depthwise, pointwise;
    int64_t tile;  // im2col columns per GEMM (0 when no im2col)
};

}  // namespace accel_emu
