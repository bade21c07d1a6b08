// qtable.cc - see qtable.h.
#include "math/qtable.h"

#include <algorithm>
#include <cmath>

#include "math/activation.h"
#include "math/exact_rounding.h"

namespace accel_emu {

float ort_logistic(float x) {
    // The approximation's coefficients: numerator in x (odd powers), denominator in x^2.
    constexpr float a9 = 4.37031012579801e-11f, a7 = 1.15627324459942e-07f, a5 = 6.08574864600143e-05f,
                    a3 = 8.51377133304701e-03f, a1 = 2.48287947061529e-01f;
    constexpr float b10 = 6.10247389755681e-13f, b8 = 5.76102136993427e-09f, b6 = 6.29106785017040e-06f,
                    b4 = 1.70198817374094e-03f, b2 = 1.16817656904453e-01f, b0 = 9.93151921023180e-01f;
    float v = x > -18.f ? x : -18.f;  // maxps/minps: a NaN becomes the bound
    v = v < 18.f ? v : 18.f;
    const float v2 = v * v;
    float p = std::fma(v2, a9, a7);
    p = std::fma(v2, p, a5);
    p = std::fma(v2, p, a3);
    p = std::fma(v2, p, a1);
    float q = std::fma(v2, b10, b8);
    q = std::fma(v2, q, b6);
    q = std::fma(v2, q, b4);
    q = std::fma(v2, q, b2);
    q = std::fma(v2, q, b0);
    p = v * p;
    const float y = p / q + 0.5f;
    return 0.f > y ? 0.f : y;
}

namespace {

// onnxruntime's float kernels of the activations that sit between a DequantizeLinear and a QuantizeLinear
// in quantized models, as scalar functions: a multiply and an add are two roundings here (this file is
// built without contraction), as in onnxruntime's kernels. False for an activation they do not cover.
bool ort_activation(Act act, float a, float b, float* x) {
    const float v = *x;
    switch (act) {
        case Act::None: return true;
        case Act::Relu: *x = v > 0.f ? v : 0.f; return true;
        case Act::Clip: *x = std::min(std::max(v, a), b); return true;
        case Act::Sigmoid: *x = ort_logistic(v); return true;
        case Act::Tanh: *x = ort_tanh(v); return true;
        case Act::LeakyRelu: *x = v >= 0.f ? v : a * v; return true;
        case Act::HardSigmoid: *x = std::max(0.f, std::min(1.f, a * v + b)); return true;
        case Act::HardSwish: *x = v * std::max(0.f, std::min(1.f, v * (1.f / 6.f) + 0.5f)); return true;
        default: return false;
    }
}

}  // namespace

float ort_tanh(float x) {
    // Numerator in x (odd powers), denominator in x^2; the input clamped to [-9, 9].
    constexpr float a13 = -2.76076847742355e-16f, a11 = 2.00018790482477e-13f, a9 = -8.60467152213735e-11f,
                    a7 = 5.12229709037114e-08f, a5 = 1.48572235717979e-05f, a3 = 6.37261928875436e-04f,
                    a1 = 4.89352455891786e-03f;
    constexpr float b6 = 1.19825839466702e-06f, b4 = 1.18534705686654e-04f, b2 = 2.26843463243900e-03f,
                    b0 = 4.89352518554385e-03f;
    float v = x > -9.f ? x : -9.f;
    v = v < 9.f ? v : 9.f;
    const float v2 = v * v;
    float p = std::fma(v2, a13, a11);
    for (float c : {a9, a7, a5, a3, a1}) p = std::fma(v2, p, c);
    p = v * p;
    float q = std::fma(v2, b6, b4);
    q = std::fma(v2, q, b2);
    q = std::fma(v2, q, b0);
    return p / q;
}

void make_qtable(Act act, float alpha, float beta, const QParams& qx, const QParams& qy, uint8_t table[256]) {
    float v[256];
    for (int b = 0; b < 256; ++b) {
        const int32_t q = qx.is_signed ? static_cast<int8_t>(b) : b;
        v[b] = static_cast<float>(q - qx.zero) * qx.scale;
    }
    bool done = true;
    for (float& x : v) done = ort_activation(act, alpha, beta, &x) && done;
    if (!done) apply_activation(act, alpha, beta, v, 256);
    for (int b = 0; b < 256; ++b)
        table[b] = static_cast<uint8_t>(quantize_value(v[b], qy.scale, qy.zero, qy.is_signed));
}

}  // namespace accel_emu
