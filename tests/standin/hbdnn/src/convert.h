// convert.h - what the BPU's input and output stages do, for the stand-in: between the user's tensor
// (its element type, quantization, aligned layout with padding) and the emulator's dense float32.
#pragma once

#include <cstdint>

#include "model_file.h"

namespace standin {

// Reads the valid region of `src` (the tensor's aligned bytes) into dense float32 `dst`, dequantizing.
void to_float(const TensorDesc& t, const uint8_t* src, float* dst);

// Writes dense float32 `src` into the valid region of `dst` (the aligned bytes), quantizing with
// round-to-nearest and saturation; the padding is left as it is.
void from_float(const TensorDesc& t, const float* src, uint8_t* dst);

// Elements in the valid shape.
int64_t valid_elements(const TensorDesc& t);

}  // namespace standin
