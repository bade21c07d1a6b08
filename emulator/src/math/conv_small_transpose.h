// conv_small_transpose.h - 16x16 float transposes with AVX-512, for the small-plane kernels that compute with
// channels in vector lanes (conv_small.cc, conv_small_depthwise.cc) and read or write planes in NCHW. Include
// only inside `#if defined(__x86_64__) && defined(__GNUC__)`.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math/avx512_lanes.h"
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

// y[m][p] = T[p][m] for channels m < mc and positions p < np (T's rows ldt floats apart, y's P).
__attribute__((target("avx512f"))) inline void store_transposed(const float* T, int64_t ldt, int64_t np, int64_t mc,
                                                                float* y, int64_t P) {
    for (int64_t m = 0; m < mc; m += 16) {
        const int64_t mn = std::min<int64_t>(16, mc - m);
        for (int64_t p = 0; p < np; p += 16) {
            const int64_t n = std::min<int64_t>(16, np - p);
            __m512 r[16];
            for (int64_t i = 0; i < 16; ++i)
                r[i] = i < n ? _mm512_loadu_ps(T + (p + i) * ldt + m) : _mm512_setzero_ps();
            transpose16(r);
            const __mmask16 mask = lanes16::first(n);
            for (int64_t i = 0; i < mn; ++i) _mm512_mask_storeu_ps(y + (m + i) * P + p, mask, r[i]);
        }
    }
}

}  // namespace accel_emu
