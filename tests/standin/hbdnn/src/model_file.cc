// model_file.cc - reading the libdnn stand-in's .bin (../FORMAT.md) into DnnModels.
#include "model_file.h"

#include <string>

#include "container.h"

namespace standin {
namespace {

struct Record {
    DnnTensor vendor;
    TensorDesc desc;
};

#include "hb_element_types.inc"

bool read_shape(Reader& r, hbDNNTensorShape& shape) {
    if (!r.value(shape.numDimensions)) return false;
    for (int i = 0; i < HB_DNN_TENSOR_MAX_DIMENSIONS; i++)
        if (!r.value(shape.dimensionSize[i])) return false;
    return shape.numDimensions >= 0 && shape.numDimensions <= HB_DNN_TENSOR_MAX_DIMENSIONS;
}

bool read_tensor(Reader& r, Record& t, std::string& why) {
    hbDNNTensorProperties& p = t.vendor.props;
    TensorDesc& d = t.desc;
    int32_t quanti = 0;
    if (!r.string(d.name) || !r.value(p.tensorLayout) || !r.value(p.tensorType) || !read_shape(r, p.validShape) ||
        !read_shape(r, p.alignedShape) || !r.value(quanti) || !r.value(p.quantizeAxis) ||
        !r.counted(t.vendor.scales, 1u << 20) || !r.counted(t.vendor.zero_points, 1u << 20))
        return false;
    p.quantiType = (hbDNNQuantiType)quanti;
    if (!hb_element_type(p.tensorType, d.type)) {
        why = "tensor '" + d.name + "': unsupported tensorType " + std::to_string(p.tensorType);
        return false;
    }
    if (p.validShape.numDimensions != p.alignedShape.numDimensions) {
        why = "tensor '" + d.name + "': valid and aligned shapes differ in rank";
        return false;
    }
    d.ndim = p.validShape.numDimensions;
    int64_t aligned[kMaxDims] = {0};
    for (int i = 0; i < d.ndim; i++) {
        d.dims[i] = p.validShape.dimensionSize[i];
        aligned[i] = p.alignedShape.dimensionSize[i];
    }
    if (!set_padded_strides(d, aligned, INT32_MAX)) {
        why = "tensor '" + d.name + "': bad dimensions, or larger than 2 GiB";
        return false;
    }
    for (int i = 0; i < d.ndim; i++) p.stride[i] = (int32_t)d.strides[i];
    p.alignedByteSize = (int32_t)d.byte_size;
    p.scale.scaleLen = (int32_t)t.vendor.scales.size();
    p.scale.zeroPointLen = (int32_t)t.vendor.zero_points.size();
    d.quant = quanti == SCALE ? Quant::Scale : quanti == SHIFT ? Quant::Shift : Quant::None;
    d.axis = p.quantizeAxis;
    d.scales = t.vendor.scales;
    d.zero_points.assign(t.vendor.zero_points.begin(), t.vendor.zero_points.end());
    return true;
}

}  // namespace

bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out) {
    std::vector<ModelRecord<Record>> records;
    std::string why;
    if (!parse_container(data, size, "ACCELHB1", read_tensor, records, why)) return false;
    build_models<DnnModel>(records, out);
    return true;
}

}  // namespace standin
