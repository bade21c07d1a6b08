// model_file.cc - reading the libdnn stand-in's .bin (../FORMAT.md) into DnnModels.
#include "model_file.h"

#include <string>

#include "container.h"

namespace standin {
namespace {

struct Record {
    std::string name;
    DnnTensor dnn;
    TensorDesc desc;
};

bool element_type(int32_t type, ElementType& out) {
    switch (type) {
        case HB_DNN_TENSOR_TYPE_S8: out = ElementType::I8; return true;
        case HB_DNN_TENSOR_TYPE_U8: out = ElementType::U8; return true;
        case HB_DNN_TENSOR_TYPE_F16: out = ElementType::F16; return true;
        case HB_DNN_TENSOR_TYPE_S16: out = ElementType::I16; return true;
        case HB_DNN_TENSOR_TYPE_U16: out = ElementType::U16; return true;
        case HB_DNN_TENSOR_TYPE_F32: out = ElementType::F32; return true;
        case HB_DNN_TENSOR_TYPE_S32: out = ElementType::I32; return true;
        case HB_DNN_TENSOR_TYPE_U32: out = ElementType::U32; return true;
        default: return false;
    }
}

bool read_shape(Reader& r, hbDNNTensorShape& shape) {
    if (!r.value(shape.numDimensions)) return false;
    for (int i = 0; i < HB_DNN_TENSOR_MAX_DIMENSIONS; i++)
        if (!r.value(shape.dimensionSize[i])) return false;
    return shape.numDimensions >= 0 && shape.numDimensions <= HB_DNN_TENSOR_MAX_DIMENSIONS;
}

bool read_tensor(Reader& r, Record& t, std::string& why) {
    hbDNNTensorProperties& p = t.dnn.props;
    int32_t quanti = 0;
    if (!r.string(t.name) || !r.value(p.tensorLayout) || !r.value(p.tensorType) || !read_shape(r, p.validShape) ||
        !read_shape(r, p.alignedShape) || !r.value(quanti) || !r.value(p.quantizeAxis) ||
        !r.counted(t.dnn.scales, 1u << 20) || !r.counted(t.dnn.zero_points, 1u << 20))
        return false;
    p.quantiType = (hbDNNQuantiType)quanti;
    TensorDesc& d = t.desc;
    d.name = t.name;
    if (!element_type(p.tensorType, d.type)) {
        why = "tensor '" + t.name + "': unsupported tensorType " + std::to_string(p.tensorType);
        return false;
    }
    if (p.validShape.numDimensions != p.alignedShape.numDimensions) {
        why = "tensor '" + t.name + "': valid and aligned shapes differ in rank";
        return false;
    }
    d.ndim = p.validShape.numDimensions;
    int64_t aligned[kMaxDims] = {0};
    for (int i = 0; i < d.ndim; i++) {
        d.dims[i] = p.validShape.dimensionSize[i];
        aligned[i] = p.alignedShape.dimensionSize[i];
    }
    if (!set_padded_strides(d, aligned, INT32_MAX)) {
        why = "tensor '" + t.name + "': bad dimensions, or larger than 2 GiB";
        return false;
    }
    for (int i = 0; i < d.ndim; i++) p.stride[i] = (int32_t)d.strides[i];
    p.alignedByteSize = (int32_t)d.byte_size;
    p.scale.scaleLen = (int32_t)t.dnn.scales.size();
    p.scale.zeroPointLen = (int32_t)t.dnn.zero_points.size();
    d.quant = quanti == SCALE ? Quant::Scale : quanti == SHIFT ? Quant::Shift : Quant::None;
    d.axis = p.quantizeAxis;
    d.scales = t.dnn.scales;
    d.zero_points.assign(t.dnn.zero_points.begin(), t.dnn.zero_points.end());
    return true;
}

}  // namespace

bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out) {
    std::vector<ModelRecord<Record>> records;
    std::string why;
    if (!parse_container(data, size, "ACCELHB1", read_tensor, records, why)) return false;
    for (auto& rec : records) {
        auto m = std::make_shared<DnnModel>();
        m->name = rec.name;
        m->accm = std::move(rec.accm);
        for (Record& t : rec.inputs) {
            m->inputs.push_back(t.desc);
            m->dnn_inputs.push_back(t.dnn);
        }
        for (Record& t : rec.outputs) {
            m->outputs.push_back(t.desc);
            m->dnn_outputs.push_back(t.dnn);
        }
        out.push_back(std::move(m));
    }
    return true;
}

}  // namespace standin
