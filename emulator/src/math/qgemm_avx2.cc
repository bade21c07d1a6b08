// qgemm_avx2.cc - the int8 GEMM with AVX2 and no VNNI. vpmaddubsw would saturate pairs of full-range
// products to int16, so the sums go through vpmaddwd, exact: the 4-byte units of X split into their
// even bytes (k0, k2) and odd bytes (k1, k3) as zero-extended int16 pairs (one and, one shift), each
// multiplied by the weight row's matching int16 pair and summed into int32 (|sum| <= 2 * 255 * 255).
// Weights: [Mp/4][Kg][4 rows][(a0, a2), (a1, a3)] int16 with A = W. A register tile is 4 rows by
// 2 vectors (16 columns): 8 accumulators, 4 split unit vectors and 2 broadcasts of the 16 ymm registers.
#include <algorithm>
#include <cstring>

#include "math/exact_rounding.h"
#include "math/qgemm_impl.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"
#define ACCEL_QGEMM_AVX2 1
#endif

namespace accel_emu {
namespace qk {

namespace {
constexpr int64_t MR = 4, NR = 16;
}  // namespace

void pack_weights_avx2(const AView& a, int64_t Mp, int64_t Kg, void* out) {
    int16_t* o = static_cast<int16_t*>(out);
    for (int64_t t = 0; t < Mp / MR; ++t)
        for (int64_t g = 0; g < Kg; ++g)
            for (int64_t i = 0; i < MR; ++i) {
                const int64_t m = t * MR + i;
                *o++ = static_cast<int16_t>(a.at(m, g, 0));
                *o++ = static_cast<int16_t>(a.at(m, g, 2));
                *o++ = static_cast<int16_t>(a.at(m, g, 1));
                *o++ = static_cast<int16_t>(a.at(m, g, 3));
            }
}

#if defined(ACCEL_QGEMM_AVX2)

namespace {

// Only "avx2": with "fma" gcc could fuse the Float epilogue's multiply and add.
#define ACCEL_AVX2 __attribute__((target("avx2")))

// The sums are GCC/clang int vectors added with +: as __m256i (a vector of int64 the intrinsics cast)
// gcc would keep them in memory, spilling half of them every k-group.
typedef int V8 __attribute__((vector_size(32)));

// acc = A's 4 rows times units [0, 16) of B (k-group g at B + off[g]).
ACCEL_AVX2 inline void kernel(const int32_t* __restrict__ A, const uint8_t* __restrict__ B, const int64_t* off,
                              int64_t Kg, __m256i (&out)[MR][2]) {
    const __m256i even = _mm256_set1_epi16(0x00FF);
    V8 acc[MR][2];
    for (int i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = V8{};
    for (int64_t g = 0; g < Kg; ++g) {
        const uint8_t* bg = B + off[g];
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg + 32));
        const __m256i lo0 = _mm256_and_si256(b0, even), hi0 = _mm256_srli_epi16(b0, 8);
        const __m256i lo1 = _mm256_and_si256(b1, even), hi1 = _mm256_srli_epi16(b1, 8);
        for (int i = 0; i < MR; ++i) {
            const __m256i w02 = _mm256_set1_epi32(A[2 * i]), w13 = _mm256_set1_epi32(A[2 * i + 1]);
            acc[i][0] += reinterpret_cast<V8>(_mm256_madd_epi16(lo0, w02));
            acc[i][1] += reinterpret_cast<V8>(_mm256_madd_epi16(lo1, w02));
            acc[i][0] += reinterpret_cast<V8>(_mm256_madd_epi16(hi0, w13));
            acc[i][1] += reinterpret_cast<V8>(_mm256_madd_epi16(hi1, w13));
        }
        A += 2 * MR;
    }
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < 2; ++v) out[i][v] = reinterpret_cast<__m256i>(acc[i][v]);
}

struct RowEpi2 {
    QOut out;
    __m256i rowc, colc, yz;
    __m256 s, fb, lo, hi;
    const Header* h;
    int64_t m;
};

ACCEL_AVX2 inline RowEpi2 row_epi2(const Header* h, int64_t m) {
    return {h->out,
            _mm256_set1_epi32(rowc(h)[m]),
            _mm256_set1_epi32(colc(h)[m]),
            _mm256_set1_epi32(h->y_zero),
            _mm256_set1_ps(scale(h)[m]),
            _mm256_set1_ps(fbias(h)[m]),
            _mm256_set1_ps(h->lo),
            _mm256_set1_ps(h->hi),
            h,
            m};
}

// 8 sums corrected and written, the first n (<= 8) of them, to dst (elements of the output type).
ACCEL_AVX2 inline void epi_store2(const RowEpi2& e, __m256i s, const int32_t* colsum, char* dst, int64_t n) {
    __m256i a = _mm256_add_epi32(s, e.rowc);
    if (colsum)
        a = _mm256_add_epi32(a,
                             _mm256_mullo_epi32(e.colc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(colsum))));
    alignas(32) int32_t t[8];
    if (e.out == QOut::Fixed) {  // 64-bit shifts AVX2 lacks: the scalar definition (the devices' rules)
        _mm256_store_si256(reinterpret_cast<__m256i*>(t), a);
        for (int64_t j = 0; j < n; ++j) dst[j] = static_cast<char>(fixed_value(t[j], e.h, e.m));
        return;
    }
    if (e.out == QOut::Int32 || e.out == QOut::Float) {
        if (e.out == QOut::Float) {
            __m256 p = _mm256_mul_ps(_mm256_cvtepi32_ps(a), e.s);
            __asm__("" : "+x"(p));  // keeps the product rounded on its own, whatever the target
            a = _mm256_castps_si256(_mm256_add_ps(p, e.fb));
        }
        if (n == 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), a);
        else _mm256_store_si256(reinterpret_cast<__m256i*>(t), a), std::memcpy(dst, t, 4 * n);
        return;
    }
    const __m256 c = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(a), e.s), e.lo), e.hi);
    const __m256i r = _mm256_add_epi32(_mm256_cvtps_epi32(c), e.yz);  // in the output type's range
    // The low byte of each lane: bytes 0, 4, 8, 12 of each 128-bit half, then the halves' first dwords.
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i bytes =
        _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(r, pick), _mm256_setr_epi32(0, 4, 0, 0, 0, 0, 0, 0));
    if (n == 8) _mm_storel_epi64(reinterpret_cast<__m128i*>(dst), _mm256_castsi256_si128(bytes));
    else _mm256_store_si256(reinterpret_cast<__m256i*>(t), bytes), std::memcpy(dst, t, n);
}

}  // namespace

