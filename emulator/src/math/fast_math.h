// fast_math.h - branch-free float32 exp, expm1, log, log1p, tanh and erf the compiler can vectorize
// (libm's calls stop the vectorizer), and reductions written with 16 partial results: without
// -ffast-math the compiler may not reassociate a float sum or max itself, so a plain loop stays scalar.
//
// Every function takes the whole float range, special values included (NaN stays NaN; overflow gives
// inf, underflow subnormals then 0, as libm), and is within a few ulp of the correctly rounded result
// (relative error below 1e-6): the polynomials were fitted for this header (weighted least squares
// against double precision references) and are evaluated where their terms do not cancel.
#pragma once

#include <cstdint>
#include <cstring>

namespace accel_emu {
namespace kern {

#define ACCEL_MATH_INLINE __attribute__((always_inline)) inline

ACCEL_MATH_INLINE uint32_t float_bits(float x) {
    uint32_t b;
    std::memcpy(&b, &x, 4);
    return b;
}
ACCEL_MATH_INLINE float bits_float(uint32_t b) {
    float x;
    std::memcpy(&x, &b, 4);
    return x;
}
// 2^n for -126 <= n <= 127.
ACCEL_MATH_INLINE float pow2i(int32_t n) { return bits_float(static_cast<uint32_t>(n + 127) << 23); }

constexpr float kInf = __builtin_huge_valf();
constexpr float kLn2Hi = 0.693359375f;  // ln 2 = kLn2Hi + kLn2Lo; kLn2Hi has few bits, so n * kLn2Hi is exact
constexpr float kLn2Lo = -2.12194440e-4f;

// x = n*ln2 + r with n an integer (as a float and as an int) and |r| <= ln2/2; |x| < 2^22.
struct ExpArg {
    float r;
    int32_t n;
};
ACCEL_MATH_INLINE ExpArg exp_split(float x) {
    const float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
    float fn = x * 1.44269504088896341f + magic;
    // Two's complement: the low bits hold n + 2^22.
    const int32_t n = static_cast<int32_t>(float_bits(fn) - 0x4B400000u);
    fn -= magic;
    float r = x - fn * kLn2Hi;
    r = r - fn * kLn2Lo;
    return {r, n};
}

// e^r - 1 for |r| <= ln2/2, without cancellation.
ACCEL_MATH_INLINE float expm1_reduced(float r) {
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    return p * r * r + r;
}

// e^x over the whole range: inf past 88.72, subnormals below -87.3, 0 below -103.9.
ACCEL_MATH_INLINE float exp_approx(float x) {
    x = x > 89.0f ? 89.0f : x;  // written so that a NaN passes through
    x = x < -104.0f ? -104.0f : x;
    const ExpArg a = exp_split(x);
    const float p = expm1_reduced(a.r) + 1.0f;
    // 2^n in two normal factors (n is -150 .. 129): the product overflows or goes subnormal as it should.
    const int32_t n1 = a.n >> 1;
    return p * pow2i(n1) * pow2i(a.n - n1);
}

// e^x - 1, accurate near 0; meant for x <= 88 (larger x gives about 1.6e38, not inf).
ACCEL_MATH_INLINE float expm1_approx(float x) {
    x = x > 88.0f ? 88.0f : x;
    x = x < -88.0f ? -88.0f : x;  // e^x - 1 rounds to -1 long before
    const ExpArg a = exp_split(x);
    const float s = a.n < -126 ? 0.f : pow2i(a.n);  // n = -127 only at the clamp, where s is negligible
    return s * expm1_reduced(a.r) + (s - 1.0f);
}

// log(x): NaN for x < 0, -inf at 0, inf at inf.
ACCEL_MATH_INLINE float log_approx(float x) {
    // Subnormals are scaled into the normal range first.
    const bool tiny = x < 1.17549435e-38f;
    const float xs = tiny ? x * 8388608.0f : x;  // 2^23
    const uint32_t b = float_bits(xs);
    int32_t e = static_cast<int32_t>(b >> 23) - 127 - (tiny ? 23 : 0);
    float m = bits_float((b & 0x007FFFFFu) | 0x3F800000u);  // [1, 2)
    const bool high = m > 1.41421356f;
    m = high ? m * 0.5f : m;  // [sqrt(1/2), sqrt(2)]
    e += high ? 1 : 0;
    // log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: 2s + 2s t R(t), t = s^2.
    const float f = m - 1.0f;
    const float s = f / (m + 1.0f);
    const float t = s * s;
    float r = 1.479025555e-01f;
    r = r * t + 1.999438203e-01f;
    r = r * t + 3.333334255e-01f;
    const float fe = static_cast<float>(e);
    const float lg = fe * kLn2Hi + (2.0f * s * t * r + (2.0f * s + fe * kLn2Lo));
    float y = x == 0.f ? -kInf : lg;
    y = x < 0.f ? __builtin_nanf("") : y;
    return x == kInf ? kInf : (x != x ? x : y);
}

// log(1 + u) for u >= 0, accurate for small u (w - 1 is exact, and log(w) / (w - 1) is smooth).
ACCEL_MATH_INLINE float log1p_approx(float u) {
    const float w = 1.0f + u;
    const float d = w - 1.0f;
    const float l = log_approx(w);
    return d == 0.f ? u : (w == kInf ? kInf : l * (u / d));
}

// tanh(x): x + x t P(t) (t = x^2) for |x| < 0.625, else 1 - 2 / (e^2|x| + 1) with x's sign.
ACCEL_MATH_INLINE float tanh_approx(float x) {
    const float a = __builtin_fabsf(x);
    const float t = x * x;
    float p = -6.100512335e-03f;
    p = p * t + 2.100050842e-02f;
    p = p * t + -5.385188147e-02f;
    p = p * t + 1.333278023e-01f;
    p = p * t + -3.333332925e-01f;
    const float small = x + x * t * p;
    const float big = __builtin_copysignf(1.0f - 2.0f / (exp_approx(2.0f * a) + 1.0f), x);
    return a < 0.625f ? small : big;
}

// erf(x) for |x| <= 1: x P(x^2).
ACCEL_MATH_INLINE float erf_small(float x) {
    const float t = x * x;
    float p = 7.853857686e-05f;
    p = p * t + -8.010192515e-04f;
    p = p * t + 5.188327559e-03f;
    p = p * t + -2.685381187e-02f;
    p = p * t + 1.128358515e-01f;
    p = p * t + -3.761262582e-01f;
    p = p * t + 1.128379166e+00f;
    return x * p;
}

// erfc(a) for a >= 1 (a NaN stays NaN): e^(-a^2) Q(1/a), Q fitted over 1 <= a <= 10 in 1/a - 0.55;
// past 10, e^(-a^2) is below the smallest subnormal and Q's argument is clamped (to stay bounded).
ACCEL_MATH_INLINE float erfc_big(float a) {
    float c = a > 10.0f ? 10.0f : a;
    c = c < 1.0f ? 1.0f : c;
    const float s = 1.0f / c - 0.55f;
    float q = 7.268181376e-02f;
    q = q * s + -4.365182965e-02f;
    q = q * s + -3.013176288e-02f;
    q = q * s + 6.119162189e-02f;
    q = q * s + -6.862627673e-02f;
    q = q * s + 4.467172976e-02f;
    q = q * s + 3.368578660e-02f;
    q = q * s + -1.812275159e-01f;
    q = q * s + 4.088347721e-01f;
    q = q * s + 2.762943542e-01f;
    return exp_approx(-(c * c)) * (a > 10.0f ? 0.f : q);
}

ACCEL_MATH_INLINE float erf_approx(float x) {
    const float a = __builtin_fabsf(x);
    const float big = __builtin_copysignf(1.0f - erfc_big(a), x);
    return a <= 1.0f ? erf_small(x) : big;
}

// 1 + erf(z), accurate also where erf(z) is near -1 (1 + erf(z) = erfc(-z) there).
ACCEL_MATH_INLINE float one_plus_erf(float z) {
    const float a = __builtin_fabsf(z);
    const float tail = erfc_big(a);
    const float big = z > 0.f ? 2.0f - tail : tail;
    return a <= 1.0f ? 1.0f + erf_small(z) : big;
}

// Sum of f(x[i]) for i < n.
template <class F>
ACCEL_MATH_INLINE float sum_map(const float* x, int64_t n, F f) {
    float p[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; ++k) p[k] += f(x[i + k]);
    for (int k = 0; i < n; ++i, ++k) p[k] += f(x[i]);
    for (int w = 8; w >= 1; w /= 2)
        for (int k = 0; k < w; ++k) p[k] += p[k + w];
    return p[0];
}

struct Same {
    ACCEL_MATH_INLINE float operator()(float v) const { return v; }
};

// Sum of x[0, n).
ACCEL_MATH_INLINE float sum_reduce(const float* x, int64_t n) { return sum_map(x, n, Same{}); }

// Max of x[0, n), n >= 1 (a NaN may or may not propagate).
ACCEL_MATH_INLINE float max_reduce(const float* x, int64_t n) {
    float p[16];
    for (int k = 0; k < 16; ++k) p[k] = x[0];
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; ++k) p[k] = x[i + k] > p[k] ? x[i + k] : p[k];
    for (int k = 0; i < n; ++i, ++k) p[k] = x[i] > p[k] ? x[i] : p[k];
    for (int w = 8; w >= 1; w /= 2)
        for (int k = 0; k < w; ++k) p[k] = p[k + w] > p[k] ? p[k + w] : p[k];
    return p[0];
}

}  // namespace kern
}  // namespace accel_emu
