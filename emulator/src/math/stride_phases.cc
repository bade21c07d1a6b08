// stride_phases.cc - the stride phases of a conv input (stride_phases.h), built with AVX-512: a phase
// row of stride 2 is the even or the odd inputs of 32, both taken from the same two loads.
#include "math/stride_phases.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/avx512_lanes.h"
#include "math/x86_intrinsics.h"

namespace accel_emu {

__attribute__((target("avx512f"))) void build_stride_phases(const ConvGeom& q, const float* x, int64_t r0, int64_t rows,
                                                            int64_t Wq, int64_t plane, float* dst) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const int64_t span = 16 * q.sw;  // input columns one vector of a phase row takes
    // Phases no tap reads (a 1x1 conv of stride 2 reads phase (0, 0) only) are not built.
    const bool odd_cols = q.sw == 2 && q.kw > 1;
    for (int64_t a = 0; a < q.sh && a < q.kh; ++a) {
        for (int64_t r = r0; r < r0 + rows; ++r) {
            float* d0 = dst + a * q.sw * plane + (r - r0) * Wq;
            float* d1 = d0 + plane;
            const int64_t ih = r * q.sh + a - q.pt;
            if (ih < 0 || ih >= q.H) {
                for (int64_t c = 0; c < Wq; c += 16) {
                    _mm512_storeu_ps(d0 + c, zero);
                    if (odd_cols) _mm512_storeu_ps(d1 + c, zero);
                }
                continue;
            }
            // Address arithmetic in integers: the masked-off lanes may lie before the row.
            const uintptr_t row = reinterpret_cast<uintptr_t>(x + ih * q.W);
            for (int64_t c = 0; c < Wq; c += 16) {
                const int64_t iw = c * q.sw - q.pl;  // the input column of lane 0
                const float* src = reinterpret_cast<const float*>(row + static_cast<uintptr_t>(iw) * sizeof(float));
                const bool whole = iw >= 0 && iw + span <= q.W;
                const __m512 lo = whole ? _mm512_loadu_ps(src) : _mm512_maskz_loadu_ps(lanes16::inside(iw, q.W), src);
                if (q.sw == 1) {
                    _mm512_storeu_ps(d0 + c, lo);
                    continue;
                }
                const __m512 hi =
                    whole ? _mm512_loadu_ps(src + 16) : _mm512_maskz_loadu_ps(lanes16::inside(iw + 16, q.W), src + 16);
                _mm512_storeu_ps(d0 + c, _mm512_permutex2var_ps(lo, evens, hi));
                if (odd_cols) _mm512_storeu_ps(d1 + c, _mm512_permutex2var_ps(lo, odds, hi));
            }
        }
    }
}

}  // namespace accel_emu

#else  // the same phases in plain C++ (aarch64's packed conv GEMM, conv_gemm_neon.cc), each row exactly Wq long

#include <algorithm>
#include <cstring>

namespace accel_emu {

void build_stride_phases(const ConvGeom& q, const float* x, int64_t r0, int64_t rows, int64_t Wq, int64_t plane,
                         float* dst) {
    // Phases no tap reads (a 1x1 conv of stride 2 reads phase (0, 0) only) are not built.
    const int64_t col_phases = q.sw == 2 && q.kw > 1 ? 2 : 1;
    for (int64_t a = 0; a < q.sh && a < q.kh; ++a)
        for (int64_t b = 0; b < col_phases; ++b)
            for (int64_t r = r0; r < r0 + rows; ++r) {
                float* d = dst + (a * q.sw + b) * plane + (r - r0) * Wq;
                const int64_t ih = r * q.sh + a - q.pt;
                if (ih < 0 || ih >= q.H) {
                    std::fill(d, d + Wq, 0.f);
                    continue;
                }
                // Phase column c is input column c * sw + b - pl: inside the input for c in [c0, c1).
                const int64_t off = b - q.pl;
                const int64_t c0 = std::min(Wq, std::max<int64_t>(0, (-off + q.sw - 1) / q.sw));
                const int64_t c1 = std::max(c0, std::min(Wq, (q.W - off + q.sw - 1) / q.sw));
                const float* src = x + ih * q.W + off;  // src[c * sw] is phase column c
                std::fill(d, d + c0, 0.f);
                if (q.sw == 1) std::memcpy(d + c0, src + c0, static_cast<size_t>(c1 - c0) * sizeof(float));
                else
                    for (int64_t c = c0; c < c1; ++c) d[c] = src[c * q.sw];
                std::fill(d + c1, d + Wq, 0.f);
            }
}

}  // namespace accel_emu

#endif
