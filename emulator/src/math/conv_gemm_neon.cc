// conv_gemm_neon.cc - the packed conv GEMM's kernels on aarch64 (conv_gemm_neon.h), under conv_gemm.cc's
// driver. The register tile is one weight panel's 8 rows by 12 columns: 24 accumulators, 3 vectors of B and
// the k-th column of the panel's weights (8 floats, 2 vectors) of the 32 q registers, each weight taken
// from its lane by FMLA (by element), so a depth step is 5 loads and 24 FMLAs. The AVX-512 kernel's 48-column
// panels are kept (the driver's blocking and scratch sizes depend on them) and run as 4 such tiles.
// Every sum runs over the depth in order, one fused multiply-add per term, as the AVX-512 kernel's do.
#include "math/conv_gemm_neon.h"

#include <algorithm>
#include <cstring>

#include "math/conv_gemm.h"

#if defined(__aarch64__)
#include <arm_neon.h>

namespace accel_emu {
namespace conv_neon {

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
}  // namespace

void pack_panel(const ConvGeom& q, const kern::TapRanges& tr, const float* x, int64_t k0, int64_t kc, int64_t p0,
                int64_t np, float* dst) {
    const int64_t khw = q.kh * q.kw;
    int64_t c = k0 / khw, ki = (k0 % khw) / q.kw, kj = k0 % q.kw;
    int64_t lo, hi;
    for (int64_t k = 0; k < kc; ++k) {
        float* d = dst + k * NR;
        const float* xc = x + c * q.H * q.W;
        tr.get(kj, &lo, &hi);
        const int64_t off = kj * q.dw - q.pl;
        // One output row's run of the panel at a time: positions [ow0, end) of row oh, at d + p - p0.
        for (int64_t p = p0; p < p0 + np;) {
            const int64_t oh = p / q.OW, ow0 = p - oh * q.OW, end = std::min(q.OW, ow0 + p0 + np - p);
            float* ds = d + (p - p0) - ow0;  // indexed by ow
            const int64_t ih = oh * q.sh - q.pt + ki * q.dh;
            const bool row_in = ih >= 0 && ih < q.H;
            const int64_t a = row_in ? std::clamp(lo, ow0, end) : end, b = row_in ? std::clamp(hi, a, end) : end;
            const float* src = xc + ih * q.W + off;  // src[ow * sw] is the input under output ow
            std::fill(ds + ow0, ds + a, 0.f);
            if (q.sw == 1) std::memcpy(ds + a, src + a, static_cast<size_t>(b - a) * sizeof(float));
            else
                for (int64_t j = a; j < b; ++j) ds[j] = src[j * q.sw];
            std::fill(ds + b, ds + end, 0.f);
            p += end - ow0;
        }
        if (++kj == q.kw) {
            kj = 0;
            if (++ki == q.kh) ki = 0, ++c;
        }
    }
}

void packed_gemm(const float* A, int64_t Mg, int64_t ir0, int64_t ir1, int64_t K, int64_t pc, int64_t kc,
                 const float* B, int64_t ldb, const int64_t* off, int64_t panel_stride, int64_t nc, const float* bias,
                 bool accumulate, float* C, int64_t ldc) {
    // A tile past the last column or row works on copies: its B columns (zero-padded to the tile, so that
    // no read passes the caller's buffer) and its C rows and columns.
    float bstage[kConvDepthBlock * TN];
    float cstage[MR * TN] = {};
    for (int64_t ir = ir0; ir < ir1; ++ir) {
        const float* a = A + (ir * K + pc) * MR;
        const float* bi = bias ? bias + ir * MR : nullptr;
        const int64_t m = std::min(MR, Mg - ir * MR);
        for (int64_t c0 = 0; c0 < nc; c0 += TN) {
            const int64_t n = std::min(TN, nc - c0);
            // Column c0 is column c0 % NR of panel c0 / NR (a tile never straddles two panels).
            const float* bp = B + c0 / NR * panel_stride + c0 % NR;
            float* c = C + ir * MR * ldc + c0;
            if (n == TN && m == MR) {
                if (off) micro<true>(kc, a, bp, ldb, off, c, ldc, bi, accumulate);
                else micro<false>(kc, a, bp, ldb, off, c, ldc, bi, accumulate);
                continue;
            }
            const float* bt = bp;
            if (n < TN) {
                for (int64_t k = 0; k < kc; ++k) {
                    float* d = bstage + k * TN;
                    std::copy_n(off ? bp + off[k] : bp + k * ldb, n, d);
                    std::fill(d + n, d + TN, 0.f);
                }
                bt = bstage;
            }
            if (accumulate)
                for (int64_t i = 0; i < m; ++i) std::copy_n(c + i * ldc, n, cstage + i * TN);
            if (n < TN || !off) micro<false>(kc, a, bt, n < TN ? TN : ldb, nullptr, cstage, TN, bi, accumulate);
            else micro<true>(kc, a, bt, ldb, off, cstage, TN, bi, accumulate);
            for (int64_t i = 0; i < m; ++i) std::copy_n(cstage + i * TN, n, c + i * ldc);
        }
    }
}

}  // namespace conv_neon
}  // namespace accel_emu

#endif  // __aarch64__
