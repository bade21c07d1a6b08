// fixpoint.cc - see fixpoint.h.
#include "math/fixpoint.h"

#include <algorithm>
#include <cmath>

#include "math/activation.h"
#include "math/exact_rounding.h"
#include "math/quantize.h"

namespace accel_emu {

namespace {

// floor(v + 1/2) of a double whose value fits int64 after saturation to int8's wider neighbourhood.
int64_t round_up_real(double v) {
    if (std::isnan(v)) return 0;
    if (v > 1e12) return int64_t{1} << 40;
    if (v < -1e12) return -(int64_t{1} << 40);
    return static_cast<int64_t>(std::floor(v + 0.5));
}

// The DPU's leaky slope, 26/256, whatever the model says (Vitis AI's quantizer sets it; the DPU has no other).
constexpr int32_t kLeakyNum = 26, kLeakyShift = 8;

// The hard sigmoid of an integer q at fix point fx, at fix point fy, unsaturated: relu6(x + 3) * 2731 / 2^14.
int64_t hard_sigmoid_fix(int64_t q, int32_t fx, int32_t fy) {
    const int64_t three = int64_t{3} << fx, six = int64_t{6} << fx;
    const int64_t t = q + three < 0 ? 0 : q + three > six ? six : q + three;
    return shift_round_up(t * 2731, 14 + fx - fy);
}

}  // namespace

void clip_bounds(float lo, float hi, double sy, int32_t* y_min, int32_t* y_max) {
    if (!std::isnan(lo) && lo > -INFINITY)
        *y_min = static_cast<int32_t>(std::max<int64_t>(*y_min, round_up_real(lo / sy)));
    if (!std::isnan(hi) && hi < INFINITY)
        *y_max = static_cast<int32_t>(std::min<int64_t>(*y_max, round_up_real(hi / sy)));
}

bool power_of_two_fix_point(float scale, int32_t* fp) {
    if (!(scale > 0.f) || !std::isfinite(scale)) return false;
    int e = 0;
    const float m = std::frexp(scale, &e);  // scale = m * 2^e, m in [0.5, 1)
    if (m != 0.5f) return false;
    *fp = 1 - e;
    return true;
}

bool fix_point_of(float scale, int32_t* fp) {
    int32_t f = 0;
    if (!power_of_two_fix_point(scale, &f) || f < -kMaxFixPoint || f > kMaxFixPoint) return false;
    *fp = f;
    return true;
}

int32_t dpu_quantize(float x, int32_t fp, bool is_signed) {
    return saturate8(round_up_real(std::ldexp(static_cast<double>(x), fp)), is_signed);
}

bool dpu_conv_requant(int32_t fx, int32_t fw, int32_t fy, Act act, float alpha, float beta, FixedRequant* r,
                      int32_t* y_min, int32_t* y_max) {
    // Clamped where no result changes: from a shift of 33 every int32 sum (|acc| <= 2^31) rounds to 0, as at 52,
    // where the leaky slope's shift (+8) stays within the epilogue's 61; from a left shift of 24 every nonzero
    // sum saturates, the leaky slope's (26 * 2^24 / 2^8) too, and 26 << 24 still fits int32.
    const int32_t s = std::clamp(fx + fw - fy, -24, 52);
    r->pre = 0;
    r->mult = s >= 0 ? 1 : 1 << -s;
    r->post = s >= 0 ? s : 0;
    r->nmult = r->mult, r->npost = r->post;
    *y_min = -128, *y_max = 255;
    switch (act) {
        case Act::None: return true;
        case Act::Relu: *y_min = 0; return true;
        case Act::Clip: clip_bounds(alpha, beta, std::ldexp(1.0, -fy), y_min, y_max); return true;
        case Act::LeakyRelu:
            r->nmult = r->mult * kLeakyNum;
            r->npost = r->post + kLeakyShift;
            return true;
        default: return false;
    }
}

AvgCoef dpu_avgpool_coef(int64_t kh, int64_t kw) {
    if (kh == kw) {
        switch (kh) {
            case 3: return {7, 6};
            case 5: return {10, 8};
            case 6: return {7, 8};
            case 7: return {21, 10};
            case 14: return {21, 12};
            default: break;
        }
    }
    const double rec = static_cast<double>(kh * kw);
    const int32_t smax = static_cast<int32_t>(std::ceil(std::log2(rec * 128)));
    AvgCoef best{0, 0};
    double err = 1;
    for (int32_t s = 0; s < smax && s < 40; ++s) {
        const double n = std::round(std::ldexp(1.0, s) / rec);
        const double e = std::fabs(n / std::ldexp(1.0, s) - 1 / rec);
        if (e < err) err = e, best = {static_cast<int32_t>(n), s};
    }
    return best;
}

void make_dpu_table(Act act, float alpha, float beta, int32_t fx, bool x_signed, int32_t fy, bool y_signed,
                    uint8_t table[256]) {
    int32_t lo = -128, hi = 255;
    if (act == Act::Clip) clip_bounds(alpha, beta, std::ldexp(1.0, -fy), &lo, &hi);
    if (act == Act::Relu) lo = 0;
    // The DPU's hard sigmoid is relu6(x + 3) / 6: ONNX's with alpha 1/6 and beta 1/2.
    const bool dpu_hsig = std::fabs(alpha - 1.f / 6) < 1e-6f && beta == 0.5f && fx >= 0;
    const bool integer = act == Act::None || act == Act::Relu || act == Act::Clip || act == Act::LeakyRelu ||
                         (act == Act::HardSigmoid && dpu_hsig) || (act == Act::HardSwish && fx >= 0);
    for (int b = 0; b < 256; ++b) {
        const int64_t q = x_signed ? static_cast<int8_t>(b) : b;
        if (!integer) {  // on the CPU in VART: dequantized, the float function, float2fix
            float v = static_cast<float>(std::ldexp(static_cast<double>(q), -fx));
            apply_activation(act, alpha, beta, &v, 1);
            table[b] = static_cast<uint8_t>(dpu_quantize(v, fy, y_signed));
            continue;
        }
        int64_t y;
        if (act == Act::LeakyRelu && q < 0) y = shift_round_up(q * kLeakyNum, kLeakyShift + fx - fy);
        else if (act == Act::HardSigmoid) y = hard_sigmoid_fix(q, fx, fy);
        else if (act == Act::HardSwish)
            y = shift_round_up(q * saturate8(hard_sigmoid_fix(q, fx, 7), true), fx + 7 - fy);
        else y = std::clamp<int64_t>(shift_round_up(q, fx - fy), lo, hi);
        table[b] = static_cast<uint8_t>(saturate8(y, y_signed));
    }
}

FixedBinary dpu_add_rule(int32_t fa, int32_t fb, int32_t fy, bool relu, bool y_signed) {
    const int32_t fmin = fa < fb ? fa : fb;
    return {1, 7 - (fa - fmin), 1, 7 - (fb - fmin), 1, fmin + 7 - fy, relu ? 0 : (y_signed ? -128 : 0)};
}

FixedBinary dpu_mul_rule(int32_t fa, int32_t fb, int32_t fy, bool relu, bool y_signed) {
    return {1, 0, 1, 0, 1, fa + fb - fy, relu ? 0 : (y_signed ? -128 : 0)};
}

namespace {

// The shift n of r's 15-bit multiplier: nearbyint(r * 2^n) in [2^14, 2^15), n < 0 for r of 2^15 or more.
int32_t bpu_shift(double r) {
    int e = 0;
    std::frexp(r, &e);  // r = m * 2^e, m in [0.5, 1): r * 2^(15 - e) in [2^14, 2^15)
    const int32_t n = 15 - e;
    return std::nearbyint(std::ldexp(r, n)) >= 32768.0 ? n - 1 : n;
}

// Multipliers of two terms at one shift n: the larger one gets 15 bits, [2^14, 2^15], so neither overflows
// (n < 0, a left shift, for a multiplier of 2^15 or more). shift_round_up takes any n: its cap at 62 changes
// no result of these sums (|a * ma + b * mb| < 2^24).
void two_multipliers(double ra, double rb, int32_t* ma, int32_t* mb, int32_t* n) {
    *n = bpu_shift(std::max(ra, rb));
    *ma = static_cast<int32_t>(std::nearbyint(std::ldexp(ra, *n)));
    *mb = static_cast<int32_t>(std::nearbyint(std::ldexp(rb, *n)));
}

}  // namespace

FixedRequant bpu_multiplier(double r) {
    FixedRequant f;
    int32_t n = std::max(bpu_shift(r), 0);
    // Past 2^15 (n 0) every nonzero sum saturates, as it does at 2^15: the cap keeps every product small.
    f.mult = static_cast<int32_t>(std::min(std::nearbyint(std::ldexp(r, n)), 32768.0));
    if (n > 31 + 61) n = 31 + 61;  // r < 2^-77: 0 for every sum, as the exact product
    f.pre = n > 61 ? n - 61 : 0;
    f.post = n - f.pre;
    f.nmult = f.mult, f.npost = f.post;
    return f;
}

FixedBinary bpu_add_rule(double sa, double sb, double sy, bool relu, bool y_signed) {
    FixedBinary r{};
    two_multipliers(sa / sy, sb / sy, &r.mult_a, &r.mult_b, &r.shift_y);
    r.mult_y = 1;
    r.y_min = relu ? 0 : (y_signed ? -128 : 0);
    return r;
}

FixedBinary bpu_mul_rule(double sa, double sb, double sy, bool relu, bool y_signed) {
    const FixedRequant m = bpu_multiplier(sa * sb / sy);  // its pre shift is part of the one shift here
    return {1, 0, 1, 0, m.mult, m.pre + m.post, relu ? 0 : (y_signed ? -128 : 0)};
}

AvgCoef bpu_avgpool_coef(double sx, double sy, int64_t kh, int64_t kw) {
    const FixedRequant m = bpu_multiplier(sx / (sy * static_cast<double>(kh * kw)));
    return {m.mult, m.pre + m.post};
}

void make_bpu_table(Act act, float alpha, float beta, float sx, bool x_signed, float sy, bool y_signed,
                    uint8_t table[256]) {
    for (int b = 0; b < 256; ++b) {
        float v = static_cast<float>(x_signed ? static_cast<int8_t>(b) : b) * sx;
        apply_activation(act, alpha, beta, &v, 1);
        table[b] = static_cast<uint8_t>(quantize_value(v, sy, 0, y_signed));
    }
}

}  // namespace accel_emu
