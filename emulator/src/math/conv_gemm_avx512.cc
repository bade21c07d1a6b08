// conv_gemm_avx512.cc - the packed conv GEMM's AVX-512 pieces (conv_gemm_kernels.h): a register tile of
// kConvMR rows by 3 vectors (the whole kConvNR-column panel), and an im2col panel gather of 16 outputs
// per masked load. Compiled for AVX-512 by target attributes, used only when the CPU has it.
#include "math/conv_gemm_kernels.h"
#include "math/stride_phases.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/avx512_lanes.h"
#include "math/x86_intrinsics.h"

namespace accel_emu {

namespace {
constexpr int64_t MR = kConvMR, NR = kConvNR;

#define ACCEL_AVX512 __attribute__((target("avx512f")))
#define ACCEL_UNROLL _Pragma("GCC unroll 16")

// C[MR rows][NV*16 columns, the last vector's lanes by `tail` if kMasked] (+)= A[kc][MR] * B[kc][ldb] (row k of B
// at B + off[k] instead if kOffsets: the taps of a conv over its stride phases, stride_phases.h), starting
// from C if `accumulate`, else from bias[MR] (zeros if null). Every loop has constant bounds and is unrolled
// before registers are allocated, so that the accumulators stay in registers: a row count known only at run
// time, or a loop left rolled, makes gcc 12 keep them in memory and store each every depth step (the
// one-vector tile ran at half speed so). Full panels load unmasked: a masked load in the loop costs a mask
// move on an FMA port every iteration, which more than halves the speed.
template <int NV, bool kMasked, bool kOffsets>
ACCEL_AVX512 void micro(int64_t kc, const float* __restrict__ A, const float* __restrict__ B, int64_t ldb,
                        const int64_t* __restrict__ off, float* __restrict__ C, int64_t ldc, __mmask16 tail,
                        const float* bias, bool accumulate) {
    __m512 acc[MR][NV];
    if (accumulate) {
        ACCEL_UNROLL for (int i = 0; i < MR; ++i) ACCEL_UNROLL for (int v = 0; v < NV; ++v) acc[i][v] =
            kMasked && v == NV - 1 ? _mm512_maskz_loadu_ps(tail, C + i * ldc + 16 * v)
                                   : _mm512_loadu_ps(C + i * ldc + 16 * v);
    } else {
        ACCEL_UNROLL for (int i = 0; i < MR; ++i) ACCEL_UNROLL for (int v = 0; v < NV; ++v) acc[i][v] =
            bias ? _mm512_set1_ps(bias[i]) : _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < kc; ++k) {
        const float* b = kOffsets ? B + off[k] : B + k * ldb;
        __m512 bv[NV];
        ACCEL_UNROLL for (int v = 0; v < NV; ++v) bv[v] =
            kMasked && v == NV - 1 ? _mm512_maskz_loadu_ps(tail, b + 16 * v) : _mm512_loadu_ps(b + 16 * v);
        ACCEL_UNROLL for (int i = 0; i < MR; ++i) {
            const __m512 a = _mm512_set1_ps(A[k * MR + i]);
            ACCEL_UNROLL for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(a, bv[v], acc[i][v]);
        }
    }
    ACCEL_UNROLL for (int i = 0; i < MR; ++i) {
        ACCEL_UNROLL for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(C + i * ldc + 16 * v, acc[i][v]);
        if (kMasked) _mm512_mask_storeu_ps(C + i * ldc + 16 * (NV - 1), tail, acc[i][NV - 1]);
        else _mm512_storeu_ps(C + i * ldc + 16 * (NV - 1), acc[i][NV - 1]);
    }
}

// ConvGemmKernels::tile: every row of the panel at once (the m < MR rows are computed and dropped).
ACCEL_AVX512 void tile(int64_t kc, const float* A, const float* B, int64_t ldb, const int64_t* off, float* C,
                       int64_t ldc, int64_t, int64_t np, const float* bias, bool accumulate) {
    const int nv = static_cast<int>((np + 15) / 16);
    const __mmask16 tail = lanes16::first(np - 16 * (nv - 1));
    if (off) {
        if (np == NR) micro<3, false, true>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
        else if (nv == 3) micro<3, true, true>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
        else if (nv == 2) micro<2, true, true>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
        else micro<1, true, true>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
    } else {
        if (np == NR) micro<3, false, false>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
        else if (nv == 3) micro<3, true, false>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
        else if (nv == 2) micro<2, true, false>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
        else micro<1, true, false>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
    }
}

// Lanes e of a 16-lane vector with base + e in [lo, hi).
inline __mmask16 lanes(int64_t base, int64_t lo, int64_t hi) { return lanes16::inside(base - lo, hi - lo); }

// ConvGemmKernels::pack_panel, 16 outputs at a time where the stride is 1 or 2 or the input row is
// outside: masked loads read only the inputs in [lo, hi) (zeros elsewhere); at stride 2 the even inputs
// of two loads.
ACCEL_AVX512 void pack_panel(const ConvGeom& q, const kern::TapRanges& tr, const float* x, int64_t k0, int64_t kc,
                             int64_t p0, int64_t np, float* __restrict__ dst) {
    ConvSegment seg[NR];
    const int64_t ns = conv_panel_segments(q, p0, np, seg);
    const __m512i kEven = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
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
            if (row_in && q.sw > 2) {
                conv_fill_segment(ds, sg.ow0, end, src, q.sw, row_in, lo, hi);
                continue;
            }
            const int64_t a = row_in ? lo : 0, b = row_in ? hi : 0;
            for (int64_t j = sg.ow0; j < end; j += 16) {
                const __mmask16 st = lanes(j, j, end), in = lanes(j, a, b);
                __m512 v;
                if (!in) {
                    v = _mm512_setzero_ps();
                } else if (q.sw == 1) {
                    v = _mm512_maskz_loadu_ps(in, src + j);
                } else {  // inputs 2j .. 2j+30, the even ones kept
                    const __m512 v0 = _mm512_maskz_loadu_ps(lanes(2 * j, 2 * a, 2 * b - 1), src + 2 * j);
                    const __m512 v1 = _mm512_maskz_loadu_ps(lanes(2 * j + 16, 2 * a, 2 * b - 1), src + 2 * j + 16);
                    v = _mm512_permutex2var_ps(v0, kEven, v1);
                }
                _mm512_mask_storeu_ps(ds + j, st, v);
            }
        }
    }
}

const ConvGemmKernels kKernels = {tile, build_stride_phases, pack_panel};
}  // namespace

const ConvGemmKernels* conv_gemm_avx512_kernels() { return &kKernels; }

}  // namespace accel_emu

#else  // no x86 build: ops/conv.cc keeps to im2col + sgemm

namespace accel_emu {
const ConvGemmKernels* conv_gemm_avx512_kernels() { return nullptr; }
}  // namespace accel_emu

#endif
