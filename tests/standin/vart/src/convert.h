// convert.h - the DPU's input and output stages: a DPU tensor (xint8/xuint8 with a fix_point, or float32,
// a stand-in liberty) to and from the emulator model's dense float32 tensor, transposed from NHWC to
// NCHW when the tensor says standin_nchw.
#pragma once

#include <cstdint>

#include "xir/tensor/tensor.hpp"

namespace standin_vart {

// How the DPU stores one tensor: its element type, fix_point and whether the emulator's side is NCHW.
struct DpuTensor {
    enum Kind { XINT8, XUINT8, FLOAT32 };
    const xir::Tensor* tensor;
    Kind kind;
    int fix_point;  // XINT8/XUINT8 only
    bool nchw;      // the emulator's tensor is NCHW of this NHWC tensor
};

// The view of a DPU tensor; ends the process on a type the DPU does not have (or no fix_point).
DpuTensor dpu_view(const xir::Tensor* tensor);

// The DPU's bytes as the emulator's floats: q * 2^-fix_point (float32: as they are), transposed to the
// emulator's layout.
void to_float(const DpuTensor& t, const std::uint8_t* q, float* out);
// Back: v * 2^fix_point rounded to nearest (ties to even), saturated (the DPU's output stage); float32:
// as they are.
void from_float(const DpuTensor& t, const float* v, std::uint8_t* q);

// The vendor's float -> xint conversion of a FLOAT input buffer: x * 2^fix_point truncated toward zero
// and wrapped to 8 bits, no saturation (what the vendor's examples do). XINT8/XUINT8 tensors only.
void float_to_xint_truncating(const DpuTensor& t, const float* x, std::uint8_t* q);
// A FLOAT output buffer of an XINT8/XUINT8 tensor: q * 2^-fix_point.
void xint_to_float(const DpuTensor& t, const std::uint8_t* q, float* x);

}  // namespace standin_vart
