// conv_gemm.cc - the packed conv GEMM (conv_gemm.h) with AVX-512 intrinsics, compiled for AVX-512 by
// target attributes and used only when the CPU has it (the caller checks conv_gemm_available()).
//
// Loop order: for each kConvNR-column panel of B (gathered once per depth block, or read in place), every
// weight panel runs against it: the B panel (at most kDepthBlock x kConvNR floats, 48 KB) stays in L1/L2
// while the packed weights stream through. Depth beyond kDepthBlock is split so that a panel fits, the
// partial sums accumulating in the output.
#include "conv_gemm.h"

#include <algorithm>

#include "kernel_util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ACCEL_CONV_GEMM 1
#endif

namespace accel_emu {

namespace {
constexpr int64_t MR = kConvMR, NR = kConvNR;
constexpr int64_t kDepthBlock = 256;
// Outputs up to this many floats get the activation in one pass at the end (they are still in L2);
// larger ones per column block.
constexpr int64_t kWholeActFloats = 64 * 1024;
// The B block (one depth block by one column block) stays in L2 while every weight panel runs over it.
constexpr int64_t kBlockFloats = 128 * 1024;

// K split into equal blocks of at most kDepthBlock.
int64_t depth_block(int64_t K) {
    const int64_t n = (K + kDepthBlock - 1) / kDepthBlock;
    return (K + n - 1) / n;
}

// Columns per block: whole panels, within kBlockFloats for one depth block.
int64_t column_block(const ConvGeom& q) {
    const int64_t fit = std::max<int64_t>(1, kBlockFloats / depth_block(q.K) / NR) * NR;
    return std::min(fit, (q.P + NR - 1) / NR * NR);
}
}  // namespace

int64_t conv_packed_weight_floats(int64_t G, int64_t Mg, int64_t K) {
    return G * ((Mg + MR - 1) / MR) * MR * (K + 1);
}

void conv_pack_weights(const float* w, const float* bias, int64_t G, int64_t Mg, int64_t K, float* out) {
    const int64_t panels = (Mg + MR - 1) / MR;
    for (int64_t g = 0; g < G; ++g) {
        for (int64_t row = 0; row < panels * MR; ++row) *out++ = bias && row < Mg ? bias[g * Mg + row] : 0.f;
        for (int64_t ir = 0; ir < panels; ++ir)
            for (int64_t k = 0; k < K; ++k)
                for (int64_t i = 0; i < MR; ++i) {
                    const int64_t row = ir * MR + i;
                    *out++ = row < Mg ? w[(g * Mg + row) * K + k] : 0.f;
                }
    }
}

int64_t conv_gemm_scratch_floats(const ConvGeom& q) { return q.pointwise ? 0 : depth_block(q.K) * column_block(q); }

#if defined(ACCEL_CONV_GEMM)

bool conv_gemm_available() {
    static const bool ok = __builtin_cpu_supports("avx512f");
    return ok;
}

namespace {

#define ACCEL_AVX512 __attribute__((target("avx512f")))

// C[MR rows][NV*16 columns, the last vector's lanes by `tail`] (+)= A[kc][MR] * B[kc][ldb], starting from
// C if `accumulate`, else from bias[MR]. Every loop has constant bounds so that the accumulators stay in
// registers (a row count known only at run time makes gcc keep them in memory).
template <int NV>
ACCEL_AVX512 void micro(int64_t kc, const float* __restrict__ A, const float* __restrict__ B, int64_t ldb,
                        float* __restrict__ C, int64_t ldc, __mmask16 tail, const float* bias, bool accumulate) {
    __m512 acc[MR][NV];
    if (accumulate) {
        for (int i = 0; i < MR; ++i)
            for (int v = 0; v < NV; ++v)
                acc[i][v] = v == NV - 1 ? _mm512_maskz_loadu_ps(tail, C + i * ldc + 16 * v)
                                        : _mm512_loadu_ps(C + i * ldc + 16 * v);
    } else {
        for (int i = 0; i < MR; ++i)
            for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_set1_ps(bias[i]);
    }
    for (int64_t k = 0; k < kc; ++k) {
        const float* b = B + k * ldb;
        __m512 bv[NV];
        for (int v = 0; v < NV; ++v)
            bv[v] = v == NV - 1 ? _mm512_maskz_loadu_ps(tail, b + 16 * v) : _mm512_loadu_ps(b + 16 * v);
        for (int i = 0; i < MR; ++i) {
            const __m512 a = _mm512_set1_ps(A[k * MR + i]);
            for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(a, bv[v], acc[i][v]);
        }
    }
    for (int i = 0; i < MR; ++i) {
        for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(C + i * ldc + 16 * v, acc[i][v]);
        _mm512_mask_storeu_ps(C + i * ldc + 16 * (NV - 1), tail, acc[i][NV - 1]);
    }
}

// One output row's run of a B panel: output positions [ow0, ow0 + n) of row oh, at column `off` of the panel.
struct Segment {
    int64_t oh, ow0, n, off;
};

// Rows [k0, k0 + kc) of im2col(x), columns [p0, p0 + np), into dst[kc][NR] (columns past np unset: the
// kernel's loads mask them). Row k is (channel, kernel row, kernel column); column p is (oh, ow).
ACCEL_AVX512 void pack_panel(const ConvGeom& q, const kern::TapRanges& tr, const float* x, int64_t k0, int64_t kc,
                             int64_t p0, int64_t np, float* __restrict__ dst) {
    Segment seg[NR];
    int64_t ns = 0;
    for (int64_t p = p0; p < p0 + np;) {
        const int64_t oh = p / q.OW, ow0 = p - oh * q.OW;
        const int64_t n = std::min(q.OW - ow0, p0 + np - p);
        seg[ns++] = {oh, ow0, n, p - p0};
        p += n;
    }
    const int64_t khw = q.kh * q.kw;
    int64_t c = k0 / khw, ki = (k0 % khw) / q.kw, kj = k0 % q.kw;
    for (int64_t k = 0; k < kc; ++k) {
        float* d = dst + k * NR;
        const float* xc = x + c * q.H * q.W;
        int64_t lo, hi;
        tr.get(kj, &lo, &hi);
        const int64_t off = kj * q.dw - q.pl;
        for (int64_t s = 0; s < ns; ++s) {
            const Segment& sg = seg[s];
            float* ds = d + sg.off - sg.ow0;  // indexed by ow
            const int64_t end = sg.ow0 + sg.n;
            const int64_t ih = sg.oh * q.sh - q.pt + ki * q.dh;
            if (ih < 0 || ih >= q.H) {
                for (int64_t j = sg.ow0; j < end; ++j) ds[j] = 0.f;
                continue;
            }
            const int64_t a = std::clamp(lo, sg.ow0, end), b = std::clamp(hi, a, end);
            for (int64_t j = sg.ow0; j < a; ++j) ds[j] = 0.f;
            const float* src = xc + ih * q.W + off;
            if (q.sw == 1)
                for (int64_t j = a; j < b; ++j) ds[j] = src[j];
            else
                for (int64_t j = a; j < b; ++j) ds[j] = src[j * q.sw];
            for (int64_t j = b; j < end; ++j) ds[j] = 0.f;
        }
        if (++kj == q.kw) {
            kj = 0;
            if (++ki == q.kh) ki = 0, ++c;
        }
    }
}

}  // namespace

ACCEL_AVX512 void conv_gemm(const ConvGeom& q, const float* group, const float* x, Act act, float alpha, float beta,
                            float* y, float* scratch) {
    const int64_t Mg = q.Mg, K = q.K, P = q.P;
    const int64_t panels = (Mg + MR - 1) / MR;
    const float* bias_pad = group;
    const float* packed = group + panels * MR;
    const int64_t kb = depth_block(K);
    const int64_t nc_max = column_block(q);
    alignas(64) float stage[MR * NR];
    kern::TapRanges tr;
    tr.init(q.kw, q.dw, q.pl, q.sw, q.W, q.OW);
    const bool act_whole = Mg * P <= kWholeActFloats;
    for (int64_t c0 = 0; c0 < P; c0 += nc_max) {
        const int64_t nc = std::min(nc_max, P - c0);
        for (int64_t pc = 0; pc < K; pc += kb) {
            const int64_t kc = std::min(kb, K - pc);
            if (!q.pointwise)
                for (int64_t j = 0; j * NR < nc; ++j)
                    pack_panel(q, tr, x, pc, kc, c0 + j * NR, std::min(NR, nc - j * NR), scratch + j * kc * NR);
            for (int64_t ir = 0; ir < panels; ++ir) {
                const float* A = packed + (ir * K + pc) * MR;
                const float* b = bias_pad + ir * MR;
                const int64_t m = std::min(MR, Mg - ir * MR);
                for (int64_t j = 0; j * NR < nc; ++j) {
                    const int64_t p0 = c0 + j * NR, np = std::min(NR, nc - j * NR);
                    const int nv = static_cast<int>((np + 15) / 16);
                    const int64_t last = np - 16 * (nv - 1);
                    const __mmask16 tail = static_cast<__mmask16>(last == 16 ? 0xFFFF : (1u << last) - 1);
                    const float* B = q.pointwise ? x + pc * P + p0 : scratch + j * kc * NR;
                    const int64_t ldb = q.pointwise ? P : NR;
                    // A partial last panel works on a staging tile, copied in and out around it.
                    float* C = m == MR ? y + ir * MR * P + p0 : stage;
                    const int64_t ldc = m == MR ? P : NR;
                    if (m < MR && pc > 0)
                        for (int64_t i = 0; i < m; ++i) std::copy_n(y + (ir * MR + i) * P + p0, np, stage + i * NR);
                    if (nv == 3) micro<3>(kc, A, B, ldb, C, ldc, tail, b, pc > 0);
                    else if (nv == 2) micro<2>(kc, A, B, ldb, C, ldc, tail, b, pc > 0);
                    else micro<1>(kc, A, B, ldb, C, ldc, tail, b, pc > 0);
                    if (m < MR)
                        for (int64_t i = 0; i < m; ++i) std::copy_n(stage + i * NR, np, y + (ir * MR + i) * P + p0);
                }
            }
        }
        if (act != Act::None && !act_whole)
            for (int64_t r = 0; r < Mg; ++r) apply_activation(act, alpha, beta, y + r * P + c0, static_cast<size_t>(nc));
    }
    if (act != Act::None && act_whole) apply_activation(act, alpha, beta, y, static_cast<size_t>(Mg * P));
}

#else  // no AVX-512 build: conv.cc keeps to im2col + sgemm

bool conv_gemm_available() { return false; }

void conv_gemm(const ConvGeom&, const float*, const float*, Act, float, float, float*, float*) {}

#endif

}  // namespace accel_emu
