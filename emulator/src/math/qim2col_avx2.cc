// qim2col_avx2.cc - the conv copies of qim2col.cc built with AVX2 (the int8 AVX2 path): per 4 channels the
// plane is interleaved into cx's stage 32 units per step (byte and word unpacks, then 128-bit lanes put in
// order), and each copy's rows are taken from it between their padding units (stride 2: the even units of
// two loads). Byte for byte what the portable conv_x_build writes.
#include <algorithm>
#include <cstring>

#include "math/exact_rounding.h"
#include "math/math_util.h"
#include "math/qim2col.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"

namespace accel_emu {
namespace qk {

namespace {

#define ACCEL_AVX2 __attribute__((target("avx2")))

// Lanes i < n of 8 (32-bit units) set, as a maskload/maskstore mask.
ACCEL_AVX2 inline __m256i head8(int64_t n) {
    const int m = static_cast<int>(std::clamp<int64_t>(n, 0, 8));
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(m), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Units i < n of v (n may exceed 8) stored at d.
ACCEL_AVX2 inline void store_units(uint8_t* d, int64_t n, __m256i v) {
    if (n >= 8) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), v);
    else _mm256_maskstore_epi32(reinterpret_cast<int*>(d), head8(n), v);
}

// Bytes [0, n) of p (zeros past n; n may exceed 32): no read past p + n, which may end the input.
ACCEL_AVX2 inline __m256i load_bytes(const uint8_t* p, int64_t n) {
    if (n >= 32) return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    alignas(32) uint8_t buf[32] = {};
    std::memcpy(buf, p, static_cast<size_t>(n));
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(buf));
}

// Units 0..31 of four byte rows r[0..nch) (zero rows past nch), flipped, into o[0..4) (8 units each): the
// unpacks give units 16L + 4k .. 16L + 4k + 3 in 128-bit lane L of q[k].
ACCEL_AVX2 inline void interleave32(const uint8_t* const* r, int64_t nch, int64_t cnt, __m256i flip, __m256i* o) {
    __m256i v[4];
    for (int64_t c = 0; c < 4; ++c)
        v[c] = c < nch ? _mm256_xor_si256(load_bytes(r[c], cnt), flip) : _mm256_setzero_si256();
    const __m256i ab_lo = _mm256_unpacklo_epi8(v[0], v[1]), ab_hi = _mm256_unpackhi_epi8(v[0], v[1]);
    const __m256i cd_lo = _mm256_unpacklo_epi8(v[2], v[3]), cd_hi = _mm256_unpackhi_epi8(v[2], v[3]);
    const __m256i q0 = _mm256_unpacklo_epi16(ab_lo, cd_lo), q1 = _mm256_unpackhi_epi16(ab_lo, cd_lo);
    const __m256i q2 = _mm256_unpacklo_epi16(ab_hi, cd_hi), q3 = _mm256_unpackhi_epi16(ab_hi, cd_hi);
    o[0] = _mm256_permute2x128_si256(q0, q1, 0x20);
    o[1] = _mm256_permute2x128_si256(q2, q3, 0x20);
    o[2] = _mm256_permute2x128_si256(q0, q1, 0x31);
    o[3] = _mm256_permute2x128_si256(q2, q3, 0x31);
}

}  // namespace

ACCEL_AVX2 void conv_x_build_avx2(const Header* h, const ConvGeom& q, const uint8_t* x, const ConvX& cx, int64_t i0,
                                  int64_t i1) {
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
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(h->x_flip));
    // The input rows that rows [i0, i1) read, as units [u0, u1) of a plane.
    const int64_t u0 = std::clamp<int64_t>(i0 * sh - q.pt, 0, H) * W;
    const int64_t u1 = std::clamp<int64_t>((i1 - 1) * sh + sh - q.pt, 0, H) * W;
    for (int64_t c4 = 0; c4 < cx.C4; ++c4) {
        const int64_t nch = std::min<int64_t>(4, q.Cg - 4 * c4);
        const uint8_t* r0 = x + 4 * c4 * HW;
        for (int64_t u = u0; u < u1; u += 32) {
            const uint8_t* r[4] = {r0 + u, r0 + HW + u, r0 + 2 * HW + u, r0 + 3 * HW + u};
            __m256i o[4];
            interleave32(r, nch, u1 - u, flip, o);
            for (int64_t k = 0; k < 4 && u + 8 * k < u1; ++k)
                store_units(stage + 4 * (u + 8 * k), u1 - u - 8 * k, o[k]);
        }
        uint8_t outside[4] = {0, 0, 0, 0};
        for (int64_t b = 0; b < nch; ++b) outside[b] = h->x_pad;
        int32_t out_unit;
        std::memcpy(&out_unit, outside, 4);
        const __m256i outv = _mm256_set1_epi32(out_unit);
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
                    for (int64_t j = 0; j < OW; j += 8) store_units(d0 + 4 * ((i - row0) * OW + j), OW - j, outv);
                }
                // Every inside row has the same shape: a padding units, the run [a, b), OW - b padding units.
                int64_t a, b;
                kern::tap_range(kj * q.dw - q.pl, sw, W, OW, &a, &b);
                const int64_t n = b - a;
                const uint8_t* const s0 = stage + 4 * (a * sw + kj * q.dw - q.pl);
                for (int64_t i = a0; i < a1; ++i) {
                    uint8_t* const d = d0 + 4 * (i - row0) * OW;
                    for (int64_t j = 0; j < a; j += 8) store_units(d + 4 * j, a - j, outv);
                    for (int64_t j = b; j < OW; j += 8) store_units(d + 4 * j, OW - j, outv);
                    const uint8_t* const s = s0 + 4 * (i * sh + rp - q.pt) * W;
                    uint8_t* const dd = d + 4 * a;
                    if (sw == 1) {
                        if (n > 0) std::memcpy(dd, s, static_cast<size_t>(4 * n));
                        continue;
                    }
                    // Stride 2: units 2u of the input row, 8 from two loads (the last unit read is 2n - 2).
                    for (int64_t c = 0; 8 * c < n; ++c) {
                        const int64_t cnt = std::min<int64_t>(8, n - 8 * c), span = 2 * cnt - 1;
                        const int* p = reinterpret_cast<const int*>(s + 64 * c);
                        const __m256 lo = _mm256_castsi256_ps(_mm256_maskload_epi32(p, head8(span)));
                        const __m256 hi = _mm256_castsi256_ps(_mm256_maskload_epi32(p + 8, head8(span - 8)));
                        // (lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6), then 64-bit pairs 0, 2, 1, 3.
                        const __m256d even = _mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88));
                        store_units(dd + 32 * c, cnt, _mm256_castpd_si256(_mm256_permute4x64_pd(even, 0xD8)));
                    }
                }
            }
        }
    }
}

}  // namespace qk
}  // namespace accel_emu

#else  // not x86-64: the portable loops (never reached: no AVX2 path runs here)

namespace accel_emu {
namespace qk {
void conv_x_build_avx2(const Header* h, const ConvGeom& q, const uint8_t* x, const ConvX& cx, int64_t i0, int64_t i1) {
    conv_x_build(h, q, x, cx, i0, i1);
}
}  // namespace qk
}  // namespace accel_emu

#endif
