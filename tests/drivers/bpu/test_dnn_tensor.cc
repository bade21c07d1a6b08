// test_dnn_tensor.cc - libdnn tensor properties -> the ABI's description (dnn_tensor.cc), for what the
// stand-in's model files cannot carry: image and 64-bit types, SHIFT quantization, bad properties.
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

    // Image and 64-bit types: refused at load, naming the tensor and the type.
    Status s = describe_tensor(props_1x3x8x8(HB_DNN_IMG_TYPE_NV12), "image", "input", &t);
    CHECK(s.code == ACCEL_ERR_UNSUPPORTED && contains(s.message, "input 'image'") &&
          contains(s.message, "IMG_TYPE_NV12"));
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
