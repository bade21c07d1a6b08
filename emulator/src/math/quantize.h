// quantize.h - the scalar rules of onnxruntime's int8 arithmetic (the `ort` rules), written once, and the
// loops of the ops that are nothing but those rules: quantize, dequantize and 256-entry tables.
//
// onnxruntime's x86 kernels clamp in float before converting (max then min, as maxps/minps do: a NaN
// becomes the lower bound), convert with the default rounding mode (half to even) and add the zero point.
#pragma once

#include <cmath>
#include <cstdint>

namespace accel_emu {

// One tensor's scale and zero point (real = (q - zero) * scale), and whether it is int8 (else uint8).
struct QParams {
    float scale;
    int32_t zero;
    bool is_signed;
};

inline int32_t qmin_of(bool is_signed) { return is_signed ? -128 : 0; }
inline int32_t qmax_of(bool is_signed) { return is_signed ? 127 : 255; }

// round-half-to-even of v clamped to [lo, hi] (integral floats) as cvtps2dq after maxps/minps.
inline int32_t clamp_round(float v, float lo, float hi) {
    v = v > lo ? v : lo;
    v = v < hi ? v : hi;
    return static_cast<int32_t>(std::nearbyint(v));
}

// Rounded in float, saturated after (where onnxruntime converts first and packs with saturation):
// clamping to one step outside the range first keeps the saturated result and keeps the conversion
// defined (a NaN gives the minimum, as cvtps2dq's "integer indefinite" does).
inline int32_t round_saturate(float v, bool is_signed) {
    const int32_t lo = qmin_of(is_signed), hi = qmax_of(is_signed);
    const int32_t r = clamp_round(v, static_cast<float>(lo - 1), static_cast<float>(hi + 1));
    return r < lo ? lo : r > hi ? hi : r;
}

// QuantizeLinear: saturate(nearbyint(x / scale) + zero) with a true float32 division.
inline int32_t quantize_value(float x, float scale, int32_t zero, bool is_signed) {
    const float lo = static_cast<float>(qmin_of(is_signed) - zero), hi = static_cast<float>(qmax_of(is_signed) - zero);
    return clamp_round(x / scale, lo, hi) + zero;
}

// The requantization of an int32 sum (MlasRequantizeOutput): float32(acc) * multiplier, clamped and
// rounded as above, plus the output zero point.
inline int32_t requantize_value(int32_t acc, float multiplier, int32_t zero, bool is_signed) {
    const float lo = static_cast<float>(qmin_of(is_signed) - zero), hi = static_cast<float>(qmax_of(is_signed) - zero);
    return clamp_round(static_cast<float>(acc) * multiplier, lo, hi) + zero;
}

// y[i] = quantize(x[i]) for a tensor laid out outer x channels x inner with per-channel scale[c] and
// zero[c] (channels 1: per tensor). y is int8 or uint8 as is_signed says. `vector`: with AVX-512 where the
// CPU has it (the same bytes).
void quantize_linear(const float* x, int64_t outer, int64_t channels, int64_t inner, const float* scale,
                     const int32_t* zero, bool is_signed, void* y, bool vector = false);

// y[i] = float32(x[i] - zero[c]) * scale[c], x int8, uint8 or int32 (elem_bytes 1 with is_signed, or 4).
// `vector`: 8-bit x with AVX-512 where the CPU has it (the same bits).
void dequantize_linear(const void* x, int elem_bytes, bool is_signed, int64_t outer, int64_t channels, int64_t inner,
                       const float* scale, const int32_t* zero, float* y, bool vector = false);

// DynamicQuantizeLinear's parameters of x[0..n): the range [min(x, 0), max(x, 0)] over 255 steps, and
// the zero point that puts 0 on a step, as onnxruntime computes them (float32, the zero point rounded half
// to even).
void dynamic_qparams(const float* x, int64_t n, float* scale, uint8_t* zero);
// Its two steps, for a range gathered over several runs: [*lo, *hi] widened to take x[0..n) (start from 0, 0),
// and the scale and zero point of a range. `vector`: with AVX-512 where the CPU has it (the same bits).
void widen_range(const float* x, int64_t n, float* lo, float* hi, bool vector = false);
void dynamic_qparams_of_range(float lo, float hi, float* scale, uint8_t* zero);

// y[i] = table[x[i] as an unsigned byte], n elements (the table of an 8-bit elementwise op). `vector`: with
// AVX-512 VBMI's byte permutes where the CPU has them.
void lookup_table(const uint8_t table[256], const uint8_t* x, uint8_t* y, int64_t n, bool vector = false);

}  // namespace accel_emu
