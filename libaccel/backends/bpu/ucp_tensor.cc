// ucp_tensor.cc - see ucp_tensor.h.
#include "ucp_tensor.h"

#include <cstring>

namespace accel_bpu {
namespace {

#include "hb_tensor.inc"

// hbDNNDataType's names, by value (for messages).
const char* const kTypeNames[] = {"TENSOR_TYPE_S4",  "TENSOR_TYPE_U4",   "TENSOR_TYPE_S8",  "TENSOR_TYPE_U8",
                                  "TENSOR_TYPE_F16", "TENSOR_TYPE_S16",  "TENSOR_TYPE_U16", "TENSOR_TYPE_F32",
                                  "TENSOR_TYPE_S32", "TENSOR_TYPE_U32",  "TENSOR_TYPE_F64", "TENSOR_TYPE_S64",
                                  "TENSOR_TYPE_U64", "TENSOR_TYPE_BOOL8"};

int64_t element_size(accel_dtype t) {
    switch (t) {
        case ACCEL_DTYPE_INT8:
        case ACCEL_DTYPE_UINT8:
        case ACCEL_DTYPE_BOOL: return 1;
        case ACCEL_DTYPE_INT16:
        case ACCEL_DTYPE_UINT16:
        case ACCEL_DTYPE_FLOAT16: return 2;
        default: return 4;
    }
}

// Largest buffer a tensor may describe; keeps every product below in range.
constexpr int64_t kMaxBytes = int64_t(1) << 48;

// S100 NV12 inputs (hb_compile): two U8 inputs, `<x>_y` of valid shape (1, H, W, 1) and then `<x>_uv`
// (1, H/2, W/2, 2), their outer strides dynamic. Horizon's S100 documentation (dynamic inputs) asks the
// row stride and the plane stride of both aligned to 32 bytes: stride[1] = ALIGN_32(stride[2] * W),
// stride[0] = ALIGN_32(stride[1] * H).
constexpr int64_t kPlaneAlign = 32;

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

bool ends_with(const std::string& s, const char* tail) {
    const size_t n = std::strlen(tail);
    return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
}

// A 4-dimensional U8 tensor of batch 1 whose last dimension is `channels`.
bool plane_like(const TensorDesc& t, int64_t channels) {
    return t.dtype == ACCEL_DTYPE_UINT8 && t.ndim == 4 && t.shape[0] == 1 && t.shape[3] == channels;
}

// Dynamic strides of a plane re-filled with Horizon's 32-byte alignment of rows and planes (static ones
// kept); the properties passed at inference and the buffer size follow.
void align_plane(TensorDesc& t, hbDNNTensorProperties& p) {
    if (!(t.dynamic_strides & 3u)) return;  // the model's own layout
    for (int i = 1; i >= 0; i--)
        if (t.dynamic_strides & (1u << i)) t.strides[i] = align_up(t.strides[i + 1] * t.shape[i + 1], kPlaneAlign);
    t.byte_size = (uint64_t)(t.strides[0] * t.shape[0]);
    for (uint32_t i = 0; i < t.ndim; i++) p.stride[i] = t.strides[i];
    p.alignedByteSize = (int64_t)t.byte_size;
}

void mark_plane(TensorDesc& t, accel_image_format format, int64_t width, int64_t height) {
    t.image_format = format;
    t.layout = ACCEL_LAYOUT_NHWC;
    t.plane_count = 1;
    t.image_width = (uint32_t)width;
    t.image_height = (uint32_t)height;
    t.width_align = t.height_align = 2;  // 4:2:0; the rows' 32-byte alignment is in the strides
}

}  // namespace

Status describe_image_inputs(std::vector<TensorDesc>& inputs, std::vector<hbDNNTensorProperties>& props) {
    for (size_t i = 0; i + 1 < inputs.size(); i++) {
        TensorDesc &y = inputs[i], &uv = inputs[i + 1];
        if (!ends_with(y.name, "_y") || uv.name != y.name.substr(0, y.name.size() - 2) + "_uv" || !plane_like(y, 1) ||
            !plane_like(uv, 2))
            continue;
        const int64_t height = y.shape[1], width = y.shape[2];
        if (height % 2 || width % 2 || uv.shape[1] != height / 2 || uv.shape[2] != width / 2)
            return Status{ACCEL_ERR_MODEL_FORMAT,
                          "inputs '" + y.name + "' (1, " + std::to_string(height) + ", " + std::to_string(width) +
                              ", 1) and '" + uv.name + "' (1, " + std::to_string(uv.shape[1]) + ", " +
                              std::to_string(uv.shape[2]) + ", 2) are not the Y and UV planes of one NV12 image: " +
                              "NV12 needs an even width and height, and UV planes of half of each"};
        align_plane(y, props[i]);
        align_plane(uv, props[i + 1]);
        mark_plane(y, ACCEL_IMAGE_NV12_Y, width, height);
        mark_plane(uv, ACCEL_IMAGE_NV12_UV, width, height);
        i++;
    }
    return Status{};
}

Status describe_tensor(hbDNNTensorProperties& p, const char* name, const char* kind, TensorDesc* out) {
    TensorDesc t;
    t.name = name ? name : "";
    const std::string what = std::string(kind) + " '" + t.name + "'";
    t.dtype = p.tensorType == HB_DNN_TENSOR_TYPE_BOOL8 ? ACCEL_DTYPE_BOOL : plain_dtype(p.tensorType);
    if (t.dtype == ACCEL_DTYPE_UNKNOWN)
        return unsupported_type(what, name_in(kTypeNames, p.tensorType), p.tensorType,
                                "S8, U8, S16, U16, S32, U32, F16, F32 and BOOL8");
    t.layout = ACCEL_LAYOUT_NONE;  // S100 tensors say nothing of NCHW or NHWC
    const hbDNNTensorShape& valid = p.validShape;
    if (valid.numDimensions < 0 || valid.numDimensions > HB_DNN_TENSOR_MAX_DIMENSIONS)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + " has " + std::to_string(valid.numDimensions) + " dimensions");
    if (valid.numDimensions > ACCEL_MAX_DIMS)
        return bad(ACCEL_ERR_UNSUPPORTED, what + " has " + std::to_string(valid.numDimensions) +
                                              " dimensions; the accel ABI describes at most " +
                                              std::to_string(ACCEL_MAX_DIMS));
    t.ndim = (uint32_t)valid.numDimensions;
    bool dynamic = false;
    // From the innermost dimension out: a dynamic stride is the span of the next dimension's elements.
    int64_t inner = element_size(t.dtype);
    for (int i = (int)t.ndim - 1; i >= 0; i--) {
        const int64_t size = valid.dimensionSize[i], stride = p.stride[i];
        if (size < 0 || stride < -1 || stride > kMaxBytes)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + ": size " + std::to_string(size) + " and stride " +
                                                   std::to_string(stride) + " in dimension " + std::to_string(i));
        t.shape[i] = size;
        t.strides[i] = stride == -1 ? inner : stride;
        dynamic |= stride == -1;
        if (stride == -1) t.dynamic_strides |= 1u << i;
        if (size && t.strides[i] > kMaxBytes / size)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + ": its strides reach beyond 2^48 bytes");
        inner = t.strides[i] * (size ? size : 1);
    }
    if (dynamic) {
        // The whole of the outermost dimension, as a static layout's alignedByteSize counts it.
        p.alignedByteSize = t.ndim ? t.strides[0] * t.shape[0] : element_size(t.dtype);
        for (uint32_t i = 0; i < t.ndim; i++) p.stride[i] = t.strides[i];
    }
    if (p.alignedByteSize <= 0)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + " has alignedByteSize " + std::to_string(p.alignedByteSize));
    t.byte_size = (uint64_t)p.alignedByteSize;
    // S100 has no SHIFT.
    Status st = describe_quantization(p, what, &t, [&](int quanti) { return refuse_quanti(what, quanti); });
    if (!st.ok()) return st;
    *out = std::move(t);
    return Status{};
}

}  // namespace accel_bpu
