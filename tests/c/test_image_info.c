/* image_info: accel_tensor_info across ABI versions, on the emulator. A caller compiled against ABI 1.1
 * (its accel_tensor_info ends at `quant`) passes its smaller struct_size and gets the fields it knows,
 * right, and not one byte past them; a 1.2 caller gets an NV12 input's image fields (format, planes,
 * size, alignment) and ACCEL_IMAGE_NONE for a plain tensor. The model, image_nv12.accm (make_cases.py),
 * casts an NV12 frame of 4x4 pixels, uint8 (1, 6, 4, 1), to float32 of that shape; it is run once too. */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <string.h>

#include "test_util.h"

/* accel_tensor_info as ABI 1.1 declared it: the 1.2 struct without its trailing image fields. */
typedef struct tensor_info_1_1 {
    uint32_t struct_size;
    accel_dtype dtype;
    accel_layout layout;
    uint32_t ndim;
    const char* name;
    int64_t shape[ACCEL_MAX_DIMS];
    int64_t strides[ACCEL_MAX_DIMS];
    uint64_t byte_size;
    accel_quantization quant;
} tensor_info_1_1;

#define GUARD_BYTES 64
#define GUARD 0xA5

/* The 1.1 struct with guard bytes after it, as a caller's stack would hold something else there. */
typedef struct old_caller {
    tensor_info_1_1 info;
    unsigned char guard[GUARD_BYTES];
} old_caller;

static void check_old_size(accel_model* model, int output, const char* want_name, accel_dtype want_dtype) {
    const char* what = output ? "output 0" : "input 0";
    old_caller c;
    memset(&c, GUARD, sizeof c);
    c.info.struct_size = (uint32_t)sizeof c.info;
    REQUIRE_OK(output ? accel_model_output_info(model, 0, (accel_tensor_info*)&c.info)
                      : accel_model_input_info(model, 0, (accel_tensor_info*)&c.info));
    EXPECT(c.info.struct_size == sizeof c.info, "%s: 1.1 struct_size became %u (was %zu)", what, c.info.struct_size,
           sizeof c.info);
    EXPECT(c.info.name != NULL && strcmp(c.info.name, want_name) == 0, "%s: name '%s', expected '%s'", what,
           c.info.name ? c.info.name : "(null)", want_name);
    EXPECT(c.info.dtype == want_dtype, "%s: dtype %d, expected %d", what, (int)c.info.dtype, (int)want_dtype);
    EXPECT(c.info.layout == ACCEL_LAYOUT_NHWC, "%s: layout %d, expected NHWC", what, (int)c.info.layout);
    EXPECT(c.info.ndim == 4, "%s: ndim %u, expected 4", what, c.info.ndim);
    const int64_t shape[4] = {1, 6, 4, 1};
    const int64_t elem = want_dtype == ACCEL_DTYPE_UINT8 ? 1 : 4;
    const int64_t strides[4] = {24 * elem, 4 * elem, elem, elem};
    for (int i = 0; i < 4; i++) {
        EXPECT(c.info.shape[i] == shape[i], "%s: shape[%d] %lld, expected %lld", what, i, (long long)c.info.shape[i],
               (long long)shape[i]);
        EXPECT(c.info.strides[i] == strides[i], "%s: strides[%d] %lld, expected %lld", what, i,
               (long long)c.info.strides[i], (long long)strides[i]);
    }
    EXPECT(c.info.byte_size == (uint64_t)(24 * elem), "%s: byte_size %llu, expected %lld", what,
           (unsigned long long)c.info.byte_size, (long long)(24 * elem));
    EXPECT(c.info.quant.type == ACCEL_QUANT_NONE, "%s: quant type %d, expected none", what, (int)c.info.quant.type);
    for (int i = 0; i < GUARD_BYTES; i++) {
        if (c.guard[i] != GUARD) {
            EXPECT(0, "%s: byte %zu past a 1.1 caller's %zu-byte struct was written (0x%02x)", what, (size_t)i,
                   sizeof c.info, c.guard[i]);
            break;
        }
    }
}

static accel_tensor_info new_info(accel_model* model, int output) {
    accel_tensor_info info;
    memset(&info, GUARD, sizeof info); /* every image field must be written, not left as the caller had it */
    info.struct_size = (uint32_t)sizeof info;
    REQUIRE_OK(output ? accel_model_output_info(model, 0, &info) : accel_model_input_info(model, 0, &info));
    return info;
}

