// ucp_tensor.h - S100 hbDNN tensor properties in the ABI's terms (a pure function, unit tested apart).
#pragma once

#include <hobot/dnn/hb_dnn.h>

#include "runtime.h"

namespace accel_bpu {

// Describes a tensor: shape = validShape, strides = props.stride (bytes; more than dense when padded),
// byte_size = alignedByteSize, dtype and SCALE quantization (int32 zero points) mapped; layout NONE (S100
// properties have none). Dynamic strides (-1) become dense ones (over the span of the next dimension)
// and byte_size what they reach; `props` is updated to match, so that it describes the buffers the
// driver passes at inference. ACCEL_ERR_UNSUPPORTED, naming the tensor, for element types the ABI has no
// dtype for and for more dimensions than ACCEL_MAX_DIMS; ACCEL_ERR_MODEL_FORMAT for properties that
// contradict themselves.
Status describe_tensor(hbDNNTensorProperties& props, const char* name, const char* kind, TensorDesc* out);

// S100 has no image types: hb_compile gives an NV12 input as two U8 inputs, `<x>_y` (1, H, W, 1) and
// right after it `<x>_uv` (1, H/2, W/2, 2). Each such pair of described inputs is marked NV12_Y and
// NV12_UV with the image's size; the strides the model leaves dynamic are Horizon's 32-byte aligned rows
// and planes (in the descriptions and in `props`, passed at inference). ACCEL_ERR_MODEL_FORMAT, naming
// both, for a pair of odd sizes or planes that do not match.
Status describe_image_inputs(std::vector<TensorDesc>& inputs, std::vector<hbDNNTensorProperties>& props);

}  // namespace accel_bpu
