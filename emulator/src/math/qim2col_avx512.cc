// qim2col_avx512.cc - the hot loops of qim2col.cc with AVX-512 (the VNNI and AMX paths): 4-row
// interleaving 64 columns per step (byte and word unpacks, then a transpose of 128-bit lanes), rows of the
// conv's copies moved 16 units per masked load and store, and the column sums with vpdpbusd against a
// vector of ones.
#include <algorithm>
#include <cstring>

#include "math/exact_rounding.h"
#include "math/math_util.h"
#include "math/qim2col.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"
#define ACCEL_QIM2COL_AVX512 1
#endif

namespace accel_emu {
namespace qk {

#if defined(ACCEL_QIM2COL_AVX512)

namespace {

#define ACCEL_AVX512_IM __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

ACCEL_AVX512_IM inline __mmask16 head16(int64_t n) {
    return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>(n <= 0 ? 0 : (1u << n) - 1);
}

// Units 0..63 of four byte rows r[0..nch) (zero rows past nch; lanes past cnt are garbage), into o[0..4):
// unpacks give units 16L + 4k.. in 128-bit lane L of vector k, then a 4x4 transpose of lanes puts 16
// consecutive units in each vector.
ACCEL_AVX512_IM inline void interleave64(const uint8_t* const* r, int64_t nch, int64_t cnt, __m512i flip, __m512i* o) {
    const __mmask64 m = cnt >= 64 ? ~0ull : (1ull << cnt) - 1;
    __m512i v[4];
    for (int64_t c = 0; c < 4; ++c)
        v[c] = c < nch ? _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, r[c]), flip) : _mm512_setzero_si512();
    const __m512i ab_lo = _mm512_unpacklo_epi8(v[0], v[1]), ab_hi = _mm512_unpackhi_epi8(v[0], v[1]);
    const __m512i cd_lo = _mm512_unpacklo_epi8(v[2], v[3]), cd_hi = _mm512_unpackhi_epi8(v[2], v[3]);
    const __m512i q0 = _mm512_unpacklo_epi16(ab_lo, cd_lo), q1 = _mm512_unpackhi_epi16(ab_lo, cd_lo);
    const __m512i q2 = _mm512_unpacklo_epi16(ab_hi, cd_hi), q3 = _mm512_unpackhi_epi16(ab_hi, cd_hi);
    const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44), t1 = _mm512_shuffle_i64x2(q2, q3, 0x44);
    const __m512i t2 = _mm512_shuffle_i64x2(q0, q1, 0xEE), t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE);
    o[0] = _mm512_shuffle_i64x2(t0, t1, 0x88);
    o[1] = _mm512_shuffle_i64x2(t0, t1, 0xDD);
    o[2] = _mm512_shuffle_i64x2(t2, t3, 0x88);
    o[3] = _mm512_shuffle_i64x2(t2, t3, 0xDD);
}

}  // namespace

ACCEL_AVX512_IM void rows_to_units_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc,
                                          int64_t ld, uint8_t* dst) {
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(h->x_flip));
    for (int64_t g = 0; g < h->Kq; ++g) {
        const int64_t nch = std::min<int64_t>(4, h->K - 4 * g);
        const uint8_t* r0 = x + 4 * g * ldx + n0;
        uint8_t* row = dst + g * ld * 4;
        for (int64_t u = 0; u < nc; u += 64) {
            const uint8_t* r[4] = {r0 + u, r0 + ldx + u, r0 + 2 * ldx + u, r0 + 3 * ldx + u};
            // K rows are K streams, more than the prefetchers follow: a big X comes from memory one
            // latency per line otherwise. Prefetching past the block's end is harmless.
            for (int64_t c = 0; c < nch; ++c) _mm_prefetch(reinterpret_cast<const char*>(r[c] + 512), _MM_HINT_T0);
            __m512i o[4];
            interleave64(r, nch, nc - u, flip, o);
            for (int64_t k = 0; k < 4; ++k)
                _mm512_mask_storeu_epi32(row + 4 * (u + 16 * k), head16(nc - u - 16 * k), o[k]);
        }
    }
}

