// conv_gemm.h - the conv GEMM for CPUs with AVX-512, AVX2 and FMA, or NEON: Y[M,P] = W[M,K] * B[K,P] + bias, where W is
// the conv's weights packed once at load (panels of kConvMR output channels, [K][kConvMR] each, rows past M zero) and B
// is the im2col matrix of the input, never built whole: read at fixed offsets from the input's stride phases (strides 1
// and 2, no dilation; math/stride_phases.h), read in place (1x1, stride 1, unpadded: B is the input), or else gathered
// a kConvNR-column panel at a time into a small buffer and then used against every weight panel. The fused activation
// is applied to each block of output columns while it is in cache. One packed form and one blocking serve every
// instruction set; only the register tile and the input copies differ (conv_gemm_kernels.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph.h"
#include "math/conv_geom.h"
#include "math/cpu_isa.h"

namespace accel_emu {

constexpr int64_t kConvMR = 8;  // output channels per register tile
// Output positions per B panel: 3 AVX-512 vectors, 2 AVX2 tiles of 24, 4 NEON tiles of 12.
constexpr int64_t kConvNR = 48;
constexpr int64_t kConvDepthBlock = 256;  // GEMM depth per pass, at most

// K split into equal blocks of at most kConvDepthBlock.
int64_t conv_depth_block(int64_t K);

// Floats of packed weights and bias for G groups of Mg output channels of depth K.
int64_t conv_packed_weight_floats(int64_t G, int64_t Mg, int64_t K);

// Packs w ([G*Mg][K], as ONNX lays out conv weights) and bias ([G*Mg], nullable: zeros) into `out`
// (conv_packed_weight_floats floats): per group, the bias padded to whole panels, then the panels.
void conv_pack_weights(const float* w, const float* bias, int64_t G, int64_t Mg, int64_t K, float* out);

// Does float path `isa` run non-depthwise convs on conv_gemm (AVX-512, or AVX2 with FMA, in an x86-64 build;
// NEON in an aarch64 one)?
bool conv_gemm_applies(FloatIsa isa);

// Floats of scratch conv_gemm needs for geometry q (0 when B is read in place).
int64_t conv_gemm_scratch_floats(const ConvGeom& q);

// The output columns are taken in blocks (conv_gemm_column_blocks of them: bands of output rows for a conv
// run over its stride phases) and the output channels in panels of kConvMR (conv_gemm_panels); a part of
// the GEMM is one column block by a run of panels. Each
// output element's sum runs in the same order whatever the parts, so threads may share them out freely.
int64_t conv_gemm_column_blocks(const ConvGeom& q);
inline int64_t conv_gemm_panels(const ConvGeom& q) { return (q.Mg + kConvMR - 1) / kConvMR; }

// One part of one group of one image: rows [kConvMR * panel0, kConvMR * panel1) (within Mg) and column block
// `block` of y[Mg][P] = act(W * im2col(x) + bias). `group` points at the group's packed data
// (conv_packed_weight_floats(1, Mg, K) floats each), x at its first input channel, y at its first output
// channel. scratch has conv_gemm_scratch_floats(q) floats, 64-byte aligned. `isa` is a path conv_gemm_applies
// to; each sums an output in the same order (the bias, then one FMA per depth step, depth blocks in turn),
// so the paths give the same bits (test_float_paths checks it).
void conv_gemm(FloatIsa isa, const ConvGeom& q, const float* group, const float* x, Act act, float alpha, float beta,
               float* y, float* scratch, int64_t block, int64_t panel0, int64_t panel1);

// The GEMM conv_gemm runs, for other ops whose operands it can read as they are packed (a MatMul's constant B:
// math/matmul_packed.h): rows [kConvMR * ir0, min(kConvMR * ir1, Mg)) x columns [0, nc) of C (row stride ldc) =
// (accumulate ? C : bias, zeros if null) + A[:, pc:pc+kc] * B, A packed as conv_pack_weights packs one group
// ([ceil(Mg/kConvMR)][K][kConvMR]), bias per row padded to whole panels; B's kConvNR-column panel j at
// B + j * panel_stride, its rows ldb floats apart (columns past nc unread). Each C element's sum runs over k in
// order from its starting value. isa is one conv_gemm_applies to.
void conv_packed_gemm(FloatIsa isa, const float* A, int64_t Mg, int64_t ir0, int64_t ir1, int64_t K, int64_t pc,
                      int64_t kc, const float* B, int64_t ldb, int64_t panel_stride, int64_t nc, const float* bias,
                      bool accumulate, float* C, int64_t ldc);

}  // namespace accel_emu
