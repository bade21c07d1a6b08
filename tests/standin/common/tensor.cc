// tensor.cc - see tensor.h.
#include "tensor.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace standin {
namespace {

struct Affine {
    float scale = 1.0f;
    float zero = 0.0f;
};

// How element `axis_index` along the quantization axis maps to real values.
Affine affine_at(const TensorDesc& t, int64_t axis_index) {
    Affine a;
    if (t.quant == Quant::Scale && !t.scales.empty()) {
        size_t i = t.scales.size() == 1 ? 0 : (size_t)axis_index;
        a.scale = i < t.scales.size() ? t.scales[i] : t.scales[0];
        if (!t.zero_points.empty()) a.zero = (float)t.zero_points[i < t.zero_points.size() ? i : 0];
    } else if (t.quant == Quant::Shift && !t.shifts.empty()) {
        size_t i = t.shifts.size() == 1 ? 0 : (size_t)axis_index;
        a.scale = std::ldexp(1.0f, -(int)t.shifts[i < t.shifts.size() ? i : 0]);
    }
    return a;
}

// IEEE half precision, by hand: round to nearest even, with subnormals, infinities and NaN.
float half_to_float(uint16_t h) {
    const int exponent = (h >> 10) & 0x1f;
    const int mantissa = h & 0x3ff;
    float v;
    if (exponent == 0) v = std::ldexp((float)mantissa, -24);
    else if (exponent == 31)
        v = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else v = std::ldexp((float)(mantissa | 0x400), exponent - 25);
    return (h & 0x8000) ? -v : v;
}

uint16_t float_to_half(float f) {
    const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    float a = std::fabs(f);
    if (std::isnan(f)) return 0x7e00;
    if (a >= 65520.0f) return sign | 0x7c00;  // rounds to infinity
    if (a < std::ldexp(1.0f, -14)) return sign | (uint16_t)std::nearbyint(std::ldexp(a, 24));  // subnormal
    int e = 0;
    float m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    uint32_t bits = (uint32_t)std::nearbyint(std::ldexp(m, 11));  // 11 significant bits
    if (bits == 2048) {  // rounding carried into the next binade
        bits = 1024;
        e++;
    }
    return sign | (uint16_t)(((e + 14) << 10) | (bits & 0x3ff));
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

float load_element(ElementType type, const uint8_t* p) {
    switch (type) {
        case ElementType::I8: return load<int8_t>(p);
        case ElementType::U8:
        case ElementType::Bool8: return load<uint8_t>(p);
        case ElementType::I16: return load<int16_t>(p);
        case ElementType::U16: return load<uint16_t>(p);
        case ElementType::I32: return load<int32_t>(p);
        case ElementType::U32: return load<uint32_t>(p);
        case ElementType::F16: {
            uint16_t h;
            std::memcpy(&h, p, 2);
            return half_to_float(h);
        }
        default: return load<float>(p);
    }
}

void store_element(ElementType type, uint8_t* p, float v) {
    switch (type) {
        case ElementType::I8: return store<int8_t>(p, v);
        case ElementType::U8: return store<uint8_t>(p, v);
        case ElementType::Bool8: return store<uint8_t>(p, v != 0.0f ? 1.0f : 0.0f);
        case ElementType::I16: return store<int16_t>(p, v);
        case ElementType::U16: return store<uint16_t>(p, v);
        case ElementType::I32: return store<int32_t>(p, v);
        case ElementType::U32: return store<uint32_t>(p, v);
        case ElementType::F16: {
            uint16_t h = float_to_half(v);
            std::memcpy(p, &h, 2);
            return;
        }
        default: return store<float>(p, v);
    }
}

// Calls fn(dense index, byte offset in the padded buffer, index along the quantization axis) for
// every element of the valid shape, in C order.
template <class Fn>
void for_each_valid(const TensorDesc& t, Fn fn) {
    const int nd = t.ndim;
    int64_t index[kMaxDims] = {0};
    const int64_t total = valid_elements(t);
    const int axis = t.axis >= 0 && t.axis < nd ? t.axis : -1;
    for (int64_t n = 0; n < total; n++) {
        int64_t offset = 0;
        for (int d = 0; d < nd; d++) offset += index[d] * t.strides[d];
        fn(n, offset, axis >= 0 ? index[axis] : 0);
        for (int d = nd - 1; d >= 0; d--) {
            if (++index[d] < t.dims[d]) break;
            index[d] = 0;
        }
    }
}

}  // namespace

int element_size(ElementType type) {
    switch (type) {
        case ElementType::I8:
        case ElementType::U8:
        case ElementType::Bool8: return 1;
        case ElementType::I16:
        case ElementType::U16:
        case ElementType::F16: return 2;
        default: return 4;
    }
}

int64_t valid_elements(const TensorDesc& t) {
    int64_t n = 1;
    for (int d = 0; d < t.ndim; d++) n *= t.dims[d];
    return n;
}

int64_t span_bytes(const TensorDesc& t) {
    if (valid_elements(t) == 0) return 0;
    int64_t last = 0;
    for (int d = 0; d < t.ndim; d++) last += (t.dims[d] - 1) * t.strides[d];
    return last + element_size(t.type);
}

bool set_padded_strides(TensorDesc& t, const int64_t* padded, int64_t max_bytes) {
    int64_t size = element_size(t.type);
    for (int d = t.ndim - 1; d >= 0; d--) {
        if (t.dims[d] < 0 || padded[d] < t.dims[d] || padded[d] > (int64_t(1) << 24)) return false;
        t.strides[d] = size;
        size *= padded[d];
        if (size > max_bytes) return false;
    }
    t.byte_size = size;
    return true;
}

bool strides_valid(const TensorDesc& t) {
    int64_t inner = element_size(t.type);  // bytes the next dimension's valid elements span
    for (int d = t.ndim - 1; d >= 0; d--) {
        if (t.strides[d] < inner || t.dims[d] < 0 || t.strides[d] > (int64_t(1) << 40)) return false;
        inner = t.strides[d] * t.dims[d];
    }
    return true;
}

void to_float(const TensorDesc& t, const uint8_t* src, float* dst) {
    for_each_valid(t, [&](int64_t n, int64_t offset, int64_t axis_index) {
        Affine a = affine_at(t, axis_index);
        float v = load_element(t.type, src + offset);
        dst[n] = t.quant == Quant::None ? v : (v - a.zero) * a.scale;
    });
}

void to_emulator(const TensorDesc& t, const uint8_t* src, void* dst) {
    if (!t.raw) return to_float(t, src, static_cast<float*>(dst));
    const int size = element_size(t.type);
    uint8_t* out = static_cast<uint8_t*>(dst);
    for_each_valid(t, [&](int64_t n, int64_t offset, int64_t) { std::memcpy(out + n * size, src + offset, size); });
}

TensorDesc first_plane(const TensorDesc& t) {
    TensorDesc p = t;
    p.dims[1] = t.second_plane_row;
    p.byte_size = t.second_plane_row * t.strides[1];
    p.second_plane_row = 0;
    return p;
}

TensorDesc second_plane(const TensorDesc& t) {
    TensorDesc p = t;
    p.dims[1] = t.dims[1] - t.second_plane_row;
    p.byte_size = t.byte_size - t.second_plane_row * t.strides[1];
    p.second_plane_row = 0;
    return p;
}

void from_float(const TensorDesc& t, const float* src, uint8_t* dst) {
    for_each_valid(t, [&](int64_t n, int64_t offset, int64_t axis_index) {
        Affine a = affine_at(t, axis_index);
        // Adding a zero point of 0 would turn -0.0 into +0.0: a tensor that is not quantized is stored as is.
        store_element(t.type, dst + offset, t.quant == Quant::None ? src[n] : src[n] / a.scale + a.zero);
    });
}

}  // namespace standin
