// activation.cc - the fused activations of FORMAT.md (codes 0-42), applied in place after an op or from
// one buffer to another (the activation op), and the conv epilogue (bias + activation over rows of a GEMM
// result while they are still in cache). Every function is a branch-free map the compiler vectorizes,
// except a pow with an exponent that has no cheaper exact form (libm's powf) and the trigonometric and
// hyperbolic functions (libm's).
#include "math/activation.h"

#include <cstddef>
#include <cstdint>
#include <type_traits>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "math/fast_math.h"
#include "math/math_util.h"

namespace accel_emu {

namespace {

struct Identity {
    ACCEL_INLINE float operator()(float x) const { return x; }
};
struct Relu {  // NaN stays NaN (as onnxruntime, NumPy and torch): only a number below 0 becomes 0
    ACCEL_INLINE float operator()(float x) const { return x < 0.f ? 0.f : x; }
};
struct Clip {  // min(max(x, lo), hi), in that order (hi wins when lo > hi, as in ONNX)
    float lo, hi;
    ACCEL_INLINE float operator()(float x) const {
        float t = x < lo ? lo : x;
        return t > hi ? hi : t;
    }
};
struct Sigmoid {
    ACCEL_INLINE float operator()(float x) const { return 1.f / (1.f + kern::exp_approx(-x)); }
};
struct HardSigmoid {
    float a, b;
    ACCEL_INLINE float operator()(float x) const {
        float t = a * x + b;
        t = t < 0.f ? 0.f : t;
        return t > 1.f ? 1.f : t;
    }
};
struct HardSwish {
    ACCEL_INLINE float operator()(float x) const {
        float t = x * (1.f / 6.f) + 0.5f;
        t = t < 0.f ? 0.f : t;
        return x * (t > 1.f ? 1.f : t);
    }
};
struct LeakyRelu {
    float a;
    ACCEL_INLINE float operator()(float x) const { return x >= 0.f ? x : a * x; }
};
struct Tanh {
    ACCEL_INLINE float operator()(float x) const { return kern::tanh_approx(x); }
};
struct Silu {
    ACCEL_INLINE float operator()(float x) const { return x / (1.f + kern::exp_approx(-x)); }
};
struct Gelu {  // 1 + erf(z) computed as erfc(-z) where erf(z) is near -1, keeping the negative tail exact
    ACCEL_INLINE float operator()(float x) const { return 0.5f * x * kern::one_plus_erf(x * 0.707106781f); }
};
struct GeluTanh {  // 0.5 (1 + tanh(u)) = 1 / (1 + e^(-2u)), which does not cancel for negative x
    ACCEL_INLINE float operator()(float x) const {
        const float u = 0.797884561f * (x + 0.044715f * x * x * x);
        return x / (1.f + kern::exp_approx(-2.f * u));
    }
};
struct Elu {
    float a;
    ACCEL_INLINE float operator()(float x) const { return x >= 0.f ? x : a * kern::expm1_approx(x); }
};
struct Selu {
    float a, g;
    ACCEL_INLINE float operator()(float x) const { return x > 0.f ? g * x : g * (a * kern::expm1_approx(x)); }
};
struct Softplus {  // max(x, 0) + log(1 + e^-|x|): no overflow, exact tails
    ACCEL_INLINE float operator()(float x) const {
        return (x > 0.f ? x : 0.f) + kern::log1p_approx(kern::exp_approx(-__builtin_fabsf(x)));
    }
};
struct Softsign {
    ACCEL_INLINE float operator()(float x) const { return x / (1.f + __builtin_fabsf(x)); }
};
struct Sign {  // x itself for 0, -0 and NaN
    ACCEL_INLINE float operator()(float x) const { return x > 0.f ? 1.f : (x < 0.f ? -1.f : x); }
};
// The trigonometric and hyperbolic functions are libm's (correctly rounded or within an ulp): a polynomial
// of our own would need its own argument reduction to be exact for large x, and these ops are rare in models.
struct Sin {
    ACCEL_INLINE float operator()(float x) const { return __builtin_sinf(x); }
};
struct Cos {
    ACCEL_INLINE float operator()(float x) const { return __builtin_cosf(x); }
};
struct Tan {
    ACCEL_INLINE float operator()(float x) const { return __builtin_tanf(x); }
};
struct Asin {
    ACCEL_INLINE float operator()(float x) const { return __builtin_asinf(x); }
};
struct Acos {
    ACCEL_INLINE float operator()(float x) const { return __builtin_acosf(x); }
};
struct Atan {
    ACCEL_INLINE float operator()(float x) const { return __builtin_atanf(x); }
};
struct Sinh {
    ACCEL_INLINE float operator()(float x) const { return __builtin_sinhf(x); }
};
struct Cosh {
    ACCEL_INLINE float operator()(float x) const { return __builtin_coshf(x); }
};
struct Asinh {
    ACCEL_INLINE float operator()(float x) const { return __builtin_asinhf(x); }
};
struct Acosh {
    ACCEL_INLINE float operator()(float x) const { return __builtin_acoshf(x); }
};
struct Atanh {
    ACCEL_INLINE float operator()(float x) const { return __builtin_atanhf(x); }
};
struct Mish {  // the softplus as Softplus computes it (no overflow), then tanh
    ACCEL_INLINE float operator()(float x) const {
        const float sp = (x > 0.f ? x : 0.f) + kern::log1p_approx(kern::exp_approx(-__builtin_fabsf(x)));
        return x * kern::tanh_approx(sp);
    }
};
struct Celu {  // written as ONNX defines it, x / alpha rather than x times a reciprocal, to round alike
    float a;
    ACCEL_INLINE float operator()(float x) const { return x > 0.f ? x : a * kern::expm1_approx(x / a); }
};
struct Shrink {
    float lambd, bias;
    ACCEL_INLINE float operator()(float x) const { return x < -lambd ? x + bias : (x > lambd ? x - bias : 0.f); }
};
struct ThresholdedRelu {
    float a;
    ACCEL_INLINE float operator()(float x) const { return x > a ? x : 0.f; }
};
struct Swish {
    float a;
    ACCEL_INLINE float operator()(float x) const { return x / (1.f + kern::exp_approx(-a * x)); }
};
struct Sqrt {
    ACCEL_INLINE float operator()(float x) const { return __builtin_sqrtf(x); }
};
struct Exp {
    ACCEL_INLINE float operator()(float x) const { return kern::exp_approx(x); }
};
struct Log {
    ACCEL_INLINE float operator()(float x) const { return kern::log_approx(x); }
};
struct Neg {
    ACCEL_INLINE float operator()(float x) const { return -x; }
};
struct Abs {
    ACCEL_INLINE float operator()(float x) const { return __builtin_fabsf(x); }
};
struct Reciprocal {
    ACCEL_INLINE float operator()(float x) const { return 1.f / x; }
};
struct Erf {
    ACCEL_INLINE float operator()(float x) const { return kern::erf_approx(x); }
};
struct Floor {
    ACCEL_INLINE float operator()(float x) const { return __builtin_floorf(x); }
};
struct Ceil {
    ACCEL_INLINE float operator()(float x) const { return __builtin_ceilf(x); }
};
struct Round {  // the default rounding mode: to nearest, halves to even
    ACCEL_INLINE float operator()(float x) const { return __builtin_rintf(x); }
};
// x ^ alpha for the exponents that have cheaper exact forms, else libm's powf (scalar).
struct Square {
    ACCEL_INLINE float operator()(float x) const { return x * x; }
};
struct Cube {
    ACCEL_INLINE float operator()(float x) const { return x * x * x; }
};
struct SqrtPow {  // powf(x, 0.5): unlike sqrt, +0 for -0 and inf for -inf
    ACCEL_INLINE float operator()(float x) const { return x == -kern::kInf ? kern::kInf : __builtin_sqrtf(x) + 0.f; }
};
struct One {  // powf(x, 0) is 1 for every x, NaN included
    ACCEL_INLINE float operator()(float) const { return 1.f; }
};
struct Pow {
    float a;
    ACCEL_INLINE float operator()(float x) const { return __builtin_powf(x, a); }
};

// x + -0 is x for every x, -0 included (x + 0 would turn -0 into +0, and 1 / -0 is -inf).
constexpr float kNoBias = -0.f;

// y[i] = f(x[i] + bias); x may equal y (in place) but must not otherwise overlap it.
template <class F>
__attribute__((always_inline)) inline void map(const float* x, float* y, size_t n, float bias, F f) {
    for (size_t i = 0; i < n; ++i) y[i] = f(x[i] + bias);
}

#if defined(__SSE2__)
// gcc keeps sqrt scalar while errno is on (it calls sqrtf for negatives), whatever the function's
// optimize options say; the vector instruction is used directly (its results are those of sqrtf).
ACCEL_INLINE __m128 sqrt4(__m128 v, bool pow_half) {
    const __m128 r = _mm_sqrt_ps(v);
    if (!pow_half) return r;
    const __m128 inf = _mm_set1_ps(kern::kInf);
    const __m128 is_neg_inf = _mm_cmpeq_ps(v, _mm_sub_ps(_mm_setzero_ps(), inf));
    return _mm_or_ps(_mm_andnot_ps(is_neg_inf, _mm_add_ps(r, _mm_setzero_ps())), _mm_and_ps(is_neg_inf, inf));
}
template <class F>
ACCEL_INLINE void sqrt_map(const float* x, float* y, size_t n, float bias, F f) {
    const __m128 b = _mm_set1_ps(bias);
    const bool pow_half = !std::is_same<F, Sqrt>::value;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, sqrt4(_mm_add_ps(_mm_loadu_ps(x + i), b), pow_half));
    for (; i < n; ++i) y[i] = f(x[i] + bias);
}
ACCEL_INLINE void map(const float* x, float* y, size_t n, float bias, Sqrt f) { sqrt_map(x, y, n, bias, f); }
ACCEL_INLINE void map(const float* x, float* y, size_t n, float bias, SqrtPow f) { sqrt_map(x, y, n, bias, f); }
#endif

ACCEL_HOT void pow_map(float a, const float* x, float* y, size_t n, float bias) {
    if (a == 1.f) map(x, y, n, bias, Identity{});
    else if (a == 2.f) map(x, y, n, bias, Square{});
    else if (a == 3.f) map(x, y, n, bias, Cube{});
    else if (a == 0.5f) map(x, y, n, bias, SqrtPow{});
    else if (a == 0.f) map(x, y, n, bias, One{});
    else if (a == -1.f) map(x, y, n, bias, Reciprocal{});
    else map(x, y, n, bias, Pow{a});
}

// One switch per call, the loop inside each case, so every loop is a plain vectorizable map.
ACCEL_HOT void act_map(Act act, float a, float b, const float* x, float* y, size_t n, float bias) {
    switch (act) {
        case Act::None: map(x, y, n, bias, Identity{}); break;
        case Act::Relu: map(x, y, n, bias, Relu{}); break;
        case Act::Clip: map(x, y, n, bias, Clip{a, b}); break;
        case Act::Sigmoid: map(x, y, n, bias, Sigmoid{}); break;
        case Act::HardSigmoid: map(x, y, n, bias, HardSigmoid{a, b}); break;
        case Act::HardSwish: map(x, y, n, bias, HardSwish{}); break;
        case Act::LeakyRelu: map(x, y, n, bias, LeakyRelu{a}); break;
        case Act::Tanh: map(x, y, n, bias, Tanh{}); break;
        case Act::Silu: map(x, y, n, bias, Silu{}); break;
        case Act::Gelu: map(x, y, n, bias, Gelu{}); break;
        case Act::Elu: map(x, y, n, bias, Elu{a}); break;
        case Act::Softplus: map(x, y, n, bias, Softplus{}); break;
        case Act::Sqrt: map(x, y, n, bias, Sqrt{}); break;
        case Act::Exp: map(x, y, n, bias, Exp{}); break;
        case Act::Log: map(x, y, n, bias, Log{}); break;
        case Act::Neg: map(x, y, n, bias, Neg{}); break;
        case Act::Abs: map(x, y, n, bias, Abs{}); break;
        case Act::Reciprocal: map(x, y, n, bias, Reciprocal{}); break;
        case Act::Erf: map(x, y, n, bias, Erf{}); break;
        case Act::Floor: map(x, y, n, bias, Floor{}); break;
        case Act::Ceil: map(x, y, n, bias, Ceil{}); break;
        case Act::Pow: pow_map(a, x, y, n, bias); break;
        case Act::Round: map(x, y, n, bias, Round{}); break;
        case Act::GeluTanh: map(x, y, n, bias, GeluTanh{}); break;
        case Act::Selu: map(x, y, n, bias, Selu{a, b}); break;
        case Act::Softsign: map(x, y, n, bias, Softsign{}); break;
        case Act::Sign: map(x, y, n, bias, Sign{}); break;
        case Act::Sin: map(x, y, n, bias, Sin{}); break;
        case Act::Cos: map(x, y, n, bias, Cos{}); break;
        case Act::Tan: map(x, y, n, bias, Tan{}); break;
        case Act::Asin: map(x, y, n, bias, Asin{}); break;
        case Act::Acos: map(x, y, n, bias, Acos{}); break;
        case Act::Atan: map(x, y, n, bias, Atan{}); break;
        case Act::Sinh: map(x, y, n, bias, Sinh{}); break;
        case Act::Cosh: map(x, y, n, bias, Cosh{}); break;
        case Act::Asinh: map(x, y, n, bias, Asinh{}); break;
        case Act::Acosh: map(x, y, n, bias, Acosh{}); break;
        case Act::Atanh: map(x, y, n, bias, Atanh{}); break;
        case Act::Mish: map(x, y, n, bias, Mish{}); break;
        case Act::Celu: map(x, y, n, bias, Celu{a}); break;
        case Act::Shrink: map(x, y, n, bias, Shrink{a, b}); break;
        case Act::ThresholdedRelu: map(x, y, n, bias, ThresholdedRelu{a}); break;
        case Act::Swish: map(x, y, n, bias, Swish{a}); break;
    }
}

}  // namespace

bool valid_activation(uint32_t act) { return is_known(static_cast<Act>(act)); }

void apply_activation(Act act, float alpha, float beta, float* data, size_t n) {
    if (act == Act::None || n == 0 || data == nullptr || !valid_activation(static_cast<uint32_t>(act))) return;
    act_map(act, alpha, beta, data, data, n, kNoBias);
}

void activation_map(Act act, float alpha, float beta, const float* x, float* y, size_t n) {
    act_map(act, alpha, beta, x, y, n, kNoBias);
}

namespace kern {

void bias_act_rows(float* y, int64_t rows, int64_t cols, int64_t ld, const float* bias, Act act, float alpha,
                   float beta) {
    if (act == Act::None && bias == nullptr) return;
    for (int64_t r = 0; r < rows; ++r) {
        float* row = y + r * ld;
        act_map(act, alpha, beta, row, row, static_cast<size_t>(cols), bias ? bias[r] : kNoBias);
    }
}

}  // namespace kern
}  // namespace accel_emu