ACCEL_AVX2 void block_avx2(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum,
                           const Out& out) {
    const int32_t* W = static_cast<const int32_t*>(weights(h));
    const int64_t e = qout_bytes(h->out);
    char* y = static_cast<char*>(out.y);
    alignas(32) char stage[MR][NR * 4];
    for (int64_t t = 0; t * MR < h->M; ++t) {
        const int32_t* A = W + t * h->Kg * MR * 2;
        const int64_t m0 = t * MR, rows = std::min(MR, h->M - m0);
        for (int64_t j = 0; j < nc; j += NR) {
            const int64_t n = std::min(NR, nc - j);
            __m256i acc[MR][2];
            kernel(A, b.base + 4 * (p0 + j), b.off, h->Kg, acc);
            const int32_t* cs = h->colsum ? colsum + j : nullptr;
            for (int64_t i = 0; i < rows; ++i) {
                const RowEpi2 ep = row_epi2(h, m0 + i);
                char* dst = out.xw ? stage[i] : y + ((m0 + i) * out.ldy + j) * e;
                epi_store2(ep, acc[i][0], cs, dst, std::min<int64_t>(n, 8));
                if (n > 8) epi_store2(ep, acc[i][1], cs ? cs + 8 : nullptr, dst + 8 * e, n - 8);
            }
            if (!out.xw) continue;
            int64_t u = 0;
            if (e == 4 && rows == MR)  // 4x4 transposes: each column's 4 rows are contiguous in y
                for (; u + 4 <= n; u += 4) {
                    __m128 c0 = _mm_loadu_ps(reinterpret_cast<const float*>(stage[0] + u * 4));
                    __m128 c1 = _mm_loadu_ps(reinterpret_cast<const float*>(stage[1] + u * 4));
                    __m128 c2 = _mm_loadu_ps(reinterpret_cast<const float*>(stage[2] + u * 4));
                    __m128 c3 = _mm_loadu_ps(reinterpret_cast<const float*>(stage[3] + u * 4));
                    _MM_TRANSPOSE4_PS(c0, c1, c2, c3);
                    const __m128 col[4] = {c0, c1, c2, c3};
                    for (int t = 0; t < 4; ++t)
                        _mm_storeu_ps(reinterpret_cast<float*>(y + ((j + u + t) * out.ldy + m0) * 4), col[t]);
                }
            for (; u < n; ++u) {
                char* dst = y + ((j + u) * out.ldy + m0) * e;
                for (int64_t i = 0; i < rows; ++i) std::memcpy(dst + i * e, stage[i] + u * e, e);
            }
        }
    }
}

#else  // not x86-64: qisa_select never picks this path, so no blob of it exists

void block_avx2(const Header*, const View&, int64_t, int64_t, const int32_t*, const Out&) {}

#endif

}  // namespace qk
}  // namespace accel_emu
