/* fuzz_model.c - see fuzz_model.h. */
#include "fuzz_model.h"

#include <stdio.h>
#include <string.h>

enum { MAX_IO = 64 };

static int describe(accel_model* model, int outputs, size_t index, uint64_t* bytes) {
    accel_tensor_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    accel_status s =
        outputs ? accel_model_output_info(model, index, &info) : accel_model_input_info(model, index, &info);
    if (s != ACCEL_OK) {
        fprintf(stderr, "fuzz: %s %zu of a loaded model has no info: %s\n", outputs ? "output" : "input", index,
                accel_last_error_message());
        return 0;
    }
    *bytes = info.byte_size ? info.byte_size : 1;
    return 1;
}

int fuzz_exercise_model(accel_device* device, accel_model* model, uint64_t run_limit) {
    size_t n_in = 0, n_out = 0;
    if (accel_model_input_count(model, &n_in) != ACCEL_OK || accel_model_output_count(model, &n_out) != ACCEL_OK) {
        fprintf(stderr, "fuzz: a loaded model has no tensor counts: %s\n", accel_last_error_message());
        return 0;
    }
    uint64_t sizes[2 * MAX_IO];
    uint64_t total = 0;
    for (size_t i = 0; i < n_in + n_out; i++) {
        uint64_t bytes = 0;
        if (!describe(model, i >= n_in, i >= n_in ? i - n_in : i, &bytes)) return 0;
        if (i < 2 * MAX_IO) sizes[i] = bytes;
        total += bytes;
    }
    if (n_in > MAX_IO || n_out > MAX_IO || total > run_limit) return 1;

    accel_buffer* buffers[2 * MAX_IO];
    size_t made = 0;
    int ok = 1;
    for (; made < n_in + n_out; made++) {
        accel_status s = accel_buffer_alloc(device, sizes[made], &buffers[made]);
        if (s == ACCEL_ERR_OUT_OF_MEMORY) break;
        if (s != ACCEL_OK) {
            fprintf(stderr, "fuzz: allocating %llu bytes failed: %s\n", (unsigned long long)sizes[made],
                    accel_last_error_message());
            ok = 0;
            break;
        }
        void* host = NULL;
        if (accel_buffer_host_ptr(buffers[made], &host) == ACCEL_OK) memset(host, 0, sizes[made]);
    }
    if (ok && made == n_in + n_out) {
        accel_status s = accel_run(model, buffers, n_in, buffers + n_in, n_out, NULL);
        if (s != ACCEL_OK && s != ACCEL_ERR_OUT_OF_MEMORY) {
            fprintf(stderr, "fuzz: a loaded model failed to run: %s: %s\n", accel_status_name(s),
                    accel_last_error_message());
            ok = 0;
        }
    }
    for (size_t i = 0; i < made; i++) accel_buffer_release(buffers[i]);
    return ok;
}
