// qbinary_avx512.cc - the rows of qadd and qmul with AVX-512: 16 elements at a time, widened to int32, the
// rule's float arithmetic as fused multiply-adds (add) or a multiply and an add (mul), exactly as the
// scalar form, converted with the default rounding (half to even) and clamped to the 8-bit range.
#include "math/exact_rounding.h"
#include "math/qbinary_row.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"

#define ACCEL_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,fma")))

namespace accel_emu {
namespace {

// 16 bytes at p widened to int32 (or one value broadcast when the stride is 0).
ACCEL_AVX512 inline __m512i load16(const uint8_t* p, int64_t stride, bool is_signed, __mmask16 m) {
    if (stride == 0) return _mm512_set1_epi32(is_signed ? static_cast<int8_t>(*p) : *p);
    const __m128i v = _mm_maskz_loadu_epi8(m, p);
    return is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
}

ACCEL_AVX512 void row(const QBinRule& rule, const void* a, int64_t sa, const void* b, int64_t sb, void* y, int64_t n) {
    const auto* pa = static_cast<const uint8_t*>(a);
    const auto* pb = static_cast<const uint8_t*>(b);
    auto* py = static_cast<uint8_t*>(y);
    const __m512i lo = _mm512_set1_epi32(rule.is_signed ? -128 : 0), hi = _mm512_set1_epi32(rule.is_signed ? 127 : 255);
    const __m512 ra = _mm512_set1_ps(rule.ra), rb = _mm512_set1_ps(rule.rb), f = _mm512_set1_ps(rule.f);
    const __m512 r = _mm512_set1_ps(rule.r), zy = _mm512_set1_ps(rule.zy);
    const __m512i za = _mm512_set1_epi32(rule.za), zb = _mm512_set1_epi32(rule.zb);
    for (int64_t j = 0; j < n; j += 16) {
        const __mmask16 m = n - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - j)) - 1);
        const __m512i ia = load16(pa + j * sa, sa, rule.is_signed, m);
        const __m512i ib = load16(pb + j * sb, sb, rule.is_signed, m);
        __m512 v;
        if (rule.op == QBinOp::Add) {
            v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ia), ra, _mm512_fmadd_ps(_mm512_cvtepi32_ps(ib), rb, f));
        } else {
            const __m512i p = _mm512_mullo_epi32(_mm512_sub_epi32(ia, za), _mm512_sub_epi32(ib, zb));
            v = _mm512_add_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(p), r), zy);
        }
        // An out-of-range or NaN conversion gives INT32_MIN, which clamps to the minimum, as onnxruntime's
        // packing saturates it.
        const __m512i q = _mm512_min_epi32(_mm512_max_epi32(_mm512_cvtps_epi32(v), lo), hi);
        _mm_mask_storeu_epi8(py + j, m, _mm512_cvtepi32_epi8(q));
    }
}

}  // namespace

const QBinRow qbinary_row_avx512 = row;

}  // namespace accel_emu

#else

namespace accel_emu {
const QBinRow qbinary_row_avx512 = nullptr;
}  // namespace accel_emu

#endif
