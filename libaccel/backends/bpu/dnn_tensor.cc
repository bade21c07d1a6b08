// dnn_tensor.cc - see dnn_tensor.h.
#include "dnn_tensor.h"

#include <cstring>

namespace accel_bpu {
namespace {

#include "hb_tensor.inc"

// hbDNNDataType's names, by value (for messages).
const char* const kTypeNames[] = {"IMG_TYPE_Y",      "IMG_TYPE_NV12",   "IMG_TYPE_NV12_SEPARATE", "IMG_TYPE_YUV444",
                                  "IMG_TYPE_RGB",    "IMG_TYPE_BGR",    "TENSOR_TYPE_S4",         "TENSOR_TYPE_U4",
                                  "TENSOR_TYPE_S8",  "TENSOR_TYPE_U8",  "TENSOR_TYPE_F16",        "TENSOR_TYPE_S16",
                                  "TENSOR_TYPE_U16", "TENSOR_TYPE_F32", "TENSOR_TYPE_S32",        "TENSOR_TYPE_U32",
                                  "TENSOR_TYPE_F64", "TENSOR_TYPE_S64", "TENSOR_TYPE_U64"};

// SHIFT (X3/X5 only): real = q / 2^shift, per tensor or along quantizeAxis.
Status describe_shift(const hbDNNTensorProperties& p, const std::string& what, TensorDesc* t) {
    const hbDNNQuantiShift& s = p.shift;
    if (s.shiftLen <= 0 || !s.shiftData)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + " is SHIFT-quantized without shifts");
    t->quant = ACCEL_QUANT_SHIFT;
    t->shifts.assign(s.shiftData, s.shiftData + s.shiftLen);
    if (s.shiftLen > 1) {
        Status st = check_axis(*t, p.quantizeAxis, s.shiftLen, "shifts", what);
        if (!st.ok()) return st;
        t->quant_axis = p.quantizeAxis;
    }
    return Status{};
}

}  // namespace

Status describe_tensor(const hbDNNTensorProperties& p, const char* name, const char* kind, TensorDesc* out) {
    TensorDesc t;
    t.name = name ? name : "";
    const std::string what = std::string(kind) + " '" + t.name + "'";
    t.dtype = plain_dtype(p.tensorType);
    if (t.dtype == ACCEL_DTYPE_UNKNOWN)
        return unsupported_type(what, name_in(kTypeNames, p.tensorType), p.tensorType,
                                "S8, U8, S16, U16, S32, U32, F16 and F32");
    switch (p.tensorLayout) {
        case HB_DNN_LAYOUT_NHWC: t.layout = ACCEL_LAYOUT_NHWC; break;
        case HB_DNN_LAYOUT_NCHW: t.layout = ACCEL_LAYOUT_NCHW; break;
        default: t.layout = ACCEL_LAYOUT_NONE; break;
    }
    const hbDNNTensorShape& valid = p.validShape;
    if (valid.numDimensions < 0 || valid.numDimensions > HB_DNN_TENSOR_MAX_DIMENSIONS ||
        valid.numDimensions > ACCEL_MAX_DIMS)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + " has " + std::to_string(valid.numDimensions) + " dimensions");
    if (p.alignedByteSize <= 0)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + " has alignedByteSize " + std::to_string(p.alignedByteSize));
    t.ndim = (uint32_t)valid.numDimensions;
    for (uint32_t i = 0; i < t.ndim; i++) {
        if (valid.dimensionSize[i] < 0 || p.stride[i] < 0)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + ": negative size or stride in dimension " + std::to_string(i));
        t.shape[i] = valid.dimensionSize[i];
        t.strides[i] = p.stride[i];
    }
    t.byte_size = (uint64_t)p.alignedByteSize;
    Status st = describe_quantization(p, what, &t, [&](int quanti) {
        return quanti == SHIFT ? describe_shift(p, what, &t) : refuse_quanti(what, quanti);
    });
    if (!st.ok()) return st;
    *out = std::move(t);
    return Status{};
}

}  // namespace accel_bpu
