// conv_gemm_kernels.h - the instruction-set-specific pieces of the packed conv GEMM (conv_gemm.cc drives
// them; conv_gemm_avx512.cc, conv_gemm_avx2.cc and conv_gemm_neon.cc provide them). The driver's blocking, its B
// sources and its edges are written once; a path brings its register tile, its stride-phase builder and its im2col
// panel gather.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math/conv_gemm.h"
#include "math/cpu_isa.h"
#include "math/math_util.h"

namespace accel_emu {

struct ConvGemmKernels {
    // C[kConvMR][np] (row stride ldc; np <= kConvNR) = (accumulate ? C : bias, zeros if null) + A * B over
    // depth kc: A is one packed weight panel ([kc][kConvMR]), row k of B at B + k * ldb, or at B + off[k] if
    // off is set (columns past np unread). Rows past m (m <= kConvMR) may be left unwritten.
    void (*tile)(int64_t kc, const float* A, const float* B, int64_t ldb, const int64_t* off, float* C, int64_t ldc,
                 int64_t m, int64_t np, const float* bias, bool accumulate);
    // build_stride_phases (stride_phases.h) for this path.
    void (*phases)(const ConvGeom& q, const float* x, int64_t r0, int64_t rows, int64_t Wq, int64_t plane, float* dst);
    // Rows [k0, k0 + kc) of im2col(x), columns [p0, p0 + np), into dst[kc][kConvNR] (columns past np unset:
    // the tiles read only np). Row k is (channel, kernel row, kernel column); column p is (oh, ow). Each path
    // walks the rows with the helpers below and copies each segment its own way (one call per panel: a call
    // per segment through the table cost a dilated conv 7% on AVX-512).
    void (*pack_panel)(const ConvGeom& q, const kern::TapRanges& tr, const float* x, int64_t k0, int64_t kc, int64_t p0,
                       int64_t np, float* dst);
};

// One output row's run of a B panel: output positions [ow0, ow0 + n) of row oh, at column `off` of the panel.
struct ConvSegment { int64_t oh, ow0, n, off; };

// The runs of output rows that panel columns [p0, p0 + np) cover, into seg (kConvNR at most); their count.
inline int64_t conv_panel_segments(const ConvGeom& q, int64_t p0, int64_t np, ConvSegment* seg) {
    int64_t ns = 0;
    for (int64_t p = p0; p < p0 + np;) {
        const int64_t oh = p / q.OW, ow0 = p - oh * q.OW;
        const int64_t n = std::min(q.OW - ow0, p0 + np - p);
        seg[ns++] = {oh, ow0, n, p - p0};
        p += n;
    }
    return ns;
}

// Row k of im2col, one after another: its channel c and tap (ki, kj).
struct ConvTap {
    int64_t c, ki, kj;
    ConvTap(const ConvGeom& q, int64_t k) : c(k / (q.kh * q.kw)), ki(k % (q.kh * q.kw) / q.kw), kj(k % q.kw) {}
    void next(const ConvGeom& q) {
        if (++kj == q.kw) {
            kj = 0;
            if (++ki == q.kh) ki = 0, ++c;
        }
    }
};

// One segment of one im2col row, element by element: ds[j] (j in [ow0, end)) = src[j * sw] for j in
// [lo, hi) if the input row is inside, else 0.
inline void conv_fill_segment(float* ds, int64_t ow0, int64_t end, const float* src, int64_t sw, bool row_in,
                              int64_t lo, int64_t hi) {
    const int64_t a = row_in ? std::clamp(lo, ow0, end) : end, b = row_in ? std::clamp(hi, a, end) : end;
    for (int64_t j = ow0; j < a; ++j) ds[j] = 0.f;
    for (int64_t j = a; j < b; ++j) ds[j] = src[j * sw];
    for (int64_t j = b; j < end; ++j) ds[j] = 0.f;
}

// The kernels of each path, or null in a build without them (the x86 ones outside x86-64 gcc or clang, the
// NEON ones outside aarch64). The caller checks that the CPU has the instructions (FloatIsa, cpu_isa.h).
const ConvGemmKernels* conv_gemm_avx512_kernels();
const ConvGemmKernels* conv_gemm_avx2_kernels();
const ConvGemmKernels* conv_gemm_neon_kernels();

}  // namespace accel_emu
