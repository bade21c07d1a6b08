// conv_gemm_neon.h - the aarch64 kernels of the packed conv GEMM (conv_gemm_neon.cc): what conv_gemm.cc's
// driver (stride-phase bands, B in place, gathered panels) calls where the x86-64 build calls its
// AVX-512 ones, with the same contracts.
#pragma once

#include <cstdint>

#include "math/conv_geom.h"
#include "math/math_util.h"

namespace accel_emu {
namespace conv_neon {

// Rows [k0, k0 + kc) of im2col(x), columns [p0, p0 + np), into dst[kc][kConvNR] (columns past np unset).
void pack_panel(const ConvGeom& q, const kern::TapRanges& tr, const float* x, int64_t k0, int64_t kc, int64_t p0,
                int64_t np, float* dst);

// Rows [kConvMR * ir0, min(kConvMR * ir1, Mg)) x columns [0, nc) of C (row stride ldc) = (accumulate ? C :
// bias, zeros if null) + A[:, pc:pc+kc] * B, A the packed weights, B's kConvNR-column panel j at
// B + j * panel_stride, its rows ldb floats apart or, with `off`, row k at off[k] from the panel's start.
// Columns past nc are neither read nor written.
void packed_gemm(const float* A, int64_t Mg, int64_t ir0, int64_t ir1, int64_t K, int64_t pc, int64_t kc,
                 const float* B, int64_t ldb, const int64_t* off, int64_t panel_stride, int64_t nc, const float* bias,
                 bool accumulate, float* C, int64_t ldc);

}  // namespace conv_neon
}  // namespace accel_emu
