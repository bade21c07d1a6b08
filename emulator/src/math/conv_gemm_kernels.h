// conv_gemm_kernels.h - the instruction-set-specific pieces of the packed conv GEMM (conv_gemm.cc drives
// them; conv_gemm_avx512.cc and conv_gemm_avx2.cc provide them). The driver's blocking, its B sources and
// its edges are written once; a path brings its register tile, its stride-phase builder and, if it has
// one, a vector im2col row gather.
#pragma once

#include <cstdint>

#include "math/conv_gemm.h"
#include "math/cpu_isa.h"

namespace accel_emu {

struct ConvGemmKernels {
    // C[kConvMR][np] (row stride ldc; np <= kConvNR) = (accumulate ? C : bias, zeros if null) + A * B over
    // depth kc: A is one packed weight panel ([kc][kConvMR]), row k of B at B + k * ldb, or at B + off[k] if
    // off is set (columns past np unread). Rows past m (m <= kConvMR) may be left unwritten.
    void (*tile)(int64_t kc, const float* A, const float* B, int64_t ldb, const int64_t* off, float* C, int64_t ldc,
                 int64_t m, int64_t np, const float* bias, bool accumulate);
    // build_stride_phases (stride_phases.h) for this path.
    void (*phases)(const ConvGeom& q, const float* x, int64_t r0, int64_t rows, int64_t Wq, int64_t plane, float* dst);
    // Optional (null: the driver's scalar loop): ds[j] for j in [j0, end) = src[j * sw] for j in [a, b),
    // else 0; sw is 1 or 2, or a == b (a row of zeros). Elements outside [a, b) are never read.
    void (*im2col_row)(const float* src, int64_t sw, int64_t j0, int64_t end, int64_t a, int64_t b, float* ds);
};

// The kernels of each path, or null in a build without them (not x86-64 gcc or clang). The caller checks
// that the CPU has the instructions (FloatIsa, cpu_isa.h).
const ConvGemmKernels* conv_gemm_avx512_kernels();
const ConvGemmKernels* conv_gemm_avx2_kernels();

}  // namespace accel_emu
