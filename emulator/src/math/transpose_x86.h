// transpose_x86.h - in-register transposes of 32-bit elements, for the kernels that compute with one dimension
// in vector lanes and store along the other (the small-plane convs, the int8 GEMMs' transposed outputs). Each
// carries its own target attribute. Empty off x86-64 gcc and clang.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"

namespace accel_emu {

// r[i] = column i of the 16x16 matrix whose rows were r[0..15].
__attribute__((target("avx512f"))) inline void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // u[4i + j], 128-bit lane l: rows 4i..4i+3 of column 4l + j.
    __m512 u[16];
    for (int i = 0; i < 4; ++i) {
        const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
        const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
        u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
        u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
        u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
    }
    // Column 4l + j is lane l of u[j], u[4 + j], u[8 + j], u[12 + j] in turn: a 4x4 transpose of 128-bit lanes.
    for (int j = 0; j < 4; ++j) {
        const __m512 s0 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x44), s1 = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xEE);
        const __m512 s2 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x44);
        const __m512 s3 = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xEE);
        r[j] = _mm512_shuffle_f32x4(s0, s2, 0x88);
        r[4 + j] = _mm512_shuffle_f32x4(s0, s2, 0xDD);
        r[8 + j] = _mm512_shuffle_f32x4(s1, s3, 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(s1, s3, 0xDD);
    }
}

// The same of 32-bit integers (the bits move as they are).
__attribute__((target("avx512f"))) inline void transpose16(__m512i r[16]) {
    __m512 f[16];
    for (int i = 0; i < 16; ++i) f[i] = _mm512_castsi512_ps(r[i]);
    transpose16(f);
    for (int i = 0; i < 16; ++i) r[i] = _mm512_castps_si512(f[i]);
}

// c[t] = column t of the 8x8 matrix whose rows are c[0..7] (32-bit elements).
__attribute__((target("avx2"))) inline void transpose8x8_epi32(__m256i* c) {
    __m256i a[8], b[8];
    for (int i = 0; i < 8; i += 2) {
        a[i] = _mm256_unpacklo_epi32(c[i], c[i + 1]);
        a[i + 1] = _mm256_unpackhi_epi32(c[i], c[i + 1]);
    }
    for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; ++h) {
            b[i + h] = _mm256_unpacklo_epi64(a[i + h], a[i + h + 2]);
            b[i + h + 2] = _mm256_unpackhi_epi64(a[i + h], a[i + h + 2]);
        }
    // b[0..3]: rows 0-3's columns {0,4}, {1,5}, {2,6}, {3,7} by 128-bit lane, in the order 0, 2, 1, 3 of
    // the columns' pairs; b[4..7] the same of rows 4-7.
    const int order[4] = {0, 2, 1, 3};
    for (int t = 0; t < 4; ++t) {
        c[t] = _mm256_permute2x128_si256(b[order[t]], b[order[t] + 4], 0x20);
        c[t + 4] = _mm256_permute2x128_si256(b[order[t]], b[order[t] + 4], 0x31);
    }
}

}  // namespace accel_emu

#endif
