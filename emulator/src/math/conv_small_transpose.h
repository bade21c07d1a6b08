// conv_small_transpose.h - planes transposed with AVX-512 (transpose_x86.h), for the small-plane kernels that compute
// with channels in vector lanes (conv_small.cc, conv_small_depthwise.cc) and read or write planes in NCHW. Include only
// inside `#if defined(__x86_64__) && defined(__GNUC__)`.
#pragma once

#include <algorithm>
#include <cstdint>

#include "math/avx512_lanes.h"
#include "math/transpose_x86.h"
#include "math/x86_intrinsics.h"

namespace accel_emu {

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
