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

accel_dtype dtype_of(int32_t type) {
    switch (type) {
        case HB_DNN_TENSOR_TYPE_S8: return ACCEL_DTYPE_INT8;
        case HB_DNN_TENSOR_TYPE_U8: return ACCEL_DTYPE_UINT8;
        case HB_DNN_TENSOR_TYPE_S16: return ACCEL_DTYPE_INT16;
        case HB_DNN_TENSOR_TYPE_U16: return ACCEL_DTYPE_UINT16;
        case HB_DNN_TENSOR_TYPE_S32: return ACCEL_DTYPE_INT32;
        case HB_DNN_TENSOR_TYPE_U32: return ACCEL_DTYPE_UINT32;
        case HB_DNN_TENSOR_TYPE_F16: return ACCEL_DTYPE_FLOAT16;
        case HB_DNN_TENSOR_TYPE_F32: return ACCEL_DTYPE_FLOAT32;
        // Image types (several planes, sub-sampled chroma), 4-bit and 64-bit types: no ABI dtype.
        default: return ACCEL_DTYPE_UNKNOWN;
    }
}

Status bad(accel_status code, std::string message) { return Status{code, std::move(message)}; }

}  // namespace

Status describe_tensor(const hbDNNTensorProperties& p, const char* name, const char* kind, TensorDesc* out) {
    TensorDesc t;
    t.name = name ? name : "";
    const std::string what = std::string(kind) + " '" + t.name + "'";
    t.dtype = dtype_of(p.tensorType);
    if (t.dtype == ACCEL_DTYPE_UNKNOWN)
        return bad(ACCEL_ERR_UNSUPPORTED, what + " has type " + type_name(p.tensorType) + " (" +
                                              std::to_string(p.tensorType) +
                                              "), which the bpu driver does not support (S8, U8, S16, U16, "
                                              "S32, U32, F16 and F32 only)");
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
    // Read as a plain integer: a value the enum does not name must be refused, not loaded as the enum.
    int quanti = 0;
    static_assert(sizeof quanti == sizeof p.quantiType, "hbDNNQuantiType is an int");
    std::memcpy(&quanti, &p.quantiType, sizeof quanti);
    if (quanti == SCALE) {
        const hbDNNQuantiScale& s = p.scale;
        if (s.scaleLen <= 0 || !s.scaleData)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + " is SCALE-quantized without scales");
        if (s.zeroPointLen != 0 && (s.zeroPointLen != s.scaleLen || !s.zeroPointData))
            return bad(ACCEL_ERR_MODEL_FORMAT, what + ": " + std::to_string(s.zeroPointLen) + " zero points for " +
                                                   std::to_string(s.scaleLen) + " scales");
        t.scales.assign(s.scaleData, s.scaleData + s.scaleLen);
        for (int32_t i = 0; i < s.zeroPointLen; i++) t.zero_points.push_back(s.zeroPointData[i]);
        if (s.scaleLen == 1) {
            t.quant = ACCEL_QUANT_PER_TENSOR;
        } else {
            if (p.quantizeAxis < 0 || (uint32_t)p.quantizeAxis >= t.ndim ||
                t.shape[p.quantizeAxis] != s.scaleLen)
                return bad(ACCEL_ERR_MODEL_FORMAT, what + ": " + std::to_string(s.scaleLen) +
                                                       " scales do not match quantizeAxis " +
                                                       std::to_string(p.quantizeAxis));
            t.quant = ACCEL_QUANT_PER_AXIS;
            t.quant_axis = p.quantizeAxis;
        }
    } else if (quanti == SHIFT) {
        const hbDNNQuantiShift& s = p.shift;
        if (s.shiftLen <= 0 || !s.shiftData)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + " is SHIFT-quantized without shifts");
        t.quant = ACCEL_QUANT_SHIFT;
        t.shifts.assign(s.shiftData, s.shiftData + s.shiftLen);
        if (s.shiftLen > 1) {
            if (p.quantizeAxis < 0 || (uint32_t)p.quantizeAxis >= t.ndim || t.shape[p.quantizeAxis] != s.shiftLen)
                return bad(ACCEL_ERR_MODEL_FORMAT, what + ": " + std::to_string(s.shiftLen) +
                                                       " shifts do not match quantizeAxis " +
                                                       std::to_string(p.quantizeAxis));
            t.quant_axis = p.quantizeAxis;
        }
    } else if (quanti != NONE) {
        return bad(ACCEL_ERR_UNSUPPORTED, what + " has quantiType " + std::to_string(quanti));
    }
    *out = std::move(t);
    return Status{};
}

}  // namespace accel_bpu
