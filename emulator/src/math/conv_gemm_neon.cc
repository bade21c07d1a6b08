// conv_gemm_neon.cc - the packed conv GEMM's aarch64 pieces (conv_gemm_kernels.h). The register tile is one
// weight panel's 8 rows by 12 columns: 24 accumulators, 3 vectors of B and the k-th column of the panel's
// weights (8 floats, 2 vectors) of the 32 q registers, each weight taken from its lane by FMLA (by element),
// so a depth step is 5 loads and 24 FMLAs; a kConvNR-column panel is 4 such tiles. The stride phases are
// the plain C++ build_stride_phases (stride_phases.cc) and im2col rows are copied a segment at a time.
// Every sum runs over the depth in order, one fused multiply-add per term, as the x86 tiles' do.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "math/conv_gemm_kernels.h"
#include "math/stride_phases.h"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace accel_emu {

namespace {
constexpr int64_t MR = kConvMR, NR = kConvNR;
constexpr int64_t TN = 12;  // columns of the register tile
static_assert(MR == 8 && NR % TN == 0, "the tile is 8 rows and divides the panel");

// C[8 rows][12 columns] (+)= A[kc][8] * B[kc][12] (row k of B at B + k * ldb, or B + off[k] if kOffsets),
// starting from C if `accumulate`, else from bias[8] (zeros if null). The 24 sums are named variables: gcc
// keeps an array of them in memory, storing every one at every depth step.
#define ACCEL_ROW_SUMS(i)                                                                          \
    float32x4_t c##i##0 = accumulate ? vld1q_f32(C + i * ldc) : vdupq_n_f32(bias ? bias[i] : 0.f); \
    float32x4_t c##i##1 = accumulate ? vld1q_f32(C + i * ldc + 4) : c##i##0;                       \
    float32x4_t c##i##2 = accumulate ? vld1q_f32(C + i * ldc + 8) : c##i##0
#define ACCEL_ROW_FMA(i, a, lane)                    \
    c##i##0 = vfmaq_laneq_f32(c##i##0, b0, a, lane); \
    c##i##1 = vfmaq_laneq_f32(c##i##1, b1, a, lane); \
    c##i##2 = vfmaq_laneq_f32(c##i##2, b2, a, lane)
#define ACCEL_ROW_STORE(i) \
    vst1q_f32(C + i * ldc, c##i##0), vst1q_f32(C + i * ldc + 4, c##i##1), vst1q_f32(C + i * ldc + 8, c##i##2)

template <bool kOffsets>
void micro(int64_t kc, const float* __restrict__ A, const float* __restrict__ B, int64_t ldb,
           const int64_t* __restrict__ off, float* __restrict__ C, int64_t ldc, const float* bias, bool accumulate) {
    ACCEL_ROW_SUMS(0);
    ACCEL_ROW_SUMS(1);
    ACCEL_ROW_SUMS(2);
    ACCEL_ROW_SUMS(3);
    ACCEL_ROW_SUMS(4);
    ACCEL_ROW_SUMS(5);
    ACCEL_ROW_SUMS(6);
    ACCEL_ROW_SUMS(7);
    for (int64_t k = 0; k < kc; ++k) {
        const float* b = kOffsets ? B + off[k] : B + k * ldb;
        const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
        const float32x4_t a0 = vld1q_f32(A + k * MR), a1 = vld1q_f32(A + k * MR + 4);
        ACCEL_ROW_FMA(0, a0, 0);
        ACCEL_ROW_FMA(1, a0, 1);
        ACCEL_ROW_FMA(2, a0, 2);
        ACCEL_ROW_FMA(3, a0, 3);
        ACCEL_ROW_FMA(4, a1, 0);
        ACCEL_ROW_FMA(5, a1, 1);
        ACCEL_ROW_FMA(6, a1, 2);
        ACCEL_ROW_FMA(7, a1, 3);
    }
    ACCEL_ROW_STORE(0);
    ACCEL_ROW_STORE(1);
    ACCEL_ROW_STORE(2);
    ACCEL_ROW_STORE(3);
    ACCEL_ROW_STORE(4);
    ACCEL_ROW_STORE(5);
    ACCEL_ROW_STORE(6);
    ACCEL_ROW_STORE(7);
}
#undef ACCEL_ROW_SUMS
#undef ACCEL_ROW_FMA
#undef ACCEL_ROW_STORE

// ConvGemmKernels::tile: the panel's 12-column tiles. All 8 rows are computed (the driver stages a partial
// weight panel in a whole tile). A last tile of fewer columns works on copies: its B columns, zero-padded
// to the tile so that no read passes the caller's buffer, and its C columns.
void tile(int64_t kc, const float* A, const float* B, int64_t ldb, const int64_t* off, float* C, int64_t ldc,
          int64_t /*m*/, int64_t np, const float* bias, bool accumulate) {
    for (int64_t c0 = 0; c0 < np; c0 += TN) {
        const int64_t n = std::min(TN, np - c0);
        const float* bp = B + c0;
        float* c = C + c0;
        if (n == TN) {
            if (off) micro<true>(kc, A, bp, ldb, off, c, ldc, bias, accumulate);
            else micro<false>(kc, A, bp, ldb, off, c, ldc, bias, accumulate);
            continue;
        }
        float bstage[kConvDepthBlock * TN];
        float cstage[MR * TN] = {};
        for (int64_t k = 0; k < kc; ++k) {
            float* d = bstage + k * TN;
            std::copy_n(off ? bp + off[k] : bp + k * ldb, n, d);
            std::fill(d + n, d + TN, 0.f);
        }
        if (accumulate)
            for (int64_t i = 0; i < MR; ++i) std::copy_n(c + i * ldc, n, cstage + i * TN);
        micro<false>(kc, A, bstage, TN, nullptr, cstage, TN, bias, accumulate);
        for (int64_t i = 0; i < MR; ++i) std::copy_n(cstage + i * TN, n, c + i * ldc);
    }
}

// ConvGemmKernels::pack_panel: each segment's in-bounds run copied (memcpy at stride 1), zeros around it.
void pack_panel(const ConvGeom& q, const kern::TapRanges& tr, const float* x, int64_t k0, int64_t kc, int64_t p0,
                int64_t np, float* dst) {
    ConvSegment seg[kConvNR];
    const int64_t ns = conv_panel_segments(q, p0, np, seg);
    ConvTap t(q, k0);
    for (int64_t k = 0; k < kc; ++k, t.next(q)) {
        const float* xc = x + t.c * q.H * q.W;
        int64_t lo, hi;
        tr.get(t.kj, &lo, &hi);
        for (int64_t s = 0; s < ns; ++s) {
            const ConvSegment& sg = seg[s];
            float* ds = dst + k * NR + sg.off - sg.ow0;  // indexed by ow
            const int64_t end = sg.ow0 + sg.n;
            const int64_t ih = sg.oh * q.sh - q.pt + t.ki * q.dh;
            const bool row_in = ih >= 0 && ih < q.H;
            const float* src = xc + ih * q.W + t.kj * q.dw - q.pl;  // src[ow * sw] is the input under output ow
            if (q.sw != 1) {
                conv_fill_segment(ds, sg.ow0, end, src, q.sw, row_in, lo, hi);
                continue;
            }
            const int64_t a = row_in ? std::clamp(lo, sg.ow0, end) : end, b = row_in ? std::clamp(hi, a, end) : end;
            std::fill(ds + sg.ow0, ds + a, 0.f);
            std::memcpy(ds + a, src + a, static_cast<size_t>(b - a) * sizeof(float));
            std::fill(ds + b, ds + end, 0.f);
        }
    }
}

const ConvGemmKernels kKernels = {tile, build_stride_phases, pack_panel};
}  // namespace

const ConvGemmKernels* conv_gemm_neon_kernels() { return &kKernels; }

}  // namespace accel_emu

#else  // no aarch64 build: ops/conv.cc keeps to im2col + sgemm there unless an x86 path applies

namespace accel_emu {
const ConvGemmKernels* conv_gemm_neon_kernels() { return nullptr; }
}  // namespace accel_emu

#endif
