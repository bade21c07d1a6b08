// qgemm_avx512.h - the epilogue in AVX-512 (qgemm_impl.h defines the value; this matches it bit for bit),
// shared by the VNNI and AMX paths and the depthwise kernel. Included only by files built on x86-64 with
// gcc or clang; every function carries its own target attribute.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"

#include "math/qgemm_impl.h"

#define ACCEL_AVX512_BW __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

namespace accel_emu {
namespace qk {

// One output row's parameters, broadcast.
struct FixedEpi { __m512i pre, mult, post, nmult, npost, lo, hi; };

struct RowEpi {
    QOut out;
    __m512i rowc, colc, yz;
    __m512 s, fb, lo, hi;
    FixedEpi fx;
};

// Fixed's parameters of row m, broadcast.
ACCEL_AVX512_BW inline FixedEpi fixed_row(const Header* h, int64_t m) {
    return {_mm512_set1_epi32(fixed_arr(h, 0)[m]),
            _mm512_set1_epi32(fixed_arr(h, 1)[m]),
            _mm512_set1_epi32(fixed_arr(h, 2)[m]),
            _mm512_set1_epi32(fixed_arr(h, 3)[m]),
            _mm512_set1_epi32(fixed_arr(h, 4)[m]),
            _mm512_set1_epi32(h->ilo),
            _mm512_set1_epi32(h->ihi)};
}

// Fixed's parameters of rows [m0, m0 + 16) in the lanes of mask (the others 0).
ACCEL_AVX512_BW inline FixedEpi fixed_lanes(const Header* h, int64_t m0, __mmask16 mask) {
    return {_mm512_maskz_loadu_epi32(mask, fixed_arr(h, 0) + m0),
            _mm512_maskz_loadu_epi32(mask, fixed_arr(h, 1) + m0),
            _mm512_maskz_loadu_epi32(mask, fixed_arr(h, 2) + m0),
            _mm512_maskz_loadu_epi32(mask, fixed_arr(h, 3) + m0),
            _mm512_maskz_loadu_epi32(mask, fixed_arr(h, 4) + m0),
            _mm512_set1_epi32(h->ilo),
            _mm512_set1_epi32(h->ihi)};
}

// Fixed (fixed_value) of 8 lanes widened to 64 bits: v the floored sums, m the multipliers, s the shifts.
ACCEL_AVX512_BW inline __m256i fixed_half(__m256i v, __m256i m, __m256i s, __m512i lo, __m512i hi) {
    const __m512i s64 = _mm512_cvtepu32_epi64(s);
    const __m512i p = _mm512_mul_epi32(_mm512_cvtepi32_epi64(v), _mm512_cvtepi32_epi64(m));
    const __m512i half = _mm512_srli_epi64(_mm512_sllv_epi64(_mm512_set1_epi64(1), s64), 1);  // 2^(s-1), 0 for s 0
    const __m512i r = _mm512_srav_epi64(_mm512_add_epi64(p, half), s64);
    return _mm512_cvtepi64_epi32(_mm512_min_epi64(_mm512_max_epi64(r, lo), hi));
}

// One vector of corrected sums a written as Fixed's bytes to dst's lanes in mask. Not inlined: the tiles
// instantiate it for every row and vector, which made the file take minutes to build with sanitizers.
ACCEL_AVX512_BW __attribute__((noinline)) inline void fixed_vec(__m512i a, const FixedEpi& f, __m512i yz, void* dst,
                                                                __mmask16 mask) {
    const __m512i v = _mm512_srav_epi32(a, f.pre);
    const __mmask16 neg = _mm512_cmplt_epi32_mask(v, _mm512_setzero_si512());
    const __m512i m = _mm512_mask_blend_epi32(neg, f.mult, f.nmult), s = _mm512_mask_blend_epi32(neg, f.post, f.npost);
    const __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(f.lo));
    const __m512i hi = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(f.hi));
    const __m256i r0 =
        fixed_half(_mm512_castsi512_si256(v), _mm512_castsi512_si256(m), _mm512_castsi512_si256(s), lo, hi);
    const __m256i r1 = fixed_half(_mm512_extracti64x4_epi64(v, 1), _mm512_extracti64x4_epi64(m, 1),
                                  _mm512_extracti64x4_epi64(s, 1), lo, hi);
    const __m512i r = _mm512_add_epi32(_mm512_inserti64x4(_mm512_castsi256_si512(r0), r1, 1), yz);
    _mm_mask_storeu_epi8(dst, mask, _mm512_cvtepi32_epi8(r));
}