// Per 4 channels: the plane interleaved whole into cx's stage (64 units per step, rows ignored), then each
// copy's rows taken from it between their padding units (stride 2: even or odd units by a permute).
ACCEL_AVX512_IM void conv_x_build_avx512(const Header* h, const ConvGeom& q, const uint8_t* x, const ConvX& cx,
                                         int64_t i0, int64_t i1) {
    if (q.sw > 2) {
        conv_x_build(h, q, x, cx, i0, i1);
        return;
    }
    // Locals throughout: the stores below may alias anything, so fields read through q or cx would be
    // reloaded after each of them.
    const int64_t H = q.H, W = q.W, OW = q.OW, sh = q.sh, sw = q.sw, HW = H * W;
    const int64_t plane = cx.plane, copy = cx.copy, row0 = cx.row0;
    uint8_t* const data = cx.data;
    uint8_t* const stage = cx.stage;
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(h->x_flip));
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    // The input rows that rows [i0, i1) read, as units [u0, u1) of a plane.
    const int64_t u0 = std::clamp<int64_t>(i0 * sh - q.pt, 0, H) * W;
    const int64_t u1 = std::clamp<int64_t>((i1 - 1) * sh + sh - q.pt, 0, H) * W;
    for (int64_t c4 = 0; c4 < cx.C4; ++c4) {
        const int64_t nch = std::min<int64_t>(4, q.Cg - 4 * c4);
        const uint8_t* r0 = x + 4 * c4 * HW;
        for (int64_t u = u0; u < u1; u += 64) {
            const uint8_t* r[4] = {r0 + u, r0 + HW + u, r0 + 2 * HW + u, r0 + 3 * HW + u};
            for (int64_t c = 0; c < nch; ++c) _mm_prefetch(reinterpret_cast<const char*>(r[c] + 512), _MM_HINT_T0);
            __m512i o[4];
            interleave64(r, nch, u1 - u, flip, o);
            for (int64_t k = 0; k < 4; ++k)
                _mm512_mask_storeu_epi32(stage + 4 * (u + 16 * k), head16(u1 - u - 16 * k), o[k]);
        }
        uint8_t outside[4] = {0, 0, 0, 0};
        for (int64_t b = 0; b < nch; ++b) outside[b] = h->x_pad;
        int32_t out_unit;
        std::memcpy(&out_unit, outside, 4);
        const __m512i outv = _mm512_set1_epi32(out_unit);
        for (int64_t rp = 0; rp < sh; ++rp) {
            if (!conv_phase_used(q, rp)) continue;
            // Rows i whose input row i * sh + rp - pt is inside: [a0, a1), within [i0, i1).
            int64_t a0, a1;
            kern::tap_range(rp - q.pt, sh, H, i1, &a0, &a1);
            a0 = std::max(a0, i0), a1 = std::max(a1, a0);
            for (int64_t kj = 0; kj < q.kw; ++kj) {
                uint8_t* const d0 = data + (rp * q.kw + kj) * copy + c4 * plane;  // row i at (i - row0)
                for (int64_t i = i0; i < i1; ++i) {  // rows of padding: before a0 and from a1
                    if (i == a0) i = a1;
                    if (i >= i1) break;
                    for (int64_t j = 0; j < OW; j += 16)
                        _mm512_mask_storeu_epi32(d0 + 4 * ((i - row0) * OW + j), head16(OW - j), outv);
                }
                // Every inside row has the same shape: a padding units, the run [a, b), OW - b padding units.
                // (Whole-vector moves for the run: masked loads merging over the padding cost more here.)
                int64_t a, b;
                kern::tap_range(kj * q.dw - q.pl, sw, W, OW, &a, &b);
                const int64_t n = b - a, full = n / 16;
                const __mmask16 left = head16(a), right = head16(OW - b), last = head16(n - 16 * full);
                const bool pad_wide = a > 16 || OW - b > 16;
                const uint8_t* const s0 = stage + 4 * (a * sw + kj * q.dw - q.pl);
                for (int64_t i = a0; i < a1; ++i) {
                    uint8_t* const d = d0 + 4 * (i - row0) * OW;
                    if (pad_wide) {
                        for (int64_t j = 0; j < a; j += 16) _mm512_mask_storeu_epi32(d + 4 * j, head16(a - j), outv);
                        for (int64_t j = b; j < OW; j += 16) _mm512_mask_storeu_epi32(d + 4 * j, head16(OW - j), outv);
                    } else {
                        if (left) _mm512_mask_storeu_epi32(d, left, outv);
                        if (right) _mm512_mask_storeu_epi32(d + 4 * b, right, outv);
                    }
                    const uint8_t* const s = s0 + 4 * (i * sh + rp - q.pt) * W;
                    uint8_t* const dd = d + 4 * a;
                    if (sw == 1) {
                        for (int64_t c = 0; c < full; ++c)
                            _mm512_storeu_si512(dd + 64 * c, _mm512_loadu_si512(s + 64 * c));
                        if (last)
                            _mm512_mask_storeu_epi32(dd + 64 * full, last,
                                                     _mm512_maskz_loadu_epi32(last, s + 64 * full));
                        continue;
                    }
                    // Stride 2: units 2u of the input row, two loads and a permute per 16.
                    for (int64_t c = 0; 16 * c < n; ++c) {
                        const int64_t cnt = std::min<int64_t>(16, n - 16 * c), span = 2 * cnt - 1;
                        const uint8_t* p = s + 128 * c;
                        const __m512i v =
                            _mm512_permutex2var_epi32(_mm512_maskz_loadu_epi32(head16(span), p), even,
                                                      _mm512_maskz_loadu_epi32(head16(span - 16), p + 64));
                        _mm512_mask_storeu_epi32(dd + 64 * c, head16(cnt), v);
                    }
                }
            }
        }
    }
}

