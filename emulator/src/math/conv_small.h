// conv_small.h - the conv GEMM for small output planes on CPUs with AVX-512: Y[M,P] = W[M,K] * B[K,P] + bias
// vectorized over output channels (16 to a vector) where the conv GEMM of conv_gemm.h vectorizes over output
// positions (48 to a register tile). A 7x7 plane (49 positions) fills one 48-wide tile and wastes most of a
// second; here a register tile is 32 output channels by up to kSmallNR positions, the positions taken in
// blocks of nearly equal size, so no vector lane is wasted on positions. Weights are packed at load in panels
// of 32 channels ([K][32] each; the last panel 16 wide when 16 channels are left); B is the input as it lies
// (1x1 stride-1 unpadded convs) or im2col columns gathered a depth block at a time. Each output element's sum
// runs bias first, then over K in order, one fused multiply-add per term: the same operations as the
// 48-wide kernel, so either path gives the same bits.
#pragma once

#include <cstdint>

#include "graph.h"
#include "math/conv_geom.h"
#include "math/cpu_isa.h"

namespace accel_emu {

constexpr int64_t kSmallMR = 32;  // output channels per register tile (two vectors)
constexpr int64_t kSmallNR = 12;  // output positions per register tile, at most

// Does geometry q (not depthwise) run here rather than on conv_gemm? With AVX-512, when the plane is small
// (at most 16x16 outputs) and its vectors waste fewer lanes than conv_gemm's.
bool conv_small_applies(FloatIsa isa, const ConvGeom& q);

// Floats of packed weights and bias for G groups of Mg output channels of depth K.
int64_t conv_small_packed_floats(int64_t G, int64_t Mg, int64_t K);

// Packs w ([G*Mg][K], as ONNX lays out conv weights) and bias ([G*Mg], nullable: zeros) into `out`
// (conv_small_packed_floats floats): per group, the bias padded to whole vectors, then the panels.
void conv_small_pack_weights(const float* w, const float* bias, int64_t G, int64_t Mg, int64_t K, float* out);

// Panels of output channels of one group, and the most one part may take (its sums stay in scratch).
int64_t conv_small_panels(const ConvGeom& q);
int64_t conv_small_max_run(const ConvGeom& q);

// Blocks of output positions (each at most kSmallNR, as equal as can be).
int64_t conv_small_position_blocks(const ConvGeom& q);

// Floats of scratch one part needs, 64-byte aligned.
int64_t conv_small_scratch_floats(const ConvGeom& q);

// One part of one group of one image: output channel panels [panel0, panel1) (at most conv_small_max_run of
// them) by position blocks [block0, block1) of y[Mg][P] = act(W * im2col(x) + bias). `group` points at the
// group's packed data (conv_small_packed_floats(1, Mg, K) floats), x at its first input channel, y at its
// first output channel. Every output element's operations are the same whatever the parts.
void conv_small(const ConvGeom& q, const float* group, const float* x, Act act, float alpha, float beta, float* y,
                float* scratch, int64_t panel0, int64_t panel1, int64_t block0, int64_t block1);

}  // namespace accel_emu
