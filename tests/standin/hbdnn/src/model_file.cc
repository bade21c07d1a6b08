// model_file.cc - reading the stand-in's .bin (../FORMAT.md).
#include "model_file.h"

#include <cstring>

namespace standin {

int32_t element_size(int32_t type) {
    switch (type) {
        case HB_DNN_TENSOR_TYPE_S8:
        case HB_DNN_TENSOR_TYPE_U8: return 1;
        case HB_DNN_TENSOR_TYPE_F16:
        case HB_DNN_TENSOR_TYPE_S16:
        case HB_DNN_TENSOR_TYPE_U16: return 2;
        case HB_DNN_TENSOR_TYPE_F32:
        case HB_DNN_TENSOR_TYPE_S32:
        case HB_DNN_TENSOR_TYPE_U32: return 4;
        default: return 0;
    }
}

namespace {

class Reader {
public:
    Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
    bool bytes(void* out, size_t n) {
        if ((size_t)(end_ - p_) < n) return false;
        std::memcpy(out, p_, n);
        p_ += n;
        return true;
    }
    template <class T>
    bool value(T& out) { return bytes(&out, sizeof out); }
    bool string(std::string& out) {
        uint32_t n = 0;
        if (!value(n) || (size_t)(end_ - p_) < n) return false;
        out.assign(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        return true;
    }
    bool blob(std::vector<uint8_t>& out) {
        uint64_t n = 0;
        if (!value(n) || (uint64_t)(end_ - p_) < n) return false;
        out.assign(p_, p_ + n);
        p_ += n;
        return true;
    }

private:
    const uint8_t* p_;
    const uint8_t* end_;
};

bool read_shape(Reader& r, hbDNNTensorShape& shape) {
    if (!r.value(shape.numDimensions)) return false;
    for (int i = 0; i < HB_DNN_TENSOR_MAX_DIMENSIONS; i++)
        if (!r.value(shape.dimensionSize[i])) return false;
    return shape.numDimensions >= 0 && shape.numDimensions <= HB_DNN_TENSOR_MAX_DIMENSIONS;
}

bool read_tensor(Reader& r, TensorDesc& t, std::string& why) {
    hbDNNTensorProperties& p = t.props;
    int32_t quanti = 0;
    uint32_t n = 0;
    if (!r.string(t.name) || !r.value(p.tensorLayout) || !r.value(p.tensorType) || !read_shape(r, p.validShape) ||
        !read_shape(r, p.alignedShape) || !r.value(quanti) || !r.value(p.quantizeAxis) || !r.value(n))
        return false;
    p.quantiType = (hbDNNQuantiType)quanti;
    t.scales.resize(n);
    if (n && !r.bytes(t.scales.data(), n * sizeof(float))) return false;
    if (!r.value(n)) return false;
    t.zero_points.resize(n);
    if (n && !r.bytes(t.zero_points.data(), n)) return false;
    t.element_size = element_size(p.tensorType);
    if (!t.element_size) {
        why = "tensor '" + t.name + "': unsupported tensorType " + std::to_string(p.tensorType);
        return false;
    }
    if (p.validShape.numDimensions != p.alignedShape.numDimensions) {
        why = "tensor '" + t.name + "': valid and aligned shapes differ in rank";
        return false;
    }
    int64_t size = t.element_size;
    for (int i = p.alignedShape.numDimensions - 1; i >= 0; i--) {
        int32_t valid = p.validShape.dimensionSize[i], aligned = p.alignedShape.dimensionSize[i];
        if (valid < 0 || aligned < valid || aligned > (1 << 24)) {
            why = "tensor '" + t.name + "': bad dimension " + std::to_string(i);
            return false;
        }
        p.stride[i] = (int32_t)size;
        size *= aligned;
        if (size > INT32_MAX) {
            why = "tensor '" + t.name + "': larger than 2 GiB";
            return false;
        }
    }
    p.alignedByteSize = (int32_t)size;
    p.scale.scaleLen = (int32_t)t.scales.size();
    p.scale.zeroPointLen = (int32_t)t.zero_points.size();
    return true;
}

}  // namespace

bool parse_model_file(const uint8_t* data, size_t size, std::vector<ModelDesc>& out, std::string& why) {
    Reader r(data, size);
    char magic[8];
    uint32_t count = 0;
    if (!r.bytes(magic, 8) || std::memcmp(magic, "ACCELHB1", 8) != 0) {
        why = "not a stand-in model file (bad magic)";
        return false;
    }
    if (!r.value(count) || count == 0 || count > 64) {
        why = "bad model count";
        return false;
    }
    out.resize(count);
    for (ModelDesc& m : out) {
        uint32_t n_in = 0, n_out = 0;
        if (!r.string(m.name) || !r.blob(m.accm) || !r.value(n_in) || !r.value(n_out) || n_in > 64 || n_out > 64) {
            if (why.empty()) why = "truncated model record";
            return false;
        }
        m.inputs.resize(n_in);
        m.outputs.resize(n_out);
        for (TensorDesc& t : m.inputs)
            if (!read_tensor(r, t, why)) return why.empty() ? (why = "truncated tensor record", false) : false;
        for (TensorDesc& t : m.outputs)
            if (!read_tensor(r, t, why)) return why.empty() ? (why = "truncated tensor record", false) : false;
    }
    return true;
}

}  // namespace standin
