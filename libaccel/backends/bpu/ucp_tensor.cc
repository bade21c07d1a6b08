// ucp_tensor.cc - see ucp_tensor.h.
#include "ucp_tensor.h"

#include <cstring>

namespace accel_bpu {
namespace {

#include "hb_tensor.inc"

// hbDNNDataType's names, by value (for messages).
const char* const kTypeNames[] = {"TENSOR_TYPE_S4",  "TENSOR_TYPE_U4",   "TENSOR_TYPE_S8",  "TENSOR_TYPE_U8",
                                  "TENSOR_TYPE_F16", "TENSOR_TYPE_S16",  "TENSOR_TYPE_U16", "TENSOR_TYPE_F32",
                                  "TENSOR_TYPE_S32", "TENSOR_TYPE_U32",  "TENSOR_TYPE_F64", "TENSOR_TYPE_S64",
                                  "TENSOR_TYPE_U64", "TENSOR_TYPE_BOOL8"};

int64_t element_size(accel_dtype t) {
    switch (t) {
        case ACCEL_DTYPE_INT8:
        case ACCEL_DTYPE_UINT8:
        case ACCEL_DTYPE_BOOL: return 1;
        case ACCEL_DTYPE_INT16:
        case ACCEL_DTYPE_UINT16:
        case ACCEL_DTYPE_FLOAT16: return 2;
        default: return 4;
    }
}

// Largest buffer a tensor may describe; keeps every product below in range.
constexpr int64_t kMaxBytes = int64_t(1) << 48;

}  // namespace

Status describe_tensor(hbDNNTensorProperties& p, const char* name, const char* kind, TensorDesc* out) {
    TensorDesc t;
    t.name = name ? name : "";
    const std::string what = std::string(kind) + " '" + t.name + "'";
    t.dtype = p.tensorType == HB_DNN_TENSOR_TYPE_BOOL8 ? ACCEL_DTYPE_BOOL : plain_dtype(p.tensorType);
    if (t.dtype == ACCEL_DTYPE_UNKNOWN)
        return unsupported_type(what, name_in(kTypeNames, p.tensorType), p.tensorType,
                                "S8, U8, S16, U16, S32, U32, F16, F32 and BOOL8");
    t.layout = ACCEL_LAYOUT_NONE;  // S100 tensors say nothing of NCHW or NHWC
    const hbDNNTensorShape& valid = p.validShape;
    if (valid.numDimensions < 0 || valid.numDimensions > HB_DNN_TENSOR_MAX_DIMENSIONS)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + " has " + std::to_string(valid.numDimensions) + " dimensions");
    if (valid.numDimensions > ACCEL_MAX_DIMS)
        return bad(ACCEL_ERR_UNSUPPORTED, what + " has " + std::to_string(valid.numDimensions) +
                                              " dimensions; the accel ABI describes at most " +
                                              std::to_string(ACCEL_MAX_DIMS));
    t.ndim = (uint32_t)valid.numDimensions;
    bool dynamic = false;
    // From the innermost dimension out: a dynamic stride is the span of the next dimension's elements.
    int64_t inner = element_size(t.dtype);
    for (int i = (int)t.ndim - 1; i >= 0; i--) {
        const int64_t size = valid.dimensionSize[i], stride = p.stride[i];
        if (size < 0 || stride < -1 || stride > kMaxBytes)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + ": size " + std::to_string(size) + " and stride " +
                                                   std::to_string(stride) + " in dimension " + std::to_string(i));
        t.shape[i] = size;
        t.strides[i] = stride == -1 ? inner : stride;
        dynamic |= stride == -1;
        if (size && t.strides[i] > kMaxBytes / size)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + ": its strides reach beyond 2^48 bytes");
        inner = t.strides[i] * (size ? size : 1);
    }
    if (dynamic) {
        // The whole of the outermost dimension, as a static layout's alignedByteSize counts it.
        p.alignedByteSize = t.ndim ? t.strides[0] * t.shape[0] : element_size(t.dtype);
        for (uint32_t i = 0; i < t.ndim; i++) p.stride[i] = t.strides[i];
    }
    if (p.alignedByteSize <= 0)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + " has alignedByteSize " + std::to_string(p.alignedByteSize));
    t.byte_size = (uint64_t)p.alignedByteSize;
    // S100 has no SHIFT.
    Status st = describe_quantization(p, what, &t, [&](int quanti) { return refuse_quanti(what, quanti); });
    if (!st.ok()) return st;
    *out = std::move(t);
    return Status{};
}

}  // namespace accel_bpu
