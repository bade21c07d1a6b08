/*
 * hello_accel.c - the C ABI in one sitting: open a device, load a model, make its tensors, run it
 * synchronously, run it asynchronously with a completion callback, handle an error, free everything.
 *
 *   hello_accel MODEL.accm [URI]          (URI defaults to "emu")
 *
 * The input is a fixed ramp (element i is (i % 255) / 255), so the printed scores can be checked
 * against another runtime. Exit status: 0 on success, 1 on any failure.
 * (examples/run_model.c is the command-line tool built on the same calls: file inputs, repeats.)
 */
#include <accel/accel.h>

#include <stdio.h>
#include <string.h>

#define ASYNC_JOBS 4

/* Every fallible call returns a status; the message of the last failure is per thread. */
static int failed(accel_status status, const char* what) {
    if (status == ACCEL_OK) return 0;
    fprintf(stderr, "%s failed: %s: %s\n", what, accel_status_name(status), accel_last_error_message());
    return 1;
}

/* Runs on the driver's completion thread: keep it short. user_data is whatever submit was given. */
static void on_done(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    *(accel_status*)user_data = status;
}

static float* host_floats(accel_buffer* buffer) {
    void* p = NULL;
    accel_buffer_host_ptr(buffer, &p);
    return (float*)p;
}

int main(int argc, char** argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s MODEL.accm [URI]\n", argv[0]);
        return 1;
    }
    const char* uri = argc > 2 ? argv[2] : "emu";
    int rc = 1;
    /* Every handle starts NULL: the *_release functions accept NULL, so one cleanup path frees
     * whatever was made, in any order (models, buffers and jobs keep their device alive). */
    accel_device* device = NULL;
    accel_model* model = NULL;
    accel_buffer* input = NULL;
    accel_buffer* output = NULL;
    accel_buffer* async_out[ASYNC_JOBS] = {NULL};
    accel_job* jobs[ASYNC_JOBS] = {NULL};
    accel_status async_status[ASYNC_JOBS];

    printf("libaccel %s, ABI %u.%u\n", accel_version_string(), accel_abi_version() >> 16, accel_abi_version() & 0xffff);
    if (failed(accel_device_open(uri, &device), "accel_device_open")) goto cleanup;
    if (failed(accel_model_load_file(device, argv[1], &model), "accel_model_load_file")) goto cleanup;

    /* This program handles one float32 input and one float32 output; a general one loops over the
     * counts (see run_model.c). byte_size, not the element count, is what a buffer must hold: real
     * devices may pad rows. */
    size_t n_in = 0, n_out = 0;
    accel_tensor_info in_info = {.struct_size = sizeof in_info};
    accel_tensor_info out_info = {.struct_size = sizeof out_info};
    if (failed(accel_model_input_count(model, &n_in), "accel_model_input_count") ||
        failed(accel_model_output_count(model, &n_out), "accel_model_output_count"))
        goto cleanup;
    if (n_in != 1 || n_out != 1) {
        fprintf(stderr, "this example expects one input and one output; the model has %zu and %zu\n", n_in, n_out);
        goto cleanup;
    }
    if (failed(accel_model_input_info(model, 0, &in_info), "accel_model_input_info") ||
        failed(accel_model_output_info(model, 0, &out_info), "accel_model_output_info"))
        goto cleanup;
    if (in_info.dtype != ACCEL_DTYPE_FLOAT32 || out_info.dtype != ACCEL_DTYPE_FLOAT32) {
        fprintf(stderr, "this example expects float32 tensors\n");
        goto cleanup;
    }
    uint64_t in_count = 1, out_count = 1;
    for (uint32_t d = 0; d < in_info.ndim; d++) in_count *= (uint64_t)in_info.shape[d];
    for (uint32_t d = 0; d < out_info.ndim; d++) out_count *= (uint64_t)out_info.shape[d];
    printf("model: input '%s' %llu floats, output '%s' %llu floats\n", in_info.name, (unsigned long long)in_count,
           out_info.name, (unsigned long long)out_count);

    /* Device memory with a host pointer: fill it in place, then tell the device (a no-op on the
     * emulator, a cache flush on boards). */
    if (failed(accel_buffer_alloc(device, in_info.byte_size, &input), "accel_buffer_alloc") ||
        failed(accel_buffer_alloc(device, out_info.byte_size, &output), "accel_buffer_alloc"))
        goto cleanup;
    float* x = host_floats(input);
    for (uint64_t i = 0; i < in_count; i++) x[i] = (float)(i % 255) / 255.0f;
    if (failed(accel_buffer_sync(input, ACCEL_SYNC_TO_DEVICE, 0, 0), "accel_buffer_sync")) goto cleanup;

    /* Synchronous: submit, wait, release in one call. */
    if (failed(accel_run(model, &input, 1, &output, 1, NULL), "accel_run")) goto cleanup;
    if (failed(accel_buffer_sync(output, ACCEL_SYNC_TO_HOST, 0, 0), "accel_buffer_sync")) goto cleanup;
    const float* y = host_floats(output);
    uint64_t best = 0;
    printf("scores:");
    for (uint64_t i = 0; i < out_count; i++) {
        printf(" %.6f", y[i]);
        if (y[i] > y[best]) best = i;
    }
    printf("\nclass %llu\n", (unsigned long long)best);

    /* Asynchronous: several jobs in flight at once, each with its own output buffer (a buffer may
     * be read by many jobs, but written by one). The callback reports each job's status; waiting on
     * the job handle is the other way to learn it. */
    for (int j = 0; j < ASYNC_JOBS; j++) {
        if (failed(accel_buffer_alloc(device, out_info.byte_size, &async_out[j]), "accel_buffer_alloc")) goto cleanup;
        accel_run_options options = {.struct_size = sizeof options, .callback = on_done, .user_data = &async_status[j]};
        if (failed(accel_job_submit(model, &input, 1, &async_out[j], 1, &options, &jobs[j]), "accel_job_submit"))
            goto cleanup;
    }
    for (int j = 0; j < ASYNC_JOBS; j++) {
        if (failed(accel_job_wait(jobs[j], -1), "accel_job_wait")) goto cleanup;
        accel_job_timing timing = {.struct_size = sizeof timing};
        accel_job_get_timing(jobs[j], &timing);
        accel_buffer_sync(async_out[j], ACCEL_SYNC_TO_HOST, 0, 0);
        int same = memcmp(host_floats(async_out[j]), y, out_count * sizeof(float)) == 0;
        printf("job %d: %s on core %d, %.3f ms from submission, %s the synchronous run\n", j,
               accel_status_name(async_status[j]), timing.core, (timing.finished_ns - timing.queued_ns) / 1e6,
               same ? "same scores as" : "DIFFERENT scores from");
        if (!same || async_status[j] != ACCEL_OK) goto cleanup;
    }

    /* Errors are values: a wrong call returns a status and leaves a message naming the problem. */
    accel_model* missing = NULL;
    accel_status s = accel_model_load_file(device, "no-such-model.accm", &missing);
    printf("loading a missing file: %s (%s)\n", accel_status_name(s), accel_last_error_message());
    if (s == ACCEL_OK) {
        accel_model_release(missing);
        goto cleanup;
    }
    rc = 0;

cleanup:
    for (int j = 0; j < ASYNC_JOBS; j++) {
        accel_job_release(jobs[j]);
        accel_buffer_release(async_out[j]);
    }
    accel_buffer_release(output);
    accel_buffer_release(input);
    accel_model_release(model);
    accel_device_release(device);
    printf("%s\n", rc == 0 ? "ok" : "failed");
    return rc;
}
