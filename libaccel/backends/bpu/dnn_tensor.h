// dnn_tensor.h - libdnn's tensor properties in the ABI's terms (a pure function, unit tested apart).
#pragma once

#include <dnn/hb_dnn.h>

#include "runtime.h"

namespace accel_bpu {

// Describes a tensor: shape = validShape, strides = props.stride (bytes; more than dense when padded),
// byte_size = alignedByteSize, dtype/layout/quantization mapped. Image inputs (IMG_TYPE_Y, NV12,
// NV12_SEPARATE, YUV444, RGB, BGR) become the ABI's image tensors (uint8 NHWC, batch 1, the image's
// format, size, planes and alignment; see dnn_tensor.cc). ACCEL_ERR_UNSUPPORTED (naming the tensor and
// the type) for element types the ABI has no dtype for, image outputs and image batches;
// ACCEL_ERR_MODEL_FORMAT for properties that contradict themselves (an NV12 image of odd size, an
// alignedByteSize that does not hold the image's rows, ...).
Status describe_tensor(const hbDNNTensorProperties& props, const char* name, const char* kind, TensorDesc* out);

// The S100 generation pairs NV12 planes across inputs; libdnn's image types are whole tensors: nothing to do.
inline Status describe_image_inputs(std::vector<TensorDesc>&, std::vector<hbDNNTensorProperties>&) { return Status{}; }

}  // namespace accel_bpu
