// conv_gemm_avx2.cc - the packed conv GEMM's AVX2 and FMA pieces (conv_gemm_kernels.h). The 16 ymm
// registers hold a tile of 4 rows by 3 vectors (24 columns): 12 accumulators, 3 B vectors and one
// broadcast weight, 12 FMAs for 7 loads a step. A kConvMR-row weight panel is its two halves (each reads
// 4 of the panel's 8 weights per depth step) and a kConvNR-column B panel two tiles; both halves run over
// one 24-column tile in turn while its B rows are in L1. Rows of im2col panels (dilated convs, strides
// over 2) are gathered 8 outputs per masked load at strides 1 and 2.
#include <algorithm>
#include <cstdint>

#include "math/conv_gemm_kernels.h"
#include "math/stride_phases.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"

namespace accel_emu {

namespace {
constexpr int64_t MR = kConvMR;
constexpr int kRows = 4, kCols = 24;  // the register tile

#define ACCEL_AVX2_FMA __attribute__((target("avx2,fma")))
#define ACCEL_UNROLL _Pragma("GCC unroll 16")

// Lanes i < n of 8 set, as a maskload/maskstore mask (1 <= n <= 8).
ACCEL_AVX2_FMA inline __m256i first_lanes(int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// C[kRows][NV*8 columns, the last vector's lanes by `tail` if kMasked] (+)= A[kc][MR, first kRows] * B[kc][ldb]
// (row k of B at B + off[k] if kOffsets), starting from C if `accumulate`, else from bias[kRows] (zeros if
// null). The accumulators stay in registers only if the loops over them are unrolled before registers are
// allocated: with all 16 in use gcc 12 otherwise stores every accumulator to the stack every depth step,
// which halves the speed.
template <int NV, bool kMasked, bool kOffsets>
ACCEL_AVX2_FMA void micro(int64_t kc, const float* __restrict__ A, const float* __restrict__ B, int64_t ldb,
                          const int64_t* __restrict__ off, float* __restrict__ C, int64_t ldc, __m256i tail,
                          const float* bias, bool accumulate) {
    __m256 acc[kRows][NV];
    if (accumulate) {
        ACCEL_UNROLL for (int i = 0; i < kRows; ++i) ACCEL_UNROLL for (int v = 0; v < NV; ++v) acc[i][v] =
            kMasked && v == NV - 1 ? _mm256_maskload_ps(C + i * ldc + 8 * v, tail)
                                   : _mm256_loadu_ps(C + i * ldc + 8 * v);
    } else {
        ACCEL_UNROLL for (int i = 0; i < kRows; ++i) ACCEL_UNROLL for (int v = 0; v < NV; ++v) acc[i][v] =
            bias ? _mm256_set1_ps(bias[i]) : _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < kc; ++k) {
        const float* b = kOffsets ? B + off[k] : B + k * ldb;
        __m256 bv[NV];
        ACCEL_UNROLL for (int v = 0; v < NV; ++v) bv[v] =
            kMasked && v == NV - 1 ? _mm256_maskload_ps(b + 8 * v, tail) : _mm256_loadu_ps(b + 8 * v);
        ACCEL_UNROLL for (int i = 0; i < kRows; ++i) {
            const __m256 a = _mm256_broadcast_ss(A + k * MR + i);
            ACCEL_UNROLL for (int v = 0; v < NV; ++v) acc[i][v] = _mm256_fmadd_ps(a, bv[v], acc[i][v]);
        }
    }
    ACCEL_UNROLL for (int i = 0; i < kRows; ++i) {
        ACCEL_UNROLL for (int v = 0; v < NV - 1; ++v) _mm256_storeu_ps(C + i * ldc + 8 * v, acc[i][v]);
        if (kMasked) _mm256_maskstore_ps(C + i * ldc + 8 * (NV - 1), tail, acc[i][NV - 1]);
        else _mm256_storeu_ps(C + i * ldc + 8 * (NV - 1), acc[i][NV - 1]);
    }
}

// One half panel (rows 4h..4h+3) over one column tile of n <= kCols columns.
template <bool kOffsets>
ACCEL_AVX2_FMA void half_tile(int64_t kc, const float* A, const float* B, int64_t ldb, const int64_t* off, float* C,
                              int64_t ldc, int64_t n, const float* bias, bool accumulate) {
    const int nv = static_cast<int>((n + 7) / 8);
    const __m256i tail = first_lanes(n - 8 * (nv - 1));
    if (n == kCols) micro<3, false, kOffsets>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
    else if (nv == 3) micro<3, true, kOffsets>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
    else if (nv == 2) micro<2, true, kOffsets>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
    else micro<1, true, kOffsets>(kc, A, B, ldb, off, C, ldc, tail, bias, accumulate);
}

// ConvGemmKernels::tile: the panel's column tiles, each by the halves that hold rows below m.
ACCEL_AVX2_FMA void tile(int64_t kc, const float* A, const float* B, int64_t ldb, const int64_t* off, float* C,
                         int64_t ldc, int64_t m, int64_t np, const float* bias, bool accumulate) {
    for (int64_t j = 0; j < np; j += kCols) {
        const int64_t n = std::min<int64_t>(kCols, np - j);
        for (int64_t h = 0; h * kRows < m; ++h) {
            const float* a = A + h * kRows;
            const float* bh = bias ? bias + h * kRows : nullptr;
            float* c = C + h * kRows * ldc + j;
            if (off) half_tile<true>(kc, a, B + j, ldb, off, c, ldc, n, bh, accumulate);
            else half_tile<false>(kc, a, B + j, ldb, off, c, ldc, n, bh, accumulate);
        }
    }
}

// Lanes i of 8 with base + i in [lo, hi), as a maskload mask.
ACCEL_AVX2_FMA inline __m256i lanes(int64_t base, int64_t lo, int64_t hi) {
    const int64_t first = std::clamp<int64_t>(lo - base, 0, 8), last = std::clamp<int64_t>(hi - base, first, 8);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(first)), lane),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(last)), lane));
}

