// test_dnn_tensor.cc - libdnn tensor properties -> the ABI's description (dnn_tensor.cc), for what the
// stand-in's model files cannot carry: image inputs of every type and layout, 4- and 64-bit types, SHIFT
// quantization, bad properties.
#include <cstring>

#include "dnn_tensor.h"
#include "tensor_check.h"

// With the aligned shape and layout only libdnn has.
static hbDNNTensorProperties props_1x3x8x8(int32_t type) {
    hbDNNTensorProperties p = props_1x3x8x8<hbDNNTensorProperties>(type);
    p.alignedShape.numDimensions = 4;
    const int32_t aligned[4] = {1, 4, 8, 8};
    for (int i = 0; i < 4; i++) p.alignedShape.dimensionSize[i] = aligned[i];
    p.tensorLayout = HB_DNN_LAYOUT_NCHW;
    return p;
}

int main() {
    using accel_bpu::describe_tensor;
    using accel_bpu::Status;
    using accel_bpu::TensorDesc;
    TensorDesc t;

    // An NV12 input (hb_mapper's: valid (1, 3, H, W) NCHW, stride 0): the ABI's NV12 image in one buffer,
    // (1, H * 3/2, W, 1), rows padded to 16 bytes, the UV plane after H rows.
    hbDNNTensorProperties img = props_1x3x8x8(HB_DNN_IMG_TYPE_NV12);
    for (int i = 0; i < 4; i++) img.stride[i] = 0;
    Status s = describe_tensor(img, "image", "input", &t);
    CHECK(s.ok() && t.dtype == ACCEL_DTYPE_UINT8 && t.layout == ACCEL_LAYOUT_NHWC && t.ndim == 4);
    CHECK(t.shape[0] == 1 && t.shape[1] == 12 && t.shape[2] == 8 && t.shape[3] == 1);
    CHECK(t.strides[0] == 192 && t.strides[1] == 16 && t.strides[2] == 1 && t.strides[3] == 1 && t.byte_size == 256);
    CHECK(t.image_format == ACCEL_IMAGE_NV12 && t.plane_count == 2 && t.plane_offset[0] == 0 &&
          t.plane_offset[1] == 128 && t.image_width == 8 && t.image_height == 8 && t.width_align == 2 &&
          t.height_align == 2 && t.quant == ACCEL_QUANT_NONE);
    img.tensorType = HB_DNN_IMG_TYPE_NV12_SEPARATE;  // the same one buffer (the driver splits the planes)
    CHECK(describe_tensor(img, "image", "input", &t).ok() && t.image_format == ACCEL_IMAGE_NV12 &&
          t.plane_offset[1] == 128);
    // Odd sizes, a size that does not hold the padded rows, outputs, batches: refused, naming the input.
    hbDNNTensorProperties odd = img;
    odd.validShape.dimensionSize[2] = odd.alignedShape.dimensionSize[2] = 7;
    s = describe_tensor(odd, "image", "input", &t);
    CHECK(s.code == ACCEL_ERR_MODEL_FORMAT && contains(s.message, "input 'image'") &&
          contains(s.message, "8 x 7 (W x H)") && contains(s.message, "even"));
    hbDNNTensorProperties small = img;
    small.alignedByteSize = 100;
    s = describe_tensor(small, "image", "input", &t);
    CHECK(s.code == ACCEL_ERR_MODEL_FORMAT && contains(s.message, "alignedByteSize 100") && contains(s.message, "192"));
    s = describe_tensor(img, "image", "output", &t);
    CHECK(s.code == ACCEL_ERR_UNSUPPORTED && contains(s.message, "output 'image'") &&
          contains(s.message, "IMG_TYPE_NV12_SEPARATE"));
    hbDNNTensorProperties batch = img;
    batch.validShape.dimensionSize[0] = batch.alignedShape.dimensionSize[0] = 2;
    CHECK(describe_tensor(batch, "image", "input", &t).code == ACCEL_ERR_UNSUPPORTED);
    // Y: (1, H, W, 1), rows padded to 16 bytes. RGB in NHWC: packed pixels of the aligned channels;
    // in NCHW (planar): a plain uint8 NCHW tensor.
    hbDNNTensorProperties y = img;
    y.tensorType = HB_DNN_IMG_TYPE_Y;
    y.validShape.dimensionSize[1] = y.alignedShape.dimensionSize[1] = 1;
    CHECK(describe_tensor(y, "grey", "input", &t).ok() && t.image_format == ACCEL_IMAGE_Y && t.shape[1] == 8 &&
          t.shape[3] == 1 && t.strides[1] == 16 && t.plane_count == 1 && t.width_align == 1 && t.height_align == 1);
    y.validShape.dimensionSize[1] = 3;
    CHECK(describe_tensor(y, "grey", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);
    hbDNNTensorProperties rgb = img;
    rgb.tensorType = HB_DNN_IMG_TYPE_RGB;
    rgb.tensorLayout = HB_DNN_LAYOUT_NHWC;
    const int32_t valid_hwc[4] = {1, 8, 8, 3}, aligned_hwc[4] = {1, 8, 8, 4};
    for (int i = 0; i < 4; i++)
        rgb.validShape.dimensionSize[i] = valid_hwc[i], rgb.alignedShape.dimensionSize[i] = aligned_hwc[i];
    CHECK(describe_tensor(rgb, "rgb", "input", &t).ok() && t.image_format == ACCEL_IMAGE_RGB && t.shape[3] == 3 &&
          t.strides[2] == 4 && t.strides[1] == 32 && t.strides[0] == 256 && t.width_align == 1);
    rgb.tensorType = HB_DNN_IMG_TYPE_BGR;
    CHECK(describe_tensor(rgb, "bgr", "input", &t).ok() && t.image_format == ACCEL_IMAGE_BGR);
    rgb.tensorType = HB_DNN_IMG_TYPE_YUV444;
    CHECK(describe_tensor(rgb, "yuv", "input", &t).ok() && t.image_format == ACCEL_IMAGE_YUV444);
    hbDNNTensorProperties planar = img;
    planar.tensorType = HB_DNN_IMG_TYPE_RGB;
    CHECK(describe_tensor(planar, "rgb", "input", &t).ok() && t.image_format == ACCEL_IMAGE_NONE &&
          t.layout == ACCEL_LAYOUT_NCHW && t.dtype == ACCEL_DTYPE_UINT8 && t.shape[1] == 3 && t.strides[1] == 64);

    // 4- and 64-bit types: refused at load, naming the tensor and the type.
    s = describe_tensor(props_1x3x8x8(HB_DNN_TENSOR_TYPE_S64), "big", "output", &t);
    CHECK(s.code == ACCEL_ERR_UNSUPPORTED && contains(s.message, "output 'big'") &&
          contains(s.message, "TENSOR_TYPE_S64"));
    s = describe_tensor(props_1x3x8x8(HB_DNN_TENSOR_TYPE_S4), "nibbles", "input", &t);
    CHECK(s.code == ACCEL_ERR_UNSUPPORTED && contains(s.message, "TENSOR_TYPE_S4"));
    s = describe_tensor(props_1x3x8x8(77), "odd", "input", &t);
    CHECK(s.code == ACCEL_ERR_UNSUPPORTED && contains(s.message, "77"));

    // Every supported type.
    const struct {
        int32_t type;
        accel_dtype dtype;
    } types[] = {{HB_DNN_TENSOR_TYPE_S8, ACCEL_DTYPE_INT8},     {HB_DNN_TENSOR_TYPE_U8, ACCEL_DTYPE_UINT8},
                 {HB_DNN_TENSOR_TYPE_S16, ACCEL_DTYPE_INT16},   {HB_DNN_TENSOR_TYPE_U16, ACCEL_DTYPE_UINT16},
                 {HB_DNN_TENSOR_TYPE_S32, ACCEL_DTYPE_INT32},   {HB_DNN_TENSOR_TYPE_U32, ACCEL_DTYPE_UINT32},
                 {HB_DNN_TENSOR_TYPE_F16, ACCEL_DTYPE_FLOAT16}, {HB_DNN_TENSOR_TYPE_F32, ACCEL_DTYPE_FLOAT32}};
    for (const auto& k : types) {
        s = describe_tensor(props_1x3x8x8(k.type), "x", "input", &t);
        CHECK(s.ok() && t.dtype == k.dtype && t.layout == ACCEL_LAYOUT_NCHW && t.ndim == 4 && t.byte_size == 256 &&
              t.strides[1] == 64 && t.shape[1] == 3 && t.quant == ACCEL_QUANT_NONE);
    }

    // SHIFT: per tensor and per axis.
    hbDNNTensorProperties p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_S8);
    uint8_t shifts[3] = {4, 5, 6};
    p.quantiType = SHIFT;
    p.shift.shiftLen = 1;
    p.shift.shiftData = shifts;
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.ok() && t.quant == ACCEL_QUANT_SHIFT && t.shifts.size() == 1 && t.shifts[0] == 4 && t.quant_axis == -1);
    p.shift.shiftLen = 3;
    p.quantizeAxis = 1;
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.ok() && t.quant == ACCEL_QUANT_SHIFT && t.shifts.size() == 3 && t.shifts[2] == 6 && t.quant_axis == 1);
    p.quantizeAxis = 2;  // 8 elements there, 3 shifts
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.code == ACCEL_ERR_MODEL_FORMAT && contains(s.message, "quantizeAxis 2"));
    p.shift.shiftData = nullptr;
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.code == ACCEL_ERR_MODEL_FORMAT);

    // SCALE: copies (the model owns them), zero points widened to int32.
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_S8);
    float scales[3] = {0.5f, 0.25f, 0.125f};
    int8_t zero_points[3] = {-3, 0, 7};
    set_scale(p, scales, zero_points, 3, 1);
    s = describe_tensor(p, "x", "input", &t);
    scales[0] = 9.0f;
    CHECK(s.ok() && t.quant == ACCEL_QUANT_PER_AXIS && t.quant_axis == 1 && t.scales.size() == 3 &&
          t.scales[0] == 0.5f && t.zero_points.size() == 3 && t.zero_points[0] == -3 && t.zero_points[2] == 7);
    p.scale.zeroPointLen = 2;
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.code == ACCEL_ERR_MODEL_FORMAT);
    p.scale.scaleLen = 0;
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.code == ACCEL_ERR_MODEL_FORMAT);

    // Layouts, inconsistent shapes.
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_F32);
    p.tensorLayout = HB_DNN_LAYOUT_NHWC;
    CHECK(describe_tensor(p, "x", "input", &t).ok() && t.layout == ACCEL_LAYOUT_NHWC);
    p.tensorLayout = HB_DNN_LAYOUT_NONE;
    CHECK(describe_tensor(p, "x", "input", &t).ok() && t.layout == ACCEL_LAYOUT_NONE);
    p.validShape.numDimensions = 9;
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_F32);
    p.alignedByteSize = 0;
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_F32);
    const int unknown_quanti = 5;  // stored as an int: loading it as the enum would be undefined
    std::memcpy(&p.quantiType, &unknown_quanti, sizeof unknown_quanti);
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_UNSUPPORTED);

    return finish_checks();
}
