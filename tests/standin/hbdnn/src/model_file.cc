// model_file.cc - reading the libdnn stand-in's .bin (../FORMAT.md: Horizon's container, the stand-in's model
// records inside) into DnnModels.
#include "model_file.h"

#include <string>

#include "container.h"
#include "protobuf_wire.h"

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

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

// An image input (IMG_TYPE_*; ../FORMAT.md): the vendor's valid and aligned shapes in NCHW or NHWC
// (batch 1; 1 channel for Y, 3 otherwise), as the user lays the frame out: NV12 as the Y plane's H rows
// then the UV plane's H/2, each row W padded to 16 bytes (one block, or two for NV12_SEPARATE), Y rows
// padded to 16 bytes, YUV444/RGB/BGR packed rows of the aligned width. The neutral description is the
// frame as bytes: U8 (1, rows, W, channels), the emulator's input. NV12 and Y strides are 0, as the
// vendor's runtime reports them.
bool read_image(Record& t, int32_t quanti, std::string& why) {
    hbDNNTensorProperties& p = t.vendor.props;
    TensorDesc& d = t.desc;
    const int32_t type = p.tensorType;
    auto fail = [&](const std::string& what) {
        why = "tensor '" + d.name + "': image type " + std::to_string(type) + ": " + what;
        return false;
    };
    int c, h, w;
    if (p.tensorLayout == HB_DNN_LAYOUT_NCHW) c = 1, h = 2, w = 3;
    else if (p.tensorLayout == HB_DNN_LAYOUT_NHWC) h = 1, w = 2, c = 3;
    else return fail("layout neither NCHW nor NHWC");
    if (p.validShape.numDimensions != 4 || p.alignedShape.numDimensions != 4) return fail("not 4 dimensions");
    for (int i = 0; i < 4; i++)
        if (p.validShape.dimensionSize[i] < 1 || p.validShape.dimensionSize[i] > (1 << 16) ||
            p.alignedShape.dimensionSize[i] < p.validShape.dimensionSize[i] ||
            p.alignedShape.dimensionSize[i] > (1 << 16))
            return fail("bad dimension " + std::to_string(i));
    const int64_t channels = p.validShape.dimensionSize[c], height = p.validShape.dimensionSize[h];
    const int64_t width = p.validShape.dimensionSize[w];
    const int64_t aligned_channels = p.alignedShape.dimensionSize[c], aligned_width = p.alignedShape.dimensionSize[w];
    if (p.validShape.dimensionSize[0] != 1) return fail("batch is not 1");
    if (channels != (type == HB_DNN_IMG_TYPE_Y ? 1 : 3)) return fail("wrong channel count");
    if (quanti != NONE) return fail("quantized");
    // NV12 of odd size is loaded (its UV plane rounded up), as no real runtime would be asked to: so that
    // the driver's refusal of it can be tested end to end.
    const bool nv12 = type == HB_DNN_IMG_TYPE_NV12 || type == HB_DNN_IMG_TYPE_NV12_SEPARATE;
    if (!nv12 && type != HB_DNN_IMG_TYPE_Y && p.tensorLayout == HB_DNN_LAYOUT_NCHW)
        return fail("planar (NCHW) 3-channel images are not in the stand-in");
    int64_t pixel = p.tensorLayout == HB_DNN_LAYOUT_NHWC ? aligned_channels : 1, rows = height, row;
    if (nv12) row = align_up(aligned_width, 16), rows = height + (height + 1) / 2, pixel = 1;
    else if (type == HB_DNN_IMG_TYPE_Y) row = align_up(aligned_width * pixel, 16);
    else row = aligned_width * pixel;
    d.type = ElementType::U8;
    d.ndim = 4;
    const int64_t dims[4] = {1, rows, width, nv12 || type == HB_DNN_IMG_TYPE_Y ? 1 : 3};
    const int64_t strides[4] = {row * rows, row, pixel, 1};
    for (int i = 0; i < 4; i++) {
        d.dims[i] = dims[i];
        d.strides[i] = strides[i];
        p.stride[i] = nv12 || type == HB_DNN_IMG_TYPE_Y ? 0 : (int32_t)strides[i];
    }
    d.byte_size = row * rows;
    d.second_plane_row = nv12 ? height : 0;
    p.alignedByteSize = (int32_t)d.byte_size;
    p.quantiType = NONE;
    return true;
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
    if (p.tensorType >= HB_DNN_IMG_TYPE_Y && p.tensorType <= HB_DNN_IMG_TYPE_BGR) return read_image(t, quanti, why);
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

// A TensorProto's name and first string (ONNX's numbering: 8 name, 2 data_type, 6 string_data); `packed` when it
// is the string tensor PACKED_HBM_MODEL (or one named from it, where a graph has several BPU parts).
void read_initializer(protobuf::Wire t, std::string& packed, bool& found) {
    std::string name, first;
    bool has_string = false;
    uint64_t type = 0;
    uint32_t field = 0, wire = 0;
    while (t.next(field, wire, "TensorProto")) {
        if (field == 8 && wire == protobuf::LEN) name = t.bytes("TensorProto.name");
        else if (field == 2 && wire == protobuf::VARINT) type = t.varint("TensorProto.data_type");
        else if (field == 6 && wire == protobuf::LEN && !has_string)
            first = t.bytes("TensorProto.string_data"), has_string = true;
        else t.skip(wire, "TensorProto");
    }
    if (type == 8 && has_string && name.rfind("PACKED_HBM_MODEL", 0) == 0) {
        if (found) protobuf::malformed("a graph with more than one PACKED_HBM_MODEL (several BPU parts)");
        packed = std::move(first);
        found = true;
    }
}

// One graph (ONNX's GraphProto numbering: 2 name, 5 initializer): its name and its BPU part's bytes.
void read_graph(protobuf::Wire g, std::string& name, std::string& packed) {
    bool found = false;
    uint32_t field = 0, wire = 0;
    while (g.next(field, wire, "graph")) {
        if (field == 2 && wire == protobuf::LEN) name = g.bytes("graph name");
        else if (field == 5 && wire == protobuf::LEN) read_initializer(g.message("initializer"), packed, found);
        else g.skip(wire, "graph");
    }
    if (!found) protobuf::malformed("graph '" + name + "' has no PACKED_HBM_MODEL (no BPU part)");
}

// The BPU part's bytes: the march's magic, the stand-in's tag, one model record. A part compiled for another march
// is refused as libdnn refuses it (the stand-in is X5's libdnn).
bool read_packed(const std::string& packed, ModelRecord<Record>& m, std::string& why) {
    static const char kMagic[] = "#B2Ehbm", kTag[] = "ACCELHB2";
    if (packed.compare(0, 7, kMagic) != 0) {
        why = packed.compare(0, 7, "#X2Ahbm") == 0   ? "compiled for bernoulli2 (RDK X3), not bayes-e (RDK X5)"
              : packed.compare(0, 7, "#B25hbm") == 0 ? "compiled for bayes (J5), not bayes-e (RDK X5)"
                                                     : "its PACKED_HBM_MODEL is no march's";
        return false;
    }
    if (packed.compare(7, 8, kTag) != 0) {
        why = "its PACKED_HBM_MODEL is a real hbm: Horizon's runtime alone executes it";
        return false;
    }
    Reader r(reinterpret_cast<const uint8_t*>(packed.data()) + 15, packed.size() - 15);
    return read_model_record(r, read_tensor, m, why);
}

}  // namespace

// Horizon's container (../FORMAT.md): a protobuf message whose field 5 holds the graphs, one per model.
bool parse_model_file(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out) {
    std::vector<ModelRecord<Record>> records;
    std::string why;
    try {
        protobuf::Wire top(data, size, 0);
        uint32_t field = 0, wire = 0;
        while (top.next(field, wire, "the .bin")) {
            if (field != 5 || wire != protobuf::LEN) {
                top.skip(wire, "the .bin");
                continue;
            }
            std::string name, packed;
            read_graph(top.message("graph"), name, packed);
            records.emplace_back();
            if (!read_packed(packed, records.back(), why) || records.size() > 64) return false;
            if (records.back().name != name) return false;
        }
    } catch (const std::runtime_error&) {
        return false;
    }
    if (records.empty()) return false;
    build_models<DnnModel>(records, out);
    return true;
}

}  // namespace standin
