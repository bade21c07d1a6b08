// dnn_tensor.cc - see dnn_tensor.h.
#include "dnn_tensor.h"

#include <cstring>

namespace accel_bpu {
namespace {

const char* type_name(int32_t type) {
    static const char* const kNames[] = {"IMG_TYPE_Y",   "IMG_TYPE_NV12", "IMG_TYPE_NV12_SEPARATE", "IMG_TYPE_YUV444",
                                         "IMG_TYPE_RGB", "IMG_TYPE_BGR",  "TENSOR_TYPE_S4",         "TENSOR_TYPE_U4",
                                         "TENSOR_TYPE_S8", "TENSOR_TYPE_U8", "TENSOR_TYPE_F16",     "TENSOR_TYPE_S16",
                                         "TENSOR_TYPE_U16", "TENSOR_TYPE_F32", "TENSOR_TYPE_S32",   "TENSOR_TYPE_U32",
                                         "TENSOR_TYPE_F64", "TENSOR_TYPE_S64", "TENSOR_TYPE_U64"};
    return type >= 0 && type < (int32_t)(sizeof kNames / sizeof kNames[0]) ? kNames[type] : "unknown type";
}

#include "hb_tensor.inc"

}  // namespace

Status describe_tensor(const hbDNNTensorProperties& p, const char* name, const char* kind, TensorDesc* out) {
    TensorDesc t;
    t.name = name ? name : "";
    const std::string what = std::string(kind) + " '" + t.name + "'";
    t.dtype = plain_dtype(p.tensorType);
    if (t.dtype == ACCEL_DTYPE_UNKNOWN)
        return unsupported_type(what, type_name(p.tensorType), p.tensorType, "S8, U8, S16, U16, S32, U32, F16 and F32");
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
    t.quant_axis = -1;
    const int quanti = quanti_type(p);
    if (quanti == SCALE) {
        Status st = describe_scale(p, what, &t);
        if (!st.ok()) return st;
    } else if (quanti == SHIFT) {
        const hbDNNQuantiShift& s = p.shift;
        if (s.shiftLen <= 0 || !s.shiftData)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + " is SHIFT-quantized without shifts");
        t.quant = ACCEL_QUANT_SHIFT;
        t.shifts.assign(s.shiftData, s.shiftData + s.shiftLen);
        if (s.shiftLen > 1) {
            Status st = check_axis(t, p.quantizeAxis, s.shiftLen, "shifts", what);
            if (!st.ok()) return st;
            t.quant_axis = p.quantizeAxis;
        }
    } else if (quanti != NONE) {
        return bad(ACCEL_ERR_UNSUPPORTED, what + " has quantiType " + std::to_string(quanti));
    }
    *out = std::move(t);
    return Status{};
}

}  // namespace accel_bpu
