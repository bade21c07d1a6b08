// test_ucp_tensor.cc - S100 hbDNN tensor properties -> the ABI's description (ucp_tensor.cc), for what
// the stand-in's model files cannot carry or the driver tests do not reach: more dimensions than the ABI
// has, 4- and 64-bit types, dynamic strides in several places, bad properties.
#include <cstring>
#include <vector>

#include "ucp_tensor.h"
// After the generation's header: its names are used there.
#include "tensor_check.h"

static hbDNNTensorProperties props_1x3x8x8(int32_t type) { return props_1x3x8x8<hbDNNTensorProperties>(type); }

int main() {
    using accel_bpu::describe_tensor;
    using accel_bpu::Status;
    using accel_bpu::TensorDesc;
    TensorDesc t;

    // Types the ABI has no dtype for: refused at load, naming the tensor and the type.
    hbDNNTensorProperties p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_S64);
    Status s = describe_tensor(p, "big", "output", &t);
    CHECK(s.code == ACCEL_ERR_UNSUPPORTED && contains(s.message, "output 'big'") &&
          contains(s.message, "TENSOR_TYPE_S64"));
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_U4);
    s = describe_tensor(p, "nibbles", "input", &t);
    CHECK(s.code == ACCEL_ERR_UNSUPPORTED && contains(s.message, "TENSOR_TYPE_U4"));
    p = props_1x3x8x8(77);
    CHECK(describe_tensor(p, "odd", "input", &t).code == ACCEL_ERR_UNSUPPORTED);

    // Every supported type; no layout (S100 properties have none), strides and size as given.
    const struct {
        int32_t type;
        accel_dtype dtype;
    } types[] = {{HB_DNN_TENSOR_TYPE_S8, ACCEL_DTYPE_INT8},     {HB_DNN_TENSOR_TYPE_U8, ACCEL_DTYPE_UINT8},
                 {HB_DNN_TENSOR_TYPE_S16, ACCEL_DTYPE_INT16},   {HB_DNN_TENSOR_TYPE_U16, ACCEL_DTYPE_UINT16},
                 {HB_DNN_TENSOR_TYPE_S32, ACCEL_DTYPE_INT32},   {HB_DNN_TENSOR_TYPE_U32, ACCEL_DTYPE_UINT32},
                 {HB_DNN_TENSOR_TYPE_F16, ACCEL_DTYPE_FLOAT16}, {HB_DNN_TENSOR_TYPE_F32, ACCEL_DTYPE_FLOAT32},
                 {HB_DNN_TENSOR_TYPE_BOOL8, ACCEL_DTYPE_BOOL}};
    for (const auto& k : types) {
        p = props_1x3x8x8(k.type);
        s = describe_tensor(p, "x", "input", &t);
        CHECK(s.ok() && t.dtype == k.dtype && t.layout == ACCEL_LAYOUT_NONE && t.ndim == 4 && t.byte_size == 256 &&
              t.strides[1] == 64 && t.shape[1] == 3 && t.quant == ACCEL_QUANT_NONE);
    }

    // Up to 10 dimensions in the runtime, ACCEL_MAX_DIMS in the ABI: more is refused, naming the tensor.
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_U8);
    p.validShape.numDimensions = ACCEL_MAX_DIMS + 1;
    for (int i = 0; i < ACCEL_MAX_DIMS + 1; i++) p.validShape.dimensionSize[i] = 1, p.stride[i] = 1;
    s = describe_tensor(p, "deep", "input", &t);
    CHECK(s.code == ACCEL_ERR_UNSUPPORTED && contains(s.message, "input 'deep'") &&
          contains(s.message, "9 dimensions"));
    p.validShape.numDimensions = HB_DNN_TENSOR_MAX_DIMENSIONS + 1;
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);
    p.validShape.numDimensions = ACCEL_MAX_DIMS;
    CHECK(describe_tensor(p, "x", "input", &t).ok() && t.ndim == ACCEL_MAX_DIMS);

    // Dynamic strides: dense over the next dimension's span (padding of static inner strides kept);
    // the properties the driver passes get them, and the size they reach.
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_S16);
    p.stride[0] = p.stride[1] = p.stride[3] = -1;
    p.stride[2] = 32;  // rows of 8 S16 padded to 16
    p.alignedByteSize = -1;
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.ok() && t.strides[3] == 2 && t.strides[2] == 32 && t.strides[1] == 256 && t.strides[0] == 768 &&
          t.byte_size == 768);
    CHECK(p.stride[3] == 2 && p.stride[1] == 256 && p.stride[0] == 768 && p.alignedByteSize == 768);
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_F32);
    p.stride[0] = -2;
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_F32);
    p.alignedByteSize = 0;
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_F32);
    p.validShape.dimensionSize[0] = 1 << 30, p.stride[0] = int64_t(1) << 40;
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);

    // SCALE with int32 zero points, per tensor and per axis.
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_S32);
    float scales[3] = {0.5f, 0.25f, 0.125f};
    int32_t zero_points[3] = {-70000, 0, 1000};
    set_scale(p, scales, zero_points, 3, 1);
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.ok() && t.quant == ACCEL_QUANT_PER_AXIS && t.quant_axis == 1 && t.scales.size() == 3 &&
          t.zero_points.size() == 3 && t.zero_points[0] == -70000 && t.zero_points[2] == 1000);
    p.quantizeAxis = 2;
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);
    p.scale.scaleLen = p.scale.zeroPointLen = 1;
    s = describe_tensor(p, "x", "input", &t);
    CHECK(s.ok() && t.quant == ACCEL_QUANT_PER_TENSOR && t.quant_axis == -1 && t.zero_points[0] == -70000);
    p.scale.zeroPointLen = 2;
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_MODEL_FORMAT);
    p = props_1x3x8x8(HB_DNN_TENSOR_TYPE_F32);
    const int unknown_quanti = 2;  // SHIFT on X3/X5; S100 has no such quantization
    std::memcpy(&p.quantiType, &unknown_quanti, sizeof unknown_quanti);
    CHECK(describe_tensor(p, "x", "input", &t).code == ACCEL_ERR_UNSUPPORTED);

    // hb_compile's NV12 pair: `<x>_y` (1, H, W, 1) then `<x>_uv` (1, H/2, W/2, 2), outer strides dynamic:
    // marked NV12_Y / NV12_UV, rows and planes aligned to 32 bytes (in the properties passed at inference too).
    {
        std::vector<TensorDesc> ins(3);
        std::vector<hbDNNTensorProperties> props(3);
        const int32_t dims[2][4] = {{1, 8, 24, 1}, {1, 4, 12, 2}};
        const char* names[3] = {"images_y", "images_uv", "roi"};
        for (int k = 0; k < 2; k++) {
            hbDNNTensorProperties& q = props[k];
            q = props_1x3x8x8(HB_DNN_TENSOR_TYPE_U8);
            for (int i = 0; i < 4; i++) q.validShape.dimensionSize[i] = dims[k][i];
            q.stride[0] = q.stride[1] = -1, q.stride[2] = dims[k][3], q.stride[3] = 1;
            q.alignedByteSize = -1;
            CHECK(describe_tensor(q, names[k], "input", &ins[k]).ok());
        }
        props[2] = props_1x3x8x8(HB_DNN_TENSOR_TYPE_S32);
        CHECK(describe_tensor(props[2], names[2], "input", &ins[2]).ok());
        std::vector<TensorDesc> keep = ins;
        std::vector<hbDNNTensorProperties> keep_props = props;
        CHECK(accel_bpu::describe_image_inputs(ins, props).ok());
        CHECK(ins[0].image_format == ACCEL_IMAGE_NV12_Y && ins[1].image_format == ACCEL_IMAGE_NV12_UV &&
              ins[2].image_format == ACCEL_IMAGE_NONE);
        CHECK(ins[0].image_width == 24 && ins[0].image_height == 8 && ins[1].image_width == 24 &&
              ins[1].image_height == 8 && ins[0].plane_count == 1 && ins[0].layout == ACCEL_LAYOUT_NHWC);
        CHECK(ins[0].strides[1] == 32 && ins[0].strides[0] == 256 && ins[0].byte_size == 256);
        CHECK(ins[1].strides[2] == 2 && ins[1].strides[1] == 32 && ins[1].strides[0] == 128 && ins[1].byte_size == 128);
        CHECK(props[0].stride[1] == 32 && props[0].alignedByteSize == 256 && props[1].stride[0] == 128);
        // Odd sizes: refused, naming both.
        ins = keep, props = keep_props;
        ins[1].shape[1] = 3;
        s = accel_bpu::describe_image_inputs(ins, props);
        CHECK(s.code == ACCEL_ERR_MODEL_FORMAT && contains(s.message, "'images_y' (1, 8, 24, 1)") &&
              contains(s.message, "'images_uv' (1, 3, 12, 2)"));
        // Names that do not pair: plain tensors.
        ins = keep, props = keep_props;
        ins[1].name = "other_uv";
        CHECK(accel_bpu::describe_image_inputs(ins, props).ok() && ins[0].image_format == ACCEL_IMAGE_NONE);
    }

    return finish_checks();
}
