// fast_math.h - a branch-free expf the compiler can vectorize (libm's expf stops the vectorizer), and
// reductions written with 16 partial results: without -ffast-math the compiler may not reassociate a
// float sum or max itself, so a plain loop stays scalar.
// Cephes-style: x = n*ln2 + r, |r| <= ln2/2, degree-6 polynomial for e^r, then scale by 2^n through
// the exponent bits. Relative error about 2e-7; NaN stays NaN. Inputs are clamped to [-87.3, 88] so
// 2^n stays a normal float (results saturate at about 1.2e-38 and 1.65e38 instead of 0 and inf).
#pragma once

#include <cstdint>
#include <cstring>

namespace accel_emu {
namespace kern {

__attribute__((always_inline)) inline float exp_approx(float x) {
    x = x > 88.0f ? 88.0f : x;  // written so that a NaN passes through
    x = x < -87.3f ? -87.3f : x;
    const float magic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer in the low bits
    float fn = x * 1.44269504088896341f + magic;
    uint32_t nb;
    std::memcpy(&nb, &fn, 4);
    fn -= magic;
    float r = x - fn * 0.693359375f;
    r = r - fn * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    // Unsigned arithmetic: the low bits of nb hold n + 2^22 (mod 2^32); shift n + 127 into the exponent.
    uint32_t sb = (nb - 0x4B400000u + 127u) << 23;
    float scale;
    std::memcpy(&scale, &sb, 4);
    return p * scale;
}

// Sum of x[0, n).
__attribute__((always_inline)) inline float sum_reduce(const float* x, int64_t n) {
    float p[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; ++k) p[k] += x[i + k];
    for (int k = 0; i < n; ++i, ++k) p[k] += x[i];
    for (int w = 8; w >= 1; w /= 2)
        for (int k = 0; k < w; ++k) p[k] += p[k + w];
    return p[0];
}

// Max of x[0, n), n >= 1 (a NaN may or may not propagate).
__attribute__((always_inline)) inline float max_reduce(const float* x, int64_t n) {
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
