// dnn_tensor.cc - see dnn_tensor.h.
#include "dnn_tensor.h"

#include <cstring>

namespace accel_bpu {
namespace {

#include "hb_tensor.inc"

// hbDNNDataType's names, by value (for messages).
const char* const kTypeNames[] = {"IMG_TYPE_Y",      "IMG_TYPE_NV12",   "IMG_TYPE_NV12_SEPARATE", "IMG_TYPE_YUV444",
                                  "IMG_TYPE_RGB",    "IMG_TYPE_BGR",    "TENSOR_TYPE_S4",         "TENSOR_TYPE_U4",
                                  "TENSOR_TYPE_S8",  "TENSOR_TYPE_U8",  "TENSOR_TYPE_F16",        "TENSOR_TYPE_S16",
                                  "TENSOR_TYPE_U16", "TENSOR_TYPE_F32", "TENSOR_TYPE_S32",        "TENSOR_TYPE_U32",
                                  "TENSOR_TYPE_F64", "TENSOR_TYPE_S64", "TENSOR_TYPE_U64"};

// SHIFT (X3/X5 only): real = q / 2^shift, per tensor or along quantizeAxis.
Status describe_shift(const hbDNNTensorProperties& p, const std::string& what, TensorDesc* t) {
    const hbDNNQuantiShift& s = p.shift;
    if (s.shiftLen <= 0 || !s.shiftData)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + " is SHIFT-quantized without shifts");
    t->quant = ACCEL_QUANT_SHIFT;
    t->shifts.assign(s.shiftData, s.shiftData + s.shiftLen);
    if (s.shiftLen > 1) {
        Status st = check_axis(*t, p.quantizeAxis, s.shiftLen, "shifts", what);
        if (!st.ok()) return st;
        t->quant_axis = p.quantizeAxis;
    }
    return Status{};
}

// An image input (X3/X5 hb_mapper's input_type_rt): its valid shape is the model's (1, 3, H, W) in NCHW
// or (1, H, W, 3) in NHWC (one channel for Y), alignedShape the padded one, and for NV12 and Y the
// strides are 0: the rows are W padded to 16 bytes (Horizon's data alignment rules: NV12 and Y ask a
// width aligned to 16 and nothing else). Described as the ABI's image tensors: uint8, NHWC, batch 1,
// NV12 in one buffer (1, H * 3/2, W, 1) with the UV plane after the Y plane's H padded rows (for
// NV12_SEPARATE too: the driver hands libdnn the two planes of that one buffer), Y (1, H, W, 1), YUV444,
// RGB and BGR packed (1, H, W, 3). Planar (NCHW) 3-channel images are not the ABI's image formats: they
// are described as plain uint8 NCHW tensors.
constexpr int64_t kMaxImageSide = int64_t(1) << 16;
constexpr int64_t kRowAlign = 16;  // bytes, NV12 and Y rows

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

Status describe_image(const hbDNNTensorProperties& p, const char* kind, const std::string& what, TensorDesc* t) {
    const int32_t type = p.tensorType;
    const std::string image = std::string("an ") + name_in(kTypeNames, type) + " image";
    if (std::strcmp(kind, "input") != 0)
        return bad(ACCEL_ERR_UNSUPPORTED,
                   what + " has type " + name_in(kTypeNames, type) +
                       ": image types are for inputs; the bpu driver does not read image outputs");
    const hbDNNTensorShape &valid = p.validShape, &aligned = p.alignedShape;
    if (valid.numDimensions != 4 || aligned.numDimensions != 4)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + ": " + image + " of " + std::to_string(valid.numDimensions) +
                                               " dimensions (valid) and " + std::to_string(aligned.numDimensions) +
                                               " (aligned); images have 4");
    int c, h, w;  // indices of the channel, height and width dimensions
    if (p.tensorLayout == HB_DNN_LAYOUT_NCHW) c = 1, h = 2, w = 3;
    else if (p.tensorLayout == HB_DNN_LAYOUT_NHWC) h = 1, w = 2, c = 3;
    else return bad(ACCEL_ERR_MODEL_FORMAT, what + ": " + image + " with neither NCHW nor NHWC layout");
    for (int i = 0; i < 4; i++)
        if (valid.dimensionSize[i] <= 0 || valid.dimensionSize[i] > kMaxImageSide ||
            aligned.dimensionSize[i] < valid.dimensionSize[i] || aligned.dimensionSize[i] > kMaxImageSide)
            return bad(ACCEL_ERR_MODEL_FORMAT, what + ": " + image + " whose dimension " + std::to_string(i) + " is " +
                                                   std::to_string(valid.dimensionSize[i]) + " (aligned " +
                                                   std::to_string(aligned.dimensionSize[i]) + ")");
    const int64_t batch = valid.dimensionSize[0], channels = valid.dimensionSize[c];
    const int64_t height = valid.dimensionSize[h], width = valid.dimensionSize[w];
    const int64_t aligned_channels = aligned.dimensionSize[c], aligned_width = aligned.dimensionSize[w];
    const std::string size = std::to_string(width) + " x " + std::to_string(height) + " (W x H)";
    if (batch != 1)
        return bad(ACCEL_ERR_UNSUPPORTED,
                   what + ": " + image + " of batch " + std::to_string(batch) + "; image inputs take one frame");
    const int64_t want_channels = type == HB_DNN_IMG_TYPE_Y ? 1 : 3;
    if (channels != want_channels)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + ": " + image + " of " + std::to_string(channels) +
                                               " channels (it has " + std::to_string(want_channels) + ")");
    if (quanti_type(p) != NONE)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + ": " + image + " with quantiType " + std::to_string(quanti_type(p)) +
                                               " (images are plain uint8)");
    t->dtype = ACCEL_DTYPE_UINT8;
    t->layout = ACCEL_LAYOUT_NHWC;
    t->ndim = 4;
    t->image_width = (uint32_t)width;
    t->image_height = (uint32_t)height;
    t->width_align = t->height_align = 1;
    t->plane_count = 1;
    int64_t row = 0, rows = height, pixel = 1;  // bytes per row and per pixel, rows in the buffer
    switch (type) {
        case HB_DNN_IMG_TYPE_NV12:
        case HB_DNN_IMG_TYPE_NV12_SEPARATE:
            if (width % 2 || height % 2)
                return bad(ACCEL_ERR_MODEL_FORMAT,
                           what + ": " + image + " of " + size + "; NV12 needs an even width and height (4:2:0)");
            t->image_format = ACCEL_IMAGE_NV12;
            row = align_up(aligned_width, kRowAlign);
            rows = height * 3 / 2;
            t->plane_count = 2;
            t->plane_offset[1] = (uint64_t)(row * height);
            // Horizon's 16-byte row alignment is in the strides; the size itself only has to be even.
            t->width_align = t->height_align = 2;
            break;
        case HB_DNN_IMG_TYPE_Y:
            t->image_format = ACCEL_IMAGE_Y;
            pixel = p.tensorLayout == HB_DNN_LAYOUT_NHWC ? aligned_channels : 1;
            row = align_up(aligned_width * pixel, kRowAlign);
            break;
        default:
            if (p.tensorLayout == HB_DNN_LAYOUT_NCHW) {  // planar: a plain uint8 tensor
                t->layout = ACCEL_LAYOUT_NCHW;
                t->plane_count = 0;
                t->image_width = t->image_height = t->width_align = t->height_align = 0;
                const int64_t plane = aligned.dimensionSize[2] * aligned_width;
                const int64_t dims[4] = {1, channels, height, width},
                              strides[4] = {aligned_channels * plane, plane, aligned_width, 1};
                for (int i = 0; i < 4; i++) t->shape[i] = dims[i], t->strides[i] = strides[i];
                break;
            }
            t->image_format = type == HB_DNN_IMG_TYPE_YUV444 ? ACCEL_IMAGE_YUV444
                              : type == HB_DNN_IMG_TYPE_RGB  ? ACCEL_IMAGE_RGB
                                                             : ACCEL_IMAGE_BGR;
            pixel = aligned_channels;
            row = aligned_width * pixel;
            break;
    }
    if (t->image_format != ACCEL_IMAGE_NONE) {
        const int64_t dims[4] = {1, rows, width,
                                 t->image_format == ACCEL_IMAGE_Y || t->image_format == ACCEL_IMAGE_NV12 ? 1 : 3};
        const int64_t strides[4] = {row * rows, row, pixel, 1};
        for (int i = 0; i < 4; i++) t->shape[i] = dims[i], t->strides[i] = strides[i];
    }
    const int64_t needed = t->strides[0];
    if (p.alignedByteSize < needed)
        return bad(ACCEL_ERR_MODEL_FORMAT, what + ": alignedByteSize " + std::to_string(p.alignedByteSize) +
                                               " does not hold " + image + " of " + size + " in rows of " +
                                               std::to_string(t->strides[t->image_format == ACCEL_IMAGE_NONE ? 2 : 1]) +
                                               " bytes (" + std::to_string(needed) + " bytes)");
    t->byte_size = (uint64_t)p.alignedByteSize;
    return Status{};
}

}  // namespace

Status describe_tensor(const hbDNNTensorProperties& p, const char* name, const char* kind, TensorDesc* out) {
    TensorDesc t;
    t.name = name ? name : "";
    const std::string what = std::string(kind) + " '" + t.name + "'";
    if (p.tensorType >= HB_DNN_IMG_TYPE_Y && p.tensorType <= HB_DNN_IMG_TYPE_BGR) {
        Status st = describe_image(p, kind, what, &t);
        if (st.ok()) *out = std::move(t);
        return st;
    }
    t.dtype = plain_dtype(p.tensorType);
    if (t.dtype == ACCEL_DTYPE_UNKNOWN)
        return unsupported_type(what, name_in(kTypeNames, p.tensorType), p.tensorType,
                                "the image types, S8, U8, S16, U16, S32, U32, F16 and F32");
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
    Status st = describe_quantization(p, what, &t, [&](int quanti) {
        return quanti == SHIFT ? describe_shift(p, what, &t) : refuse_quanti(what, quanti);
    });
    if (!st.ok()) return st;
    *out = std::move(t);
    return Status{};
}

}  // namespace accel_bpu