// ConvGemmKernels::pack_panel, 8 outputs at a time where the stride is 1 or 2 or the input row is outside:
// masked loads read only the inputs in [lo, hi) (zeros elsewhere); at stride 2 the even inputs of two
// loads. Addresses in integers: masked-off lanes may lie outside the row.
ACCEL_AVX2_FMA void pack_panel(const ConvGeom& q, const kern::TapRanges& tr, const float* x, int64_t k0, int64_t kc,
                               int64_t p0, int64_t np, float* __restrict__ dst) {
    ConvSegment seg[kConvNR];
    const int64_t ns = conv_panel_segments(q, p0, np, seg);
    ConvTap t(q, k0);
    for (int64_t k = 0; k < kc; ++k, t.next(q)) {
        const float* xc = x + t.c * q.H * q.W;
        int64_t lo, hi;
        tr.get(t.kj, &lo, &hi);
        for (int64_t s = 0; s < ns; ++s) {
            const ConvSegment& sg = seg[s];
            float* ds = dst + k * kConvNR + sg.off - sg.ow0;  // indexed by ow
            const int64_t end = sg.ow0 + sg.n;
            const int64_t ih = sg.oh * q.sh - q.pt + t.ki * q.dh;
            const bool row_in = ih >= 0 && ih < q.H;
            const int64_t first = ih * q.W + t.kj * q.dw - q.pl;  // input (first + ow * sw) is under output ow
            if (row_in && q.sw > 2) {
                conv_fill_segment(ds, sg.ow0, end, xc + first, q.sw, row_in, lo, hi);
                continue;
            }
            const int64_t a = row_in ? lo : 0, b = row_in ? hi : 0;
            const uintptr_t base = reinterpret_cast<uintptr_t>(xc);
            auto at = [base, first](int64_t i) {
                return reinterpret_cast<const float*>(base + static_cast<uintptr_t>(first + i) * sizeof(float));
            };
            for (int64_t j = sg.ow0; j < end; j += 8) {
                __m256 v;
                if (a >= b || j + 8 <= a || j >= b) {
                    v = _mm256_setzero_ps();
                } else if (q.sw == 1) {
                    v = _mm256_maskload_ps(at(j), lanes(j, a, b));
                } else {  // inputs 2j .. 2j+14, the even ones kept
                    const __m256 v0 = _mm256_maskload_ps(at(2 * j), lanes(2 * j, 2 * a, 2 * b - 1));
                    const __m256 v1 = _mm256_maskload_ps(at(2 * j + 8), lanes(2 * j + 8, 2 * a, 2 * b - 1));
                    const __m256d even = _mm256_castps_pd(_mm256_shuffle_ps(v0, v1, 0x88));
                    v = _mm256_castpd_ps(_mm256_permute4x64_pd(even, 0xD8));
                }
                if (end - j >= 8) _mm256_storeu_ps(ds + j, v);
                else _mm256_maskstore_ps(ds + j, first_lanes(end - j), v);
            }
        }
    }
}

const ConvGemmKernels kKernels = {tile, build_stride_phases_avx2, pack_panel};
}  // namespace

const ConvGemmKernels* conv_gemm_avx2_kernels() { return &kKernels; }

}  // namespace accel_emu

#else  // no x86 build: ops/conv.cc keeps to im2col + sgemm

namespace accel_emu {
const ConvGemmKernels* conv_gemm_avx2_kernels() { return nullptr; }
}  // namespace accel_emu

#endif
