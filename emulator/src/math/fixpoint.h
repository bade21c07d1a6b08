// fixpoint.h - the devices' integer arithmetic (docs/quantization.md): exact integer sums, scaled by an
// integer multiplier and a right shift that rounds half toward +inf, saturated.
// - `dpu`, the Vitis AI DPU: a value is q * 2^-fp with q int8 and fp its tensor's fix point (scale 2^-fp,
//   zero point 0); every multiplier is a power of two; what the reference ops of VART's CPU runner compute
//   (conv2d-fix, eltwise-fix, pool-fix, hard-sigmoid-fix, concat-fix, float2fix), written from their
//   documented behaviour.
// - `bpu`, the Horizon BPU (S100 / X5): float scales (zero point 0, int8) turned into 15-bit multipliers and
//   shifts (bpu_multiplier: Horizon does not publish its derivation; this is the documented form).
#pragma once

#include <cstdint>

#include "math/qgemm.h"
#include "op_codes.h"

namespace accel_emu {

// The fix points the dpu rules hold: scale 2^-fp with |fp| <= kMaxFixPoint (the compiler's
// qdq_device.DPU_FIX_POINTS).
constexpr int32_t kMaxFixPoint = 30;

// The exponent of a power-of-two scale as a fix point (scale == 2^-fp exactly), whatever its size, or false.
bool power_of_two_fix_point(float scale, int32_t* fp);
// The fix point of a power-of-two scale within [-kMaxFixPoint, kMaxFixPoint], or false.
bool fix_point_of(float scale, int32_t* fp);

// v / 2^s rounded half toward +inf for s > 0 ((v + 2^(s-1)) >> s, the shift flooring), v * 2^-s for s <= 0.
// |v| < 2^40 keeps it exact in int64; a left shift past 20 bits is 20 bits (the result saturates either way).
inline int64_t shift_round_up(int64_t v, int32_t s) {
    if (s <= 0) return v * (int64_t{1} << (s < -20 ? 20 : -s));  // past 2^20 every nonzero int8 saturates
    if (s > 62) s = 62;
    return (v + (int64_t{1} << (s - 1))) >> s;
}

// v saturated to int8 or uint8.
inline int32_t saturate8(int64_t v, bool is_signed) {
    const int64_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    return static_cast<int32_t>(v < lo ? lo : v > hi ? hi : v);
}

// The bounds a clip to [lo, hi] (real values; infinite: none) puts on an output of scale sy, narrowing
// *y_min and *y_max: the rounding is monotone, so clamping the exact value and rounding (half up) equals
// rounding and clamping to the rounded bounds.
void clip_bounds(float lo, float hi, double sy, int32_t* y_min, int32_t* y_max);

// float2fix: x * 2^fp rounded half toward +inf and saturated (a NaN gives 0).
int32_t dpu_quantize(float x, int32_t fp, bool is_signed);

// The requantization of a conv's (or matmul's) int32 sum, whose real value is acc * 2^-(fx + fw), to the
// output's fix point fy, with the fused activation act (none, relu, leaky relu: the DPU's slope 26/256, clip
// to [0, 6]: relu6) applied to the exact value before the rounding: the Fixed epilogue's row constants and
// the output's bounds (y_min, y_max), exact for every shift fx + fw - fy. False for another activation.
bool dpu_conv_requant(int32_t fx, int32_t fw, int32_t fy, Act act, float alpha, float beta, FixedRequant* r,
                      int32_t* y_min, int32_t* y_max);

// The average pool's multiplier N / 2^shift for a kh x kw window (the DPU's table for 3x3, 5x5, 6x6, 7x7
// and 14x14, else the closest N / 2^s to 1 / (kh * kw) over s < ceil(log2(kh * kw * 128))); the pooled value is
// round_up(sum * N * 2^(fy - fx - shift)).
struct AvgCoef { int32_t mult, shift; };
AvgCoef dpu_avgpool_coef(int64_t kh, int64_t kw);

// The 256-entry table of an elementwise op on one 8-bit input with the DPU's rules: table[b] for each byte b
// of X (fix point fx) is y (fix point fy) = act(x) rounded half up: none (a shift), relu, clip, leaky relu
// (26/256), hard sigmoid (relu6(x + 3) * 2731 / 2^14), hard swish (x * its hard sigmoid at fix point 7); the
// other activations run on the CPU in VART, in float, and here as x dequantized, the emulator's float
// function, then float2fix.
void make_dpu_table(Act act, float alpha, float beta, int32_t fx, bool x_signed, int32_t fy, bool y_signed,
                    uint8_t table[256]);

// The BPU's form of a real multiplier r > 0: mult in [2^14, 2^15) (15 significant bits, an int16) and a
// shift n with r ~ mult / 2^n, mult rounded half to even; past the epilogue's 61-bit shift the rest goes
// into the pre shift. A multiplier of 2^15 or more keeps n = 0. The requantization is then exact wherever
// the 15 bits are: past n = 46 (r below 2^-32) every int32 sum scales below half a step and gives 0, and so
// does the form, whose shift stops at 92 bits (pre 31, post 61: the epilogue's limits), where the rounding
// term would otherwise be added and not shifted out.
FixedRequant bpu_multiplier(double r);

// Elementwise add with the DPU's rules: each input aligned to the smallest input fix point fmin with 7
// fraction bits more (x << (7 - d), or floored x >> (d - 7) past 7, d = f - fmin), summed, shifted to the
// output's fix point (shift fmin + 7 - fy) with the rounding, relu'd when fused, saturated; mul: the product
// shifted by fa + fb - fy.
struct FixedBinary {
    int32_t mult_a, shift_a;   // add: each input times its multiplier, aligned (a negative shift floors)
    int32_t mult_b, shift_b;
    int32_t mult_y;            // mul: the product's multiplier
    int32_t shift_y;           // the final shift_round_up
    int32_t y_min;             // a fused relu: 0, else the dtype's minimum
};
FixedBinary dpu_add_rule(int32_t fa, int32_t fb, int32_t fy, bool relu, bool y_signed);
FixedBinary dpu_mul_rule(int32_t fa, int32_t fb, int32_t fy, bool relu, bool y_signed);
// The BPU's add (a * ma + b * mb, one shift; a negative shift, for multipliers of 2^15 and more, shifts
// left) and mul (a * b * m, one shift) of scales sa, sb to sy.
FixedBinary bpu_add_rule(double sa, double sb, double sy, bool relu, bool y_signed);
FixedBinary bpu_mul_rule(double sa, double sb, double sy, bool relu, bool y_signed);
inline int64_t fixed_align(int64_t x, int32_t shift) { return shift >= 0 ? x * (int64_t{1} << shift) : x >> -shift; }
// One element of the op.
inline int32_t fixed_binary(bool add, const FixedBinary& r, int64_t a, int64_t b, bool y_signed) {
    const int64_t v =
        add ? fixed_align(a * r.mult_a, r.shift_a) + fixed_align(b * r.mult_b, r.shift_b) : a * b * r.mult_y;
    const int64_t y = shift_round_up(v, r.shift_y);
    return saturate8(y < r.y_min ? r.y_min : y, y_signed);
}

// The average pool's multiplier and shift under the BPU's rules: r = s_x / (s_y * kh * kw).
AvgCoef bpu_avgpool_coef(double sx, double sy, int64_t kh, int64_t kw);

// The 256-entry table under the BPU's rules: dequantized, the emulator's float function, quantized (float
// division, half to even), as a toolchain builds its lookup tables.
void make_bpu_table(Act act, float alpha, float beta, float sx, bool x_signed, float sy, bool y_signed,
                    uint8_t table[256]);

}  // namespace accel_emu
