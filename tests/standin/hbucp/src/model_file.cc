// model_file.cc - reading the hbUCP stand-in's .hbm (../FORMAT.md) into UcpModels.
#include "model_file.h"

#include <string>

#include "container.h"

namespace standin {
namespace ucp {
namespace {

struct Record {
    UcpTensor vendor;
    TensorDesc desc;
};

#include "hb_element_types.inc"

bool element_type(int32_t type, ElementType& out) {
    if (type != HB_DNN_TENSOR_TYPE_BOOL8) return hb_element_type(type, out);
    out = ElementType::Bool8;
    return true;
}

// Whether the record's numbers describe a tensor the stand-in can run (`why` says what is wrong).
bool check(const Record& t, std::string& why) {
    const hbDNNTensorProperties& p = t.vendor.props;
    const TensorDesc& d = t.desc;
    for (int i = 0; i < d.ndim; i++)
        if (d.dims[i] < 1 || d.dims[i] > (1 << 24)) why = "bad dimension " + std::to_string(i);
    if (t.vendor.dynamic) {
        if (p.alignedByteSize != -1) why = "a dynamic stride needs alignedByteSize -1";
    } else if (!strides_valid(d)) {
        why = "strides overlap or are below the element size";
    } else if (p.alignedByteSize < span_bytes(d) || p.alignedByteSize > (int64_t(1) << 32)) {
        why = "alignedByteSize does not cover the strides (or passes 4 GiB)";
    }
    if (p.quantiType != NONE && p.quantiType != SCALE) why = "bad quantiType";
    if (p.quantizeAxis < -1 || p.quantizeAxis >= d.ndim) why = "bad quantizeAxis";
    if (p.quantiType == SCALE) {
        size_t per_axis = p.quantizeAxis >= 0 ? (size_t)d.dims[p.quantizeAxis] : 1;
        if (t.vendor.scales.size() != 1 && t.vendor.scales.size() != per_axis) why = "scale count fits no axis";
        if (t.vendor.zero_points.size() > 1 && t.vendor.zero_points.size() != t.vendor.scales.size())
            why = "zero point count differs from the scale count";
    }
    if (!why.empty()) why = "tensor '" + d.name + "': " + why;
    return why.empty();
}

bool read_tensor(Reader& r, Record& t, std::string& why) {
    hbDNNTensorProperties& p = t.vendor.props;
    TensorDesc& d = t.desc;
    int32_t quanti = 0;
    if (!r.string(d.name) || !r.value(p.tensorType) || !r.value(p.validShape.numDimensions)) return false;
    for (int i = 0; i < HB_DNN_TENSOR_MAX_DIMENSIONS; i++)
        if (!r.value(p.validShape.dimensionSize[i])) return false;
    for (int i = 0; i < HB_DNN_TENSOR_MAX_DIMENSIONS; i++)
        if (!r.value(p.stride[i])) return false;
    if (!r.value(p.alignedByteSize) || !r.value(quanti) || !r.value(p.quantizeAxis) ||
        !r.counted(t.vendor.scales, 1u << 20) || !r.counted(t.vendor.zero_points, 1u << 20))
        return false;
    p.quantiType = (hbDNNQuantiType)quanti;
    p.scale.scaleLen = (int32_t)t.vendor.scales.size();
    p.scale.zeroPointLen = (int32_t)t.vendor.zero_points.size();
    if (!element_type(p.tensorType, d.type)) {
        why = "tensor '" + d.name + "': unsupported tensorType " + std::to_string(p.tensorType);
        return false;
    }
    if (p.validShape.numDimensions < 0 || p.validShape.numDimensions > HB_DNN_TENSOR_MAX_DIMENSIONS) {
        why = "tensor '" + d.name + "': bad rank";
        return false;
    }
    d.ndim = p.validShape.numDimensions;
    for (int i = 0; i < d.ndim; i++) {
        d.dims[i] = p.validShape.dimensionSize[i];
        d.strides[i] = p.stride[i];
        t.vendor.dynamic = t.vendor.dynamic || p.stride[i] == -1;
    }
    d.byte_size = p.alignedByteSize;
    d.quant = quanti == SCALE ? Quant::Scale : Quant::None;
    d.axis = p.quantizeAxis;
    d.scales = t.vendor.scales;
    d.zero_points = t.vendor.zero_points;
    return check(t, why);
}

}  // namespace

bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out) {
    std::vector<ModelRecord<Record>> records;
    std::string why;
    if (!parse_container(data, size, "ACCELHM1", read_tensor, records, why)) return false;
    for (auto& rec : records)
        for (Record& t : rec.outputs)
            if (t.vendor.dynamic) return false;  // the runtime writes outputs: their strides are its own
    build_models<UcpModel>(records, out);
    return true;
}

}  // namespace ucp
}  // namespace standin