ACCEL_AVX512_IM void view_colsums_avx512(const Header* h, const View& b, int64_t p0, int64_t nc, int32_t* colsum) {
    const __m512i ones = _mm512_set1_epi8(1);
    const bool b_signed = traits(h->isa).b_signed;
    for (int64_t j = 0; j < nc; j += 16) {
        __m512i s = _mm512_setzero_si512();
        const uint8_t* p = b.base + 4 * (p0 + j);
        // vpdpbusd's first source is the unsigned one: B there when it is unsigned, the ones otherwise.
        if (b_signed)
            for (int64_t g = 0; g < h->Kq; ++g) s = _mm512_dpbusd_epi32(s, ones, _mm512_loadu_si512(p + b.off[g]));
        else
            for (int64_t g = 0; g < h->Kq; ++g) s = _mm512_dpbusd_epi32(s, _mm512_loadu_si512(p + b.off[g]), ones);
        _mm512_mask_storeu_epi32(colsum + j, head16(nc - j), s);
    }
}

// cols_to_units with AVX-512: X's rows are [n][K] bytes, the units [Kq][ld] 4-byte groups, so blocks of
// 16 rows x 16 k-groups are a 16 x 16 transpose of 32-bit words (unpacks within 128-bit lanes, then a
// transpose of the lanes), the flip applied to every byte as the portable loop does.
ACCEL_AVX512_IM void cols_to_units_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc,
                                          int64_t ld, uint8_t* dst) {
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(h->x_flip));
    const int64_t full = h->K / 4;  // k-groups with 4 real bytes
    for (int64_t u0 = 0; u0 < nc; u0 += 16) {
        const int64_t nu = std::min<int64_t>(16, nc - u0);
        const __mmask16 um = head16(nu);
        for (int64_t g0 = 0; g0 < full; g0 += 16) {
            const __mmask16 gm = head16(full - g0);
            __m512i r[16], t[16];
            for (int i = 0; i < 16; ++i)
                r[i] = i < nu ? _mm512_maskz_loadu_epi32(gm, x + (n0 + u0 + i) * ldx + 4 * g0) : _mm512_setzero_si512();
            for (int i = 0; i < 8; ++i) {
                t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
                t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
            }
            // r[4i + j], 128-bit lane L: column 4L + j of rows 4i .. 4i + 3.
            for (int i = 0; i < 4; ++i) {
                r[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
                r[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
                r[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
                r[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
            }
            for (int j = 0; j < 4; ++j) {
                const __m512i s0 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0x44);
                const __m512i s1 = _mm512_shuffle_i32x4(r[j], r[4 + j], 0xEE);
                const __m512i s2 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0x44);
                const __m512i s3 = _mm512_shuffle_i32x4(r[8 + j], r[12 + j], 0xEE);
                t[j] = _mm512_shuffle_i32x4(s0, s2, 0x88);       // column j
                t[4 + j] = _mm512_shuffle_i32x4(s0, s2, 0xDD);   // column 4 + j
                t[8 + j] = _mm512_shuffle_i32x4(s1, s3, 0x88);   // column 8 + j
                t[12 + j] = _mm512_shuffle_i32x4(s1, s3, 0xDD);  // column 12 + j
            }
            const int64_t ng = std::min<int64_t>(16, full - g0);
            for (int64_t c = 0; c < ng; ++c)
                _mm512_mask_storeu_epi32(dst + ((g0 + c) * ld + u0) * 4, um, _mm512_xor_si512(t[c], flip));
        }
    }
    if (full < h->Kq) cols_to_units_tail(h, x, ldx, n0, nc, ld, dst);
}

#else  // not x86-64: the portable loops (never reached: no AVX-512 path runs here)

void rows_to_units_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld,
                          uint8_t* dst) {
    rows_to_units(h, x, ldx, n0, nc, ld, dst);
}
void conv_x_build_avx512(const Header* h, const ConvGeom& q, const uint8_t* x, const ConvX& cx, int64_t i0,
                         int64_t i1) {
    conv_x_build(h, q, x, cx, i0, i1);
}
void view_colsums_avx512(const Header* h, const View& b, int64_t p0, int64_t nc, int32_t* colsum) {
    view_colsums(h, b, p0, nc, colsum);
}
void cols_to_units_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld,
                          uint8_t* dst) {
    cols_to_units(h, x, ldx, n0, nc, ld, dst);
}

#endif

}  // namespace qk
}  // namespace accel_emu