int main(int argc, char** argv) {
    test_name = "image_info";
    const char* dir = test_cases_dir(argc, argv);
    /* The 1.1 layout is the 1.2 one cut before its first image field. */
    REQUIRE(sizeof(tensor_info_1_1) == offsetof(accel_tensor_info, image_format),
            "the 1.1 struct copy (%zu bytes) does not end where the 1.2 fields begin (%zu)", sizeof(tensor_info_1_1),
            offsetof(accel_tensor_info, image_format));

    accel_device* d = test_open("emu:cores=1");
    char* path = test_path(dir, "image_nv12.accm");
    accel_model* model = NULL;
    REQUIRE_OK(accel_model_load_file(d, path, &model));

    /* ---- a 1.1 caller ---- */
    check_old_size(model, 0, "frame", ACCEL_DTYPE_UINT8);
    check_old_size(model, 1, "pixels", ACCEL_DTYPE_FLOAT32);

    /* ---- a 1.2 caller: the NV12 input ---- */
    accel_tensor_info in = new_info(model, 0);
    EXPECT(in.struct_size == sizeof in, "input 0: struct_size became %u", in.struct_size);
    EXPECT(in.image_format == ACCEL_IMAGE_NV12, "input 0: image_format %d, expected NV12 (%d)", (int)in.image_format,
           (int)ACCEL_IMAGE_NV12);
    EXPECT(in.plane_count == 2, "input 0: plane_count %u, expected 2", in.plane_count);
    EXPECT(in.plane_offset[0] == 0, "input 0: plane_offset[0] %llu, expected 0",
           (unsigned long long)in.plane_offset[0]);
    /* the UV plane follows H = 4 rows of the row stride (4 bytes) */
    EXPECT(in.plane_offset[1] == 16, "input 0: plane_offset[1] %llu, expected 16",
           (unsigned long long)in.plane_offset[1]);
    EXPECT(in.image_width == 4 && in.image_height == 4, "input 0: image %ux%u, expected 4x4", in.image_width,
           in.image_height);
    EXPECT(in.width_align == 2 && in.height_align == 2, "input 0: alignment %u, %u, expected 2, 2", in.width_align,
           in.height_align);
    EXPECT(in.shape[1] == 6 && in.byte_size == 24, "input 0: shape[1] %lld, byte_size %llu", (long long)in.shape[1],
           (unsigned long long)in.byte_size);

    /* ---- a 1.2 caller: the plain output ---- */
    accel_tensor_info out = new_info(model, 1);
    EXPECT(out.image_format == ACCEL_IMAGE_NONE, "output 0: image_format %d, expected NONE", (int)out.image_format);
    EXPECT(out.plane_count == 0 && out.plane_offset[0] == 0 && out.plane_offset[1] == 0,
           "output 0: plane_count %u, plane_offset %llu, %llu, expected 0s", out.plane_count,
           (unsigned long long)out.plane_offset[0], (unsigned long long)out.plane_offset[1]);
    EXPECT(out.image_width == 0 && out.image_height == 0 && out.width_align == 0 && out.height_align == 0,
           "output 0: image %ux%u align %u, %u, expected 0s", out.image_width, out.image_height, out.width_align,
           out.height_align);

    /* ---- the model runs: the frame's bytes, as floats ---- */
    accel_buffer* ib = test_alloc(d, in.byte_size);
    accel_buffer* ob = test_alloc(d, out.byte_size);
    unsigned char* ip = NULL;
    float* op = NULL;
    REQUIRE_OK(accel_buffer_host_ptr(ib, (void**)&ip));
    REQUIRE_OK(accel_buffer_host_ptr(ob, (void**)&op));
    for (int i = 0; i < 24; i++) ip[i] = (unsigned char)(i * 10 + 5);
    REQUIRE_OK(accel_run(model, &ib, 1, &ob, 1, NULL));
    for (int i = 0; i < 24; i++)
        EXPECT(op[i] == (float)(i * 10 + 5), "pixels[%d] is %g, expected %d", i, (double)op[i], i * 10 + 5);

    accel_buffer_release(ib);
    accel_buffer_release(ob);
    accel_model_release(model);
    free(path);
    accel_device_release(d);
    return test_finish();
}
