// cast.h - conversion of n elements between any two of the 11 dtypes (ops/cast.cc: FORMAT.md op 26),
// as ONNX Cast does: float to integer truncates toward zero (NaN gives 0, values out of the integer's
// range saturate: ONNX leaves both unspecified, and neither may fault), integer to integer wraps (two's
// complement), to bool is x != 0, bool to number is 0 or 1, and float16 conversions are exact or rounded
// to nearest even, with subnormals, infinities and NaN.
#pragma once

#include <cstdint>

#include "accel/accel.h"

namespace accel_emu {

// out[i] = in[i] converted from dtype `from` to dtype `to`, i < n; both known dtypes (a copy if equal).
void cast_elements(accel_dtype from, accel_dtype to, const void* in, void* out, int64_t n);

}  // namespace accel_emu
