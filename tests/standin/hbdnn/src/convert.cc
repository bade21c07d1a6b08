// convert.cc - see convert.h.
#include "convert.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace standin {
namespace {

// Scale, zero point and shift of element `index` along the quantization axis (per tensor if none).
struct Quant {
    float scale = 1.0f;
    float zero = 0.0f;
};

Quant quant_at(const TensorDesc& t, int64_t axis_index) {
    Quant q;
    const hbDNNTensorProperties& p = t.props;
    if (p.quantiType == SCALE && !t.scales.empty()) {
        size_t i = t.scales.size() == 1 ? 0 : (size_t)axis_index;
        q.scale = i < t.scales.size() ? t.scales[i] : t.scales[0];
        if (!t.zero_points.empty()) q.zero = t.zero_points[t.zero_points.size() == 1 ? 0 : i];
    }
    return q;
}

template <class T>
float load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return (float)v;
}

template <class T>
void store(uint8_t* p, float v) {
    T out;
    if (std::numeric_limits<T>::is_integer) {
        double r = std::nearbyint((double)v);
        if (std::isnan(r)) r = 0;
        if (r < (double)std::numeric_limits<T>::min()) r = (double)std::numeric_limits<T>::min();
        if (r > (double)std::numeric_limits<T>::max()) r = (double)std::numeric_limits<T>::max();
        out = (T)r;
    } else {
        out = (T)v;
    }
    std::memcpy(p, &out, sizeof out);
}

float load_element(int32_t type, const uint8_t* p) {
    switch (type) {
        case HB_DNN_TENSOR_TYPE_S8: return load<int8_t>(p);
        case HB_DNN_TENSOR_TYPE_U8: return load<uint8_t>(p);
        case HB_DNN_TENSOR_TYPE_S16: return load<int16_t>(p);
        case HB_DNN_TENSOR_TYPE_U16: return load<uint16_t>(p);
        case HB_DNN_TENSOR_TYPE_S32: return load<int32_t>(p);
        case HB_DNN_TENSOR_TYPE_U32: return load<uint32_t>(p);
        default: return load<float>(p);
    }
}

void store_element(int32_t type, uint8_t* p, float v) {
    switch (type) {
        case HB_DNN_TENSOR_TYPE_S8: return store<int8_t>(p, v);
        case HB_DNN_TENSOR_TYPE_U8: return store<uint8_t>(p, v);
        case HB_DNN_TENSOR_TYPE_S16: return store<int16_t>(p, v);
        case HB_DNN_TENSOR_TYPE_U16: return store<uint16_t>(p, v);
        case HB_DNN_TENSOR_TYPE_S32: return store<int32_t>(p, v);
        case HB_DNN_TENSOR_TYPE_U32: return store<uint32_t>(p, v);
        default: return store<float>(p, v);
    }
}

// Calls fn(dense index, byte offset in the aligned buffer, index along the quantization axis) for
// every element of the valid shape, in C order.
template <class Fn>
void for_each_valid(const TensorDesc& t, Fn fn) {
    const hbDNNTensorProperties& p = t.props;
    const int nd = p.validShape.numDimensions;
    int64_t index[HB_DNN_TENSOR_MAX_DIMENSIONS] = {0};
    const int64_t total = valid_elements(t);
    const int axis = p.quantizeAxis >= 0 && p.quantizeAxis < nd ? p.quantizeAxis : -1;
    for (int64_t n = 0; n < total; n++) {
        int64_t offset = 0;
        for (int d = 0; d < nd; d++) offset += index[d] * p.stride[d];
        fn(n, offset, axis >= 0 ? index[axis] : 0);
        for (int d = nd - 1; d >= 0; d--) {
            if (++index[d] < p.validShape.dimensionSize[d]) break;
            index[d] = 0;
        }
    }
}

}  // namespace

int64_t valid_elements(const TensorDesc& t) {
    int64_t n = 1;
    for (int d = 0; d < t.props.validShape.numDimensions; d++) n *= t.props.validShape.dimensionSize[d];
    return n;
}

void to_float(const TensorDesc& t, const uint8_t* src, float* dst) {
    const int32_t type = t.props.tensorType;
    for_each_valid(t, [&](int64_t n, int64_t offset, int64_t axis_index) {
        float q = load_element(type, src + offset);
        if (t.props.quantiType == SCALE) {
            Quant k = quant_at(t, axis_index);
            dst[n] = (q - k.zero) * k.scale;
        } else if (t.props.quantiType == SHIFT && t.props.shift.shiftLen > 0 && t.props.shift.shiftData) {
            dst[n] = std::ldexp(q, -(int)t.props.shift.shiftData[0]);
        } else {
            dst[n] = q;
        }
    });
}

void from_float(const TensorDesc& t, const float* src, uint8_t* dst) {
    const int32_t type = t.props.tensorType;
    for_each_valid(t, [&](int64_t n, int64_t offset, int64_t axis_index) {
        float v = src[n];
        if (t.props.quantiType == SCALE) {
            Quant k = quant_at(t, axis_index);
            v = v / k.scale + k.zero;
        }
        store_element(type, dst + offset, v);
    });
}

}  // namespace standin
