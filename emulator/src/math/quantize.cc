// quantize.cc - quantize, dequantize and table lookup loops over the scalar rules of quantize.h; plain
// loops the compiler vectorizes (the rules are exact, so any vector form gives the same bytes).
#include "math/quantize.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/exact_rounding.h"
#include "math/x86_intrinsics.h"
#endif

namespace accel_emu {

namespace {

template <typename Q>
void quantize_rows(const float* x, int64_t outer, int64_t channels, int64_t inner, const float* scale,
                   const int32_t* zero, bool is_signed, Q* y) {
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t c = 0; c < channels; ++c) {
            const float s = scale[c];
            const int32_t z = zero[c];
            const float lo = static_cast<float>(qmin_of(is_signed) - z),
                        hi = static_cast<float>(qmax_of(is_signed) - z);
            const int64_t base = (o * channels + c) * inner;
            for (int64_t i = 0; i < inner; ++i) y[base + i] = static_cast<Q>(clamp_round(x[base + i] / s, lo, hi) + z);
        }
}

#if defined(__x86_64__) && defined(__GNUC__)
// One channel's run of quantize_rows with AVX-512: divide, clamp (maxps/minps, as the scalar form), convert
// with the default rounding, add the zero point, narrow.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void quantize_run_avx512(const float* x, int64_t n, float s,
                                                                              int32_t z, bool is_signed, uint8_t* y) {
    const __m512 vs = _mm512_set1_ps(s);
    const __m512 lo = _mm512_set1_ps(static_cast<float>(qmin_of(is_signed) - z));
    const __m512 hi = _mm512_set1_ps(static_cast<float>(qmax_of(is_signed) - z));
    const __m512i vz = _mm512_set1_epi32(z);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
        __m512 v = _mm512_div_ps(_mm512_maskz_loadu_ps(m, x + i), vs);
        v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
        const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(v), vz);
        _mm_mask_storeu_epi8(y + i, m, _mm512_cvtepi32_epi8(q));
    }
}

// One channel's run of dequantize_rows of int8 or uint8 with AVX-512: widen, subtract, convert, multiply.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void dequantize_run_avx512(const uint8_t* x, int64_t n, float s,
                                                                                int32_t z, bool is_signed, float* y) {
    const __m512 vs = _mm512_set1_ps(s);
    const __m512i vz = _mm512_set1_epi32(z);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
        const __m128i v = _mm_maskz_loadu_epi8(m, x + i);
        const __m512i w = is_signed ? _mm512_cvtepi8_epi32(v) : _mm512_cvtepu8_epi32(v);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(w, vz)), vs));
    }
}

// widen_range with AVX-512: per lane l = x < l ? x : l (minps(x, l): a NaN x keeps l), as the scalar loop,
// then the lanes' reduction. min and max are exact and no lane ever holds a NaN or a -0 the scalar loop
// would not take, so the bounds are the scalar loop's bits.
__attribute__((target("avx512f"))) void widen_range_avx512(const float* x, int64_t n, float* lo, float* hi) {
    __m512 l = _mm512_set1_ps(*lo), h = _mm512_set1_ps(*hi);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        l = _mm512_min_ps(v, l);
        h = _mm512_max_ps(v, h);
    }
    alignas(64) float ls[16], hs[16];
    _mm512_store_ps(ls, l);
    _mm512_store_ps(hs, h);
    float rl = *lo, rh = *hi;
    for (int k = 0; k < 16; ++k) {
        rl = ls[k] < rl ? ls[k] : rl;
        rh = hs[k] > rh ? hs[k] : rh;
    }
    for (; i < n; ++i) {
        rl = x[i] < rl ? x[i] : rl;
        rh = x[i] > rh ? x[i] : rh;
    }
    *lo = rl, *hi = rh;
}

