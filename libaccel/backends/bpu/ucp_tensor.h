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

}  // namespace accel_bpu
