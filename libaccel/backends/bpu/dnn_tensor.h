// dnn_tensor.h - libdnn's tensor properties in the ABI's terms (a pure function, unit tested apart).
#pragma once

#include <dnn/hb_dnn.h>

#include "runtime.h"

namespace accel_bpu {

// Describes a tensor: shape = validShape, strides = props.stride (bytes; more than dense when padded),
// byte_size = alignedByteSize, dtype/layout/quantization mapped. ACCEL_ERR_UNSUPPORTED (naming the
// tensor and the type) for image types and element types the ABI has no dtype for;
// ACCEL_ERR_MODEL_FORMAT for properties that contradict themselves.
Status describe_tensor(const hbDNNTensorProperties& props, const char* name, const char* kind, TensorDesc* out);

}  // namespace accel_bpu
