// matmul_packed.h - a MatMul against a constant B on the conv GEMM's AVX-512 kernel (conv_gemm.h): Y[M][N] =
// X[M][K] * W[K][N], W packed once at load in panels of kConvNR columns ([ceil(N/kConvNR)][K][kConvNR], the
// columns past N zero), the rows of X packed per call as the kernel reads its A operand, kConvMR rows at a
// time. Against the BLAS this drops the per-call packing of W (the largest operand of a transformer's
// Linear) and reads it in the order it lies.
//
// Each element of Y sums over k in depth blocks of conv_depth_block(K), in order, the same whatever part of
// the output a call computes: threads may share the parts out freely (parallel.h).
#pragma once

#include <cstdint>

#include "math/cpu_isa.h"

namespace accel_emu {

// Floats of W packed (matmul_pack_b).
int64_t matmul_packed_b_floats(int64_t K, int64_t N);
// Packs w ([K][N] row-major) into out (matmul_packed_b_floats floats).
void matmul_pack_b(const float* w, int64_t K, int64_t N, float* out);

// W's columns per block (whole panels): one depth block of them stays in L2.
int64_t matmul_column_block(int64_t K, int64_t N);

// Floats of scratch one matmul_packed call needs.
int64_t matmul_packed_scratch_floats(int64_t M, int64_t K);

// Rows [r0, r1) by columns [c0, c1) of y = x * W (x [M][K], y [M][N], both row-major); c0 is a multiple of
// kConvNR. isa is a path the conv GEMM has (conv_gemm_applies).
void matmul_packed(FloatIsa isa, const float* x, int64_t K, int64_t N, const float* packed_b, float* y, float* scratch,
                   int64_t r0, int64_t r1, int64_t c0, int64_t c1);

}  // namespace accel_emu
