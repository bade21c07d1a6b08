// model_file.cc - reading the hbUCP stand-in's .hbm (../FORMAT.md) into UcpModels.
#include "model_file.h"

#include <string>

#include "container.h"

namespace standin {
namespace ucp {
namespace {

struct Record {
    UcpTensor ucp;
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
        case HB_DNN_TENSOR_TYPE_BOOL8: out = ElementType::Bool8; return true;
        default: return false;  // S4, U4, F64, S64, U64: not in the stand-in
    }
}

// Whether the record's numbers describe a tensor the stand-in can run (`why` says what is wrong).
bool check(const Record& t, std::string& why) {
    const hbDNNTensorProperties& p = t.ucp.props;
    const TensorDesc& d = t.desc;
    for (int i = 0; i < d.ndim; i++)
        if (d.dims[i] < 1 || d.dims[i] > (1 << 24)) why = "bad dimension " + std::to_string(i);
    if (t.ucp.dynamic) {
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
        if (t.ucp.scales.size() != 1 && t.ucp.scales.size() != per_axis) why = "scale count fits no axis";
        if (t.ucp.zero_points.size() > 1 && t.ucp.zero_points.size() != t.ucp.scales.size())
            why = "zero point count differs from the scale count";
    }
    if (!why.empty()) why = "tensor '" + d.name + "': " + why;
    return why.empty();
}

bool read_tensor(Reader& r, Record& t, std::string& why) {
    hbDNNTensorProperties& p = t.ucp.props;
    TensorDesc& d = t.desc;
    int32_t quanti = 0;
    if (!r.string(d.name) || !r.value(p.tensorType) || !r.value(p.validShape.numDimensions)) return false;
    for (int i = 0; i < HB_DNN_TENSOR_MAX_DIMENSIONS; i++)
        if (!r.value(p.validShape.dimensionSize[i])) return false;
    for (int i = 0; i < HB_DNN_TENSOR_MAX_DIMENSIONS; i++)
        if (!r.value(p.stride[i])) return false;
    if (!r.value(p.alignedByteSize) || !r.value(quanti) || !r.value(p.quantizeAxis) ||
        !r.counted(t.ucp.scales, 1u << 20) || !r.counted(t.ucp.zero_points, 1u << 20))
        return false;
    p.quantiType = (hbDNNQuantiType)quanti;
    p.scale.scaleLen = (int32_t)t.ucp.scales.size();
    p.scale.zeroPointLen = (int32_t)t.ucp.zero_points.size();
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
        t.ucp.dynamic = t.ucp.dynamic || p.stride[i] == -1;
    }
    d.byte_size = p.alignedByteSize;
    d.quant = quanti == SCALE ? Quant::Scale : Quant::None;
    d.axis = p.quantizeAxis;
    d.scales = t.ucp.scales;
    d.zero_points = t.ucp.zero_points;
    return check(t, why);
}

}  // namespace

bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out) {
    std::vector<ModelRecord<Record>> records;
    std::string why;
    if (!parse_container(data, size, "ACCELHM1", read_tensor, records, why)) return false;
    for (auto& rec : records) {
        auto m = std::make_shared<UcpModel>();
        m->name = rec.name;
        m->accm = std::move(rec.accm);
        for (Record& t : rec.inputs) {
            m->inputs.push_back(t.desc);
            m->ucp_inputs.push_back(t.ucp);
        }
        for (Record& t : rec.outputs) {
            if (t.ucp.dynamic) return false;  // the runtime writes outputs: their strides are its own
            m->outputs.push_back(t.desc);
            m->ucp_outputs.push_back(t.ucp);
        }
        out.push_back(std::move(m));
    }
    return true;
}

}  // namespace ucp
}  // namespace standin
