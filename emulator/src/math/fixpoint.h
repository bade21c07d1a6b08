// fixpoint.h - the Vitis AI DPU's fix-point arithmetic (the `dpu` int8 rules, docs/quantization.md): a
// value is q * 2^-fp with q int8 and fp its tensor's fix point (scale 2^-fp, zero point 0); sums are exact
// integers, scaled by powers of two, rounded half toward +inf (the DPU's DPU_ROUND, floor(v + 1/2)) once, at
// the end, and saturated. What the reference ops of VART's CPU runner compute (conv2d-fix, eltwise-fix,
// pool-fix, hard-sigmoid-fix, concat-fix, float2fix), written here from their documented behaviour.
#pragma once

#include <cstdint>

#include "math/qgemm.h"
#include "op_codes.h"

namespace accel_emu {

// The fix point of a power-of-two scale (scale == 2^-fp exactly), or false.
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

// float2fix: x * 2^fp rounded half toward +inf and saturated (a NaN gives 0).
int32_t dpu_quantize(float x, int32_t fp, bool is_signed);

// The requantization of a conv's (or matmul's) int32 sum, whose real value is acc * 2^-(fx + fw), to the
// output's fix point fy, with the fused activation act (none, relu, leaky relu: the DPU's slope 26/256, clip
// to [0, 6]: relu6) applied to the exact value before the rounding: the Fixed epilogue's row constants and
// the output's bounds (y_min, y_max). False when the shift leaves the epilogue's range.
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

// Elementwise add with the DPU's rules: each input aligned to the smallest input fix point fmin with 7
// fraction bits more (x << (7 - d), or floored x >> (d - 7) past 7, d = f - fmin), summed, shifted to the
// output's fix point (shift fmin + 7 - fy) with the rounding, relu'd when fused, saturated; mul: the product
// shifted by fa + fb - fy.
struct DpuBinary {
    int32_t shift_a, shift_b;  // add: the alignment of each input (negative: a floored right shift)
    int32_t shift_y;           // the final shift_round_up
    int32_t y_min;             // a fused relu: 0, else the dtype's minimum
};
DpuBinary dpu_add_rule(int32_t fa, int32_t fb, int32_t fy, bool relu, bool y_signed);
DpuBinary dpu_mul_rule(int32_t fa, int32_t fb, int32_t fy, bool relu, bool y_signed);
inline int64_t dpu_align(int64_t x, int32_t shift) { return shift >= 0 ? x * (int64_t{1} << shift) : x >> -shift; }

}  // namespace accel_emu
