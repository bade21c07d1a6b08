// qim2col_avx512.cc - the hot loops of qim2col.cc with AVX-512 (the VNNI and AMX paths): 4-row
// interleaving 16 columns per step (byte then word unpacks), runs of units copied with masked vector moves
// (a run is at most a panel row), and the column sums with vpdpbusd against a vector of ones.
#include <algorithm>
#include <cstring>

#include "math/math_util.h"
#include "math/qim2col.h"

#if defined(__x86_64__) && defined(__GNUC__)
// gcc 12 reports its own intrinsics' deliberately undefined pass-through operands (__Y = __Y) as maybe
// uninitialized once inlined here; the warning's location is inside immintrin.h, so it is silenced before it.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#define ACCEL_QIM2COL_AVX512 1
#endif

namespace accel_emu {
namespace qk {

#if defined(ACCEL_QIM2COL_AVX512)

namespace {

#define ACCEL_AVX512_IM __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

ACCEL_AVX512_IM inline __mmask16 head16(int64_t n) {
    return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

// Units j = 0..15 of four byte rows: bytes (r0[j], r1[j], r2[j], r3[j]).
ACCEL_AVX512_IM inline __m512i interleave4(__m128i r0, __m128i r1, __m128i r2, __m128i r3) {
    const __m128i ab_lo = _mm_unpacklo_epi8(r0, r1), ab_hi = _mm_unpackhi_epi8(r0, r1);
    const __m128i cd_lo = _mm_unpacklo_epi8(r2, r3), cd_hi = _mm_unpackhi_epi8(r2, r3);
    __m512i v = _mm512_castsi128_si512(_mm_unpacklo_epi16(ab_lo, cd_lo));
    v = _mm512_inserti32x4(v, _mm_unpackhi_epi16(ab_lo, cd_lo), 1);
    v = _mm512_inserti32x4(v, _mm_unpacklo_epi16(ab_hi, cd_hi), 2);
    return _mm512_inserti32x4(v, _mm_unpackhi_epi16(ab_hi, cd_hi), 3);
}

// cnt (<= 16) bytes of row at p, xor flip, zeros past cnt.
ACCEL_AVX512_IM inline __m128i row16(const uint8_t* p, int64_t cnt, __m128i flip) {
    const __mmask16 m = head16(cnt);
    return _mm_xor_si128(_mm_maskz_loadu_epi8(m, p), _mm_maskz_mov_epi8(m, flip));
}

// cnt (<= 16) bytes at stride 2 from p (bytes 0, 2, ..), xor flip, zeros past cnt.
ACCEL_AVX512_IM inline __m128i row16_s2(const uint8_t* p, int64_t cnt, __m128i flip) {
    const __mmask32 m = cnt >= 16 ? 0x7FFFFFFFu : static_cast<__mmask32>((1u << (2 * cnt - 1)) - 1);
    const __m128i even = _mm256_cvtepi16_epi8(_mm256_maskz_loadu_epi8(m, p));
    return _mm_xor_si128(even, _mm_maskz_mov_epi8(head16(cnt), flip));
}

}  // namespace

ACCEL_AVX512_IM void panels_rows_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc,
                                        int64_t nr, uint8_t* dst) {
    const __m128i flip = _mm_set1_epi8(static_cast<char>(h->x_flip));
    const __m128i zero = _mm_setzero_si128();
    for (int64_t j = 0; j < nc; j += nr) {
        const int64_t n = std::min(nr, nc - j);
        uint8_t* panel = dst + j * h->Kg * 4;
        for (int64_t g = 0; g < h->Kq; ++g) {
            const int64_t k0 = 4 * g, valid = std::min<int64_t>(4, h->K - k0);
            const uint8_t* r = x + k0 * ldx + n0 + j;
            uint8_t* row = panel + g * nr * 4;
            for (int64_t c = 0; c < nr; c += 16) {
                const int64_t cnt = std::clamp<int64_t>(n - c, 0, 16);
                __m512i v = _mm512_setzero_si512();
                if (cnt > 0) {
                    const __m128i r0 = row16(r + c, cnt, flip);
                    const __m128i r1 = valid > 1 ? row16(r + ldx + c, cnt, flip) : zero;
                    const __m128i r2 = valid > 2 ? row16(r + 2 * ldx + c, cnt, flip) : zero;
                    const __m128i r3 = valid > 3 ? row16(r + 3 * ldx + c, cnt, flip) : zero;
                    v = interleave4(r0, r1, r2, r3);
                }
                _mm512_storeu_si512(row + 4 * c, v);
            }
        }
        std::memset(panel + h->Kq * nr * 4, 0, (h->Kg - h->Kq) * nr * 4);
    }
}

ACCEL_AVX512_IM void panels_conv_avx512(const Header* h, const ConvXi& xi, int64_t p0, int64_t nc, int64_t nr,
                                        uint8_t* dst) {
    Segment seg[64];
    for (int64_t j = 0; j < nc; j += nr) {
        const int64_t n = std::min(nr, nc - j);
        uint8_t* panel = dst + j * h->Kg * 4;
        for (int64_t c0 = 0; c0 < n; c0 += 64) {  // at most 64 segments per pass (see panels_conv)
            const int64_t cn = std::min<int64_t>(64, n - c0);
            const int ns = conv_segments(xi, p0 + j + c0, cn, seg);
            for (int64_t g = 0; g < h->Kq; ++g) {
                const uint8_t* src = xi.data + xi.off[g];
                uint8_t* row = panel + g * nr * 4 + c0 * 4;
                for (int s = 0; s < ns; ++s) {
                    const uint8_t* a = src + seg[s].src;
                    uint8_t* b = row + seg[s].col * 4;
                    for (int64_t u = 0; u < seg[s].n; u += 16) {
                        const __mmask16 m = head16(seg[s].n - u);
                        _mm512_mask_storeu_epi32(b + 4 * u, m, _mm512_maskz_loadu_epi32(m, a + 4 * u));
                    }
                }
            }
        }
        for (int64_t g = 0; g < h->Kq && n < nr; ++g)
            for (int64_t c = n; c < nr; c += 16)
                _mm512_mask_storeu_epi32(panel + (g * nr + c) * 4, head16(nr - c), _mm512_setzero_si512());
        std::memset(panel + h->Kq * nr * 4, 0, (h->Kg - h->Kq) * nr * 4);
    }
}

ACCEL_AVX512_IM void conv_xi_build_avx512(const Header* h, const ConvGeom& q, const uint8_t* x, void* mem,
                                          ConvXi* xi) {
    if (q.sw > 2) {
        conv_xi_build(h, q, x, mem, xi);
        return;
    }
    conv_xi_layout(h, q, mem, xi);
    const __m128i flip = _mm_set1_epi8(static_cast<char>(h->x_flip)), zero = _mm_setzero_si128();
    const int64_t HW = q.H * q.W;
    for (int64_t rp = 0; rp < q.sh; ++rp)
        for (int64_t cp = 0; cp < q.sw; ++cp) {
            if (!conv_phase_used(q, rp, cp)) continue;
            int64_t lo, hi;
            kern::tap_range(cp - q.pl, q.sw, q.W, xi->Wq, &lo, &hi);
            for (int64_t c4 = 0; c4 < xi->C4; ++c4) {
                const int64_t nch = std::min<int64_t>(4, q.Cg - 4 * c4);
                uint8_t outside[4] = {0, 0, 0, 0};
                for (int64_t b = 0; b < nch; ++b) outside[b] = h->x_pad;
                int32_t out_unit;
                std::memcpy(&out_unit, outside, 4);
                const __m512i outv = _mm512_set1_epi32(out_unit);
                for (int64_t i = 0; i < xi->Hq; ++i) {
                    uint8_t* d = xi->data + (rp * q.sw + cp) * xi->phase + c4 * xi->plane + i * xi->Wq * 4;
                    const int64_t ih = i * q.sh + rp - q.pt;
                    const bool in = ih >= 0 && ih < q.H;
                    // The padding units: the whole row, or the columns left and right of the input.
                    const int64_t a = in ? lo : xi->Wq, b = in ? hi : xi->Wq;
                    for (int64_t j = 0; j < a; j += 16) _mm512_mask_storeu_epi32(d + 4 * j, head16(a - j), outv);
                    for (int64_t j = b; j < xi->Wq; j += 16)
                        _mm512_mask_storeu_epi32(d + 4 * j, head16(xi->Wq - j), outv);
                    if (!in) continue;
                    const uint8_t* s0 = x + (4 * c4) * HW + ih * q.W + (lo * q.sw + cp - q.pl);
                    for (int64_t j = lo; j < hi; j += 16) {
                        const int64_t cnt = std::min<int64_t>(16, hi - j);
                        const uint8_t* s = s0 + (j - lo) * q.sw;
                        __m128i r[4];
                        for (int64_t c = 0; c < 4; ++c)
                            r[c] = c >= nch ? zero
                                   : q.sw == 1 ? row16(s + c * HW, cnt, flip)
                                               : row16_s2(s + c * HW, cnt, flip);
                        _mm512_mask_storeu_epi32(d + 4 * j, head16(cnt), interleave4(r[0], r[1], r[2], r[3]));
                    }
                }
            }
        }
}

ACCEL_AVX512_IM void panel_colsums_avx512(const Header* h, const uint8_t* panels, int64_t nc, int64_t nr,
                                          int32_t* colsum) {
    const __m512i ones = _mm512_set1_epi8(1);
    const bool b_signed = traits(h->isa).b_signed;
    for (int64_t j = 0; j < nc; j += nr) {
        const uint8_t* panel = panels + j * h->Kg * 4;
        for (int64_t c = 0; c < nr && j + c < nc; c += 16) {
            __m512i s = _mm512_setzero_si512();
            const uint8_t* p = panel + 4 * c;
            // vpdpbusd's first source is the unsigned one: B there when it is unsigned, the ones otherwise.
            if (b_signed)
                for (int64_t g = 0; g < h->Kq; ++g) s = _mm512_dpbusd_epi32(s, ones, _mm512_loadu_si512(p + g * nr * 4));
            else
                for (int64_t g = 0; g < h->Kq; ++g) s = _mm512_dpbusd_epi32(s, _mm512_loadu_si512(p + g * nr * 4), ones);
            _mm512_storeu_si512(colsum + j + c, s);
        }
    }
}

#else  // not x86-64: the portable loops (never reached: no AVX-512 path runs here)

void panels_rows_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t nr,
                        uint8_t* dst) {
    panels_rows(h, x, ldx, n0, nc, nr, dst);
}
void panels_conv_avx512(const Header* h, const ConvXi& xi, int64_t p0, int64_t nc, int64_t nr, uint8_t* dst) {
    panels_conv(h, xi, p0, nc, nr, dst);
}
void conv_xi_build_avx512(const Header* h, const ConvGeom& q, const uint8_t* x, void* mem, ConvXi* xi) {
    conv_xi_build(h, q, x, mem, xi);
}
void panel_colsums_avx512(const Header* h, const uint8_t* panels, int64_t nc, int64_t nr, int32_t* colsum) {
    panel_colsums(h, panels, nc, nr, colsum);
}

#endif

}  // namespace qk
}  // namespace accel_emu