ACCEL_AVX512_BW inline RowEpi row_epi(const Header* h, int64_t m) {
    RowEpi e;
    e.out = h->out;
    e.rowc = _mm512_set1_epi32(rowc(h)[m]);
    e.colc = _mm512_set1_epi32(colc(h)[m]);
    e.yz = _mm512_set1_epi32(h->y_zero);
    e.s = _mm512_set1_ps(scale(h)[m]);
    e.fb = _mm512_set1_ps(fbias(h)[m]);
    e.lo = _mm512_set1_ps(h->lo);
    e.hi = _mm512_set1_ps(h->hi);
    if (h->out == QOut::Fixed) e.fx = fixed_row(h, m);
    return e;
}

// Rows [m0, m0 + 16) in the lanes (those in mask; the others 0), for a vector of one column's outputs.
ACCEL_AVX512_BW inline RowEpi lanes_epi(const Header* h, int64_t m0, __mmask16 mask) {
    RowEpi e;
    e.out = h->out;
    e.rowc = _mm512_maskz_loadu_epi32(mask, rowc(h) + m0);
    e.colc = _mm512_maskz_loadu_epi32(mask, colc(h) + m0);
    e.yz = _mm512_set1_epi32(h->y_zero);
    e.s = _mm512_maskz_loadu_ps(mask, scale(h) + m0);
    e.fb = _mm512_maskz_loadu_ps(mask, fbias(h) + m0);
    e.lo = _mm512_set1_ps(h->lo);
    e.hi = _mm512_set1_ps(h->hi);
    if (h->out == QOut::Fixed) e.fx = fixed_lanes(h, m0, mask);
    return e;
}

// Lanes [0, n) of a 16-lane vector.
ACCEL_AVX512_BW inline __mmask16 head_mask(int64_t n) {
    return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

// One vector of corrected sums a (16 outputs of one row, or one column's rows when s and fb hold a
// value per lane) written to dst's lanes in mask, as OUT's elements.
template <QOut OUT>
ACCEL_AVX512_BW inline void epi_vec(__m512i a, __m512 s, __m512 fb, __m512 lo, __m512 hi, __m512i yz, void* dst,
                                    __mmask16 mask) {
    if (OUT == QOut::Int32) {
        _mm512_mask_storeu_epi32(dst, mask, a);
    } else if (OUT == QOut::Float) {
        // The _round forms are builtins gcc never fuses into an FMA (it would fuse _mm512_mul_ps + add).
        const __m512 p = _mm512_mul_round_ps(_mm512_cvtepi32_ps(a), s, _MM_FROUND_CUR_DIRECTION);
        _mm512_mask_storeu_ps(dst, mask, _mm512_add_round_ps(p, fb, _MM_FROUND_CUR_DIRECTION));
    } else {
        // MAXPS(x, lo) gives lo for a NaN x, as the scalar f > lo ? f : lo does.
        const __m512 c = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(a), s), lo), hi);
        const __m512i r = _mm512_add_epi32(_mm512_cvtps_epi32(c), yz);  // in the output type's range
        _mm_mask_storeu_epi8(dst, mask, _mm512_cvtepi32_epi8(r));
    }
}

// The sums s of 16 columns (colsum: their column sums, or null when h has none) corrected and written to
// dst's lanes in mask (elements of the output type).
ACCEL_AVX512_BW inline void epi_store(const RowEpi& e, __m512i s, const int32_t* colsum, void* dst, __mmask16 mask) {
    __m512i a = _mm512_add_epi32(s, e.rowc);
    if (colsum) a = _mm512_add_epi32(a, _mm512_mullo_epi32(e.colc, _mm512_loadu_si512(colsum)));
    switch (e.out) {
        case QOut::Int32: epi_vec<QOut::Int32>(a, e.s, e.fb, e.lo, e.hi, e.yz, dst, mask); return;
        case QOut::Float: epi_vec<QOut::Float>(a, e.s, e.fb, e.lo, e.hi, e.yz, dst, mask); return;
        case QOut::Fixed: fixed_vec(a, e.fx, e.yz, dst, mask); return;
        case QOut::Q8: break;
    }
    epi_vec<QOut::Q8>(a, e.s, e.fb, e.lo, e.hi, e.yz, dst, mask);
}

}  // namespace qk
}  // namespace accel_emu

#endif
