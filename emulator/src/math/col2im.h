// col2im.h - the math of a 2-D transposed convolution (ops/convtranspose.cc): the col2im that adds
// (or, when every output gets exactly one contribution, stores) a GEMM's per-pixel patches into the
// output planes, and the direct scatter used when each group has one input channel.
#pragma once

#include <cstdint>

namespace accel_emu {

// The geometry of a validated convtranspose node, per image and group (ops/convtranspose.cc fills it).
struct ConvTransposeGeom {
    int64_t N, C, H, W, M, G, Cg, Mg, kh, kw, sh, sw, pt, pl, dh, dw, OH, OW;
    int64_t HW, OP;  // input and output pixels per plane
    int64_t R;       // Mg * kh * kw: rows of col, the GEMM's M
    bool pointwise;  // 1x1, stride 1, no pads: Y_g = W_g^T x_g
    bool direct;     // Cg == 1: taps scattered without a GEMM
    bool cover;      // every output pixel gets exactly one tap
    int64_t tile;    // input pixels per GEMM, whole input rows (0 when no col buffer)
};

// Output planes y[Mg][OP] of one group set to their bias b[Mg] (or 0 if b is null) before taps are added.
void convtranspose_fill_bias(const ConvTransposeGeom& q, const float* b, float* y);

// Adds the col tile of input rows [ih0, ih0 + rows) ([Mg*kh*kw][rows*W]) into the output planes of one
// group: col row (m, ki, kj) holds, per input pixel (ih, iw), its contribution to output
// (ih*sh - pt + ki*dh, iw*sw - pl + kj*dw) of channel m.
void col2im_add(const ConvTransposeGeom& q, const float* col, int64_t ih0, int64_t rows, float* y);

// col2im when every output gets exactly one contribution (q.cover): stores, bias included, so the output
// needs no fill beforehand.
void col2im_cover(const ConvTransposeGeom& q, const float* col, int64_t ih0, int64_t rows, const float* bias, float* y);

// One input channel per group (q.direct): y[m] += w[m, ki, kj] * x shifted to each tap, without a GEMM.
void convtranspose_direct(const ConvTransposeGeom& q, const float* x, const float* w, float* y);

}  // namespace accel_emu
