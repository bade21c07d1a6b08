/*
 * test_package.c - checks an installed accel package through its public C ABI.
 *
 *   test_package [MODELS_DIR]
 *
 * Always: libaccel loads and its ABI major matches the header. With MODELS_DIR (the package's
 * share/accel/models): opens the emulator ("emu", found in accel-drivers/ next to libaccel), runs
 * tiny_cnn.accm on tiny_cnn.input.bin and compares the output with tiny_cnn.expected.bin. Any failure
 * exits non-zero.
 */
#include <accel/accel.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define OUTPUTS 10
#define ABS_TOLERANCE 1e-5
#define REL_TOLERANCE 1e-4

static int failed(accel_status s, const char* what) {
    if (s == ACCEL_OK) return 0;
    fprintf(stderr, "test_package: %s: %s: %s\n", what, accel_status_name(s), accel_last_error_message());
    return 1;
}

/* Reads exactly `size` bytes of dir/name into `dst`. */
static int read_exactly(const char* dir, const char* name, void* dst, size_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE* f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "test_package: cannot open %s\n", path);
        return 1;
    }
    size_t got = fread(dst, 1, size, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != size || extra) {
        fprintf(stderr, "test_package: %s must hold exactly %zu bytes\n", path, size);
        return 1;
    }
    return 0;
}

static int run_shipped_model(const char* models) {
    char model_path[4096];
    snprintf(model_path, sizeof model_path, "%s/tiny_cnn.accm", models);
    int rc = 1;
    accel_device* device = NULL;
    accel_model* model = NULL;
    accel_buffer* input = NULL;
    accel_buffer* output = NULL;
    accel_tensor_info in_info = {.struct_size = sizeof in_info};
    accel_tensor_info out_info = {.struct_size = sizeof out_info};
    float got[OUTPUTS], expected[OUTPUTS];

    if (failed(accel_device_open("emu", &device), "open the emulator")) goto done;
    if (failed(accel_model_load_file(device, model_path, &model), "load tiny_cnn.accm")) goto done;
    if (failed(accel_model_input_info(model, 0, &in_info), "input info") ||
        failed(accel_model_output_info(model, 0, &out_info), "output info"))
        goto done;
    if (out_info.byte_size != sizeof got) {
        fprintf(stderr, "test_package: output holds %llu bytes, expected %zu\n", (unsigned long long)out_info.byte_size,
                sizeof got);
        goto done;
    }
    if (failed(accel_buffer_alloc(device, in_info.byte_size, &input), "allocate input") ||
        failed(accel_buffer_alloc(device, out_info.byte_size, &output), "allocate output"))
        goto done;
    void* host = NULL;
    if (failed(accel_buffer_host_ptr(input, &host), "input host pointer")) goto done;
    if (read_exactly(models, "tiny_cnn.input.bin", host, (size_t)in_info.byte_size)) goto done;
    if (read_exactly(models, "tiny_cnn.expected.bin", expected, sizeof expected)) goto done;
    if (failed(accel_buffer_sync(input, ACCEL_SYNC_TO_DEVICE, 0, 0), "sync input")) goto done;
    if (failed(accel_run(model, &input, 1, &output, 1, NULL), "run")) goto done;
    if (failed(accel_buffer_read(output, 0, got, sizeof got), "read output")) goto done;

    double worst = 0.0;
    rc = 0;
    for (int i = 0; i < OUTPUTS; i++) {
        double diff = fabs((double)got[i] - expected[i]);
        if (diff > worst) worst = diff;
        if (!(diff <= ABS_TOLERANCE + REL_TOLERANCE * fabs(expected[i]))) {
            fprintf(stderr, "test_package: %s[%d] = %.9g, expected %.9g\n", out_info.name, i, got[i], expected[i]);
            rc = 1;
        }
    }
    printf("test_package: tiny_cnn on emu: %s, max abs difference %.3g\n", rc ? "WRONG" : "ok", worst);
done:
    accel_buffer_release(output);
    accel_buffer_release(input);
    accel_model_release(model);
    accel_device_release(device);
    return rc;
}

int main(int argc, char** argv) {
    if ((accel_abi_version() >> 16) != ACCEL_ABI_VERSION_MAJOR) {
        fprintf(stderr, "test_package: libaccel ABI %u, header %u\n", accel_abi_version() >> 16,
                ACCEL_ABI_VERSION_MAJOR);
        return 1;
    }
    printf("test_package: libaccel %s\n", accel_version_string());
    return argc > 1 ? run_shipped_model(argv[1]) : 0;
}
