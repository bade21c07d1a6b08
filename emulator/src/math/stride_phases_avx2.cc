// stride_phases_avx2.cc - the stride phases of a conv input (stride_phases.h) built with AVX2, for the
// packed conv GEMM's AVX2 path: a phase row of stride 2 is the even or the odd inputs of 16, both taken
// from the same two loads (one shuffle within 128-bit lanes, one permute across them).
#include "math/stride_phases.h"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"

namespace accel_emu {

namespace {
#define ACCEL_AVX2 __attribute__((target("avx2")))

// Lanes i of 8 with lo + i in [0, hi), as a maskload mask.
ACCEL_AVX2 inline __m256i inside(int64_t lo, int64_t hi) {
    const int first = static_cast<int>(std::max<int64_t>(0, -lo));
    const int last = static_cast<int>(std::clamp<int64_t>(hi - lo, 0, 8));
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(first), lane),
                               _mm256_cmpgt_epi32(_mm256_set1_epi32(last), lane));
}
}  // namespace

ACCEL_AVX2 void build_stride_phases_avx2(const ConvGeom& q, const float* x, int64_t r0, int64_t rows, int64_t Wq,
                                         int64_t plane, float* dst) {
    const __m256 zero = _mm256_setzero_ps();
    const int64_t span = 8 * q.sw;  // input columns one vector of a phase row takes
    // Phases no tap reads (a 1x1 conv of stride 2 reads phase (0, 0) only) are not built.
    const bool odd_cols = q.sw == 2 && q.kw > 1;
    for (int64_t a = 0; a < q.sh && a < q.kh; ++a) {
        for (int64_t r = r0; r < r0 + rows; ++r) {
            float* d0 = dst + a * q.sw * plane + (r - r0) * Wq;
            float* d1 = d0 + plane;
            const int64_t ih = r * q.sh + a - q.pt;
            if (ih < 0 || ih >= q.H) {
                for (int64_t c = 0; c < Wq; c += 8) {
                    _mm256_storeu_ps(d0 + c, zero);
                    if (odd_cols) _mm256_storeu_ps(d1 + c, zero);
                }
                continue;
            }
            // Address arithmetic in integers: the masked-off lanes may lie before the row.
            const uintptr_t row = reinterpret_cast<uintptr_t>(x + ih * q.W);
            for (int64_t c = 0; c < Wq; c += 8) {
                const int64_t iw = c * q.sw - q.pl;  // the input column of lane 0
                const float* src = reinterpret_cast<const float*>(row + static_cast<uintptr_t>(iw) * sizeof(float));
                const bool whole = iw >= 0 && iw + span <= q.W;
                const __m256 lo = whole ? _mm256_loadu_ps(src) : _mm256_maskload_ps(src, inside(iw, q.W));
                if (q.sw == 1) {
                    _mm256_storeu_ps(d0 + c, lo);
                    continue;
                }
                const __m256 hi = whole ? _mm256_loadu_ps(src + 8) : _mm256_maskload_ps(src + 8, inside(iw + 8, q.W));
                // Within 128-bit lanes: (lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6); then 64-bit pairs 0, 2, 1, 3.
                const __m256 even = _mm256_shuffle_ps(lo, hi, 0x88), odd = _mm256_shuffle_ps(lo, hi, 0xDD);
                _mm256_storeu_ps(d0 + c, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(even), 0xD8)));
                if (odd_cols)
                    _mm256_storeu_ps(d1 + c, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(odd), 0xD8)));
            }
        }
    }
}

}  // namespace accel_emu

#else

namespace accel_emu {
void build_stride_phases_avx2(const ConvGeom&, const float*, int64_t, int64_t, int64_t, int64_t, float*) {}
}  // namespace accel_emu

#endif
