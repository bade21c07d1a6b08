// convert.h - the DPU's input and output stages: XINT8/XUINT8 tensors (NHWC when the tensor says
// standin_nchw) to and from the emulator model's dense float32 tensors (NCHW then).
#pragma once

#include <cstdint>

#include "xir/tensor/tensor.hpp"

namespace standin_vart {

// The fixed-point view of a DPU tensor: element type, fix_point and whether the emulator's side is NCHW.
struct FixedTensor {
    const xir::Tensor* tensor;
    bool is_signed;
    int fix_point;
    bool nchw;  // the emulator's tensor is NCHW of this NHWC tensor
};

FixedTensor fixed_view(const xir::Tensor* tensor);

// q * 2^-fix_point, transposed to the emulator's layout.
void to_float(const FixedTensor& t, const std::uint8_t* q, float* out);
// Back: v * 2^fix_point rounded to nearest (ties to even), saturated: the DPU's output stage.
void from_float(const FixedTensor& t, const float* v, std::uint8_t* q);

// The vendor's float -> xint conversion of a FLOAT input buffer: x * 2^fix_point truncated toward zero
// and wrapped to 8 bits, no saturation (what the vendor's examples do).
void float_to_xint_truncating(const FixedTensor& t, const float* x, std::uint8_t* q);
// A FLOAT output buffer: q * 2^-fix_point.
void xint_to_float(const FixedTensor& t, const std::uint8_t* q, float* x);

}  // namespace standin_vart