// table[x[i]] for 64 bytes at a time: two two-register byte permutes cover the 256 entries, the top bit of
// each index picks between them.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void lookup_avx512vbmi(const uint8_t table[256],
                                                                              const uint8_t* x, uint8_t* y, int64_t n) {
    const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
    const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
    for (int64_t i = 0; i < n; i += 64) {
        const __mmask64 m = n - i >= 64 ? ~__mmask64(0) : (__mmask64(1) << (n - i)) - 1;
        const __m512i v = _mm512_maskz_loadu_epi8(m, x + i);
        const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
        _mm512_mask_storeu_epi8(y + i, m, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
    }
}
#endif

template <typename T>
void dequantize_rows(const T* x, int64_t outer, int64_t channels, int64_t inner, const float* scale,
                     const int32_t* zero, float* y) {
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t c = 0; c < channels; ++c) {
            const float s = scale[c];
            const int32_t z = zero[c];
            const int64_t base = (o * channels + c) * inner;
            // x - z in int64: an int32 tensor's difference may not fit int32, and onnxruntime's is exact.
            for (int64_t i = 0; i < inner; ++i)
                y[base + i] = static_cast<float>(static_cast<int64_t>(x[base + i]) - z) * s;
        }
}

}  // namespace

void quantize_linear(const float* x, int64_t outer, int64_t channels, int64_t inner, const float* scale,
                     const int32_t* zero, bool is_signed, void* y, bool vector) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (vector) {
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t c = 0; c < channels; ++c) {
                const int64_t base = (o * channels + c) * inner;
                quantize_run_avx512(x + base, inner, scale[c], zero[c], is_signed, static_cast<uint8_t*>(y) + base);
            }
        return;
    }
#endif
    (void)vector;
    if (is_signed) quantize_rows(x, outer, channels, inner, scale, zero, true, static_cast<int8_t*>(y));
    else quantize_rows(x, outer, channels, inner, scale, zero, false, static_cast<uint8_t*>(y));
}

void dequantize_linear(const void* x, int elem_bytes, bool is_signed, int64_t outer, int64_t channels, int64_t inner,
                       const float* scale, const int32_t* zero, float* y, bool vector) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (vector && elem_bytes == 1) {
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t c = 0; c < channels; ++c) {
                const int64_t base = (o * channels + c) * inner;
                dequantize_run_avx512(static_cast<const uint8_t*>(x) + base, inner, scale[c], zero[c], is_signed,
                                      y + base);
            }
        return;
    }
#endif
    (void)vector;
    if (elem_bytes == 4) dequantize_rows(static_cast<const int32_t*>(x), outer, channels, inner, scale, zero, y);
    else if (is_signed) dequantize_rows(static_cast<const int8_t*>(x), outer, channels, inner, scale, zero, y);
    else dequantize_rows(static_cast<const uint8_t*>(x), outer, channels, inner, scale, zero, y);
}

void widen_range(const float* x, int64_t n, float* lo, float* hi, bool vector) {
#if defined(__x86_64__) && defined(__GNUC__)
    if (vector) {
        widen_range_avx512(x, n, lo, hi);
        return;
    }
#endif
    (void)vector;
    float l = *lo, h = *hi;
    for (int64_t i = 0; i < n; ++i) {
        l = x[i] < l ? x[i] : l;
        h = x[i] > h ? x[i] : h;
    }
    *lo = l, *hi = h;
}

void dynamic_qparams(const float* x, int64_t n, float* scale, uint8_t* zero) {
    float lo = 0.f, hi = 0.f;
    widen_range(x, n, &lo, &hi);
    dynamic_qparams_of_range(lo, hi, scale, zero);
}

void dynamic_qparams_of_range(float lo, float hi, float* scale, uint8_t* zero) {
    const float s = hi == lo ? 1.f : (hi - lo) / 255.f;
    float z = 0.f - lo / s;
    z = z < 0.f ? 0.f : z > 255.f ? 255.f : z;
    *scale = s;
    *zero = static_cast<uint8_t>(std::nearbyint(z));
}

void lookup_table(const uint8_t table[256], const uint8_t* x, uint8_t* y, int64_t n, bool vector) {
#if defined(__x86_64__) && defined(__GNUC__)
    static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
    if (vector && vbmi) {
        lookup_avx512vbmi(table, x, y, n);
        return;
    }
#endif
    (void)vector;
    for (int64_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace accel_emu
