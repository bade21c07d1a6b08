/*
 * run_model.c - load a compiled model on a device and run it, through the public C ABI only.
 *
 *   accel_run_model MODEL [--uri URI] [--input FILE]... [--output-prefix PREFIX] [--repeat N]
 *
 * Inputs are raw little-endian tensors, one file per model input, in order (missing ones are filled
 * with zeros). Each output i is written to PREFIX<i>.bin when --output-prefix is given. --repeat N
 * runs N timed inferences and prints the median and minimum latency.
 */
#include <accel/accel.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TENSORS 64

static int check(accel_status s, const char* what) {
    if (s == ACCEL_OK) return 0;
    fprintf(stderr, "error: %s: %s: %s\n", what, accel_status_name(s), accel_last_error_message());
    return 1;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int compare_doubles(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static void print_info(const char* kind, size_t i, const accel_tensor_info* t) {
    printf("%s %zu: %s %s (", kind, i, t->name, accel_dtype_name(t->dtype));
    for (uint32_t d = 0; d < t->ndim; d++) printf("%s%lld", d ? ", " : "", (long long)t->shape[d]);
    printf(") %llu bytes\n", (unsigned long long)t->byte_size);
}

/* Reads exactly `size` bytes of `path` into the buffer. */
static int load_input(accel_buffer* buffer, const char* path, uint64_t size) {
    FILE* f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "error: cannot open input '%s'\n", path);
        return 1;
    }
    void* dst = NULL;
    accel_buffer_host_ptr(buffer, &dst);
    size_t got = fread(dst, 1, size, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != size || extra) {
        fprintf(stderr, "error: input '%s' must hold exactly %llu bytes\n", path, (unsigned long long)size);
        return 1;
    }
    return check(accel_buffer_sync(buffer, ACCEL_SYNC_TO_DEVICE, 0, 0), "sync input");
}

static int save_output(accel_buffer* buffer, const char* prefix, size_t index, uint64_t size) {
    char path[4096];
    snprintf(path, sizeof path, "%s%zu.bin", prefix, index);
    if (check(accel_buffer_sync(buffer, ACCEL_SYNC_TO_HOST, 0, 0), "sync output")) return 1;
    void* src = NULL;
    accel_buffer_host_ptr(buffer, &src);
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(src, 1, size, f) != size) {
        fprintf(stderr, "error: cannot write '%s'\n", path);
        if (f) fclose(f);
        return 1;
    }
    fclose(f);
    return 0;
}

int main(int argc, char** argv) {
    const char* model_path = NULL;
    const char* uri = "emu";
    const char* output_prefix = NULL;
    const char* inputs[MAX_TENSORS];
    size_t input_files = 0;
    long repeat = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--uri") && i + 1 < argc) uri = argv[++i];
        else if (!strcmp(argv[i], "--input") && i + 1 < argc && input_files < MAX_TENSORS)
            inputs[input_files++] = argv[++i];
        else if (!strcmp(argv[i], "--output-prefix") && i + 1 < argc) output_prefix = argv[++i];
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = strtol(argv[++i], NULL, 10);
        else if (argv[i][0] != '-' && !model_path) model_path = argv[i];
        else {
            fprintf(stderr, "usage: %s MODEL [--uri URI] [--input FILE]... [--output-prefix PREFIX] [--repeat N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (!model_path || repeat < 1) {
        fprintf(stderr, "usage: %s MODEL [--uri URI] [--input FILE]... [--output-prefix PREFIX] [--repeat N]\n",
                argv[0]);
        return 2;
    }
    if ((accel_abi_version() >> 16) != ACCEL_ABI_VERSION_MAJOR) {
        fprintf(stderr, "error: libaccel ABI %u differs from this program's %u\n", accel_abi_version() >> 16,
                ACCEL_ABI_VERSION_MAJOR);
        return 1;
    }

    int rc = 1;
    accel_device* device = NULL;
    accel_model* model = NULL;
    accel_buffer* in[MAX_TENSORS] = {0};
    accel_buffer* out[MAX_TENSORS] = {0};
    size_t n_in = 0, n_out = 0;
    accel_tensor_info in_info[MAX_TENSORS], out_info[MAX_TENSORS];
    double* times = NULL;

    if (check(accel_device_open(uri, &device), "open device")) goto done;
    if (check(accel_model_load_file(device, model_path, &model), "load model")) goto done;
    if (check(accel_model_input_count(model, &n_in), "inputs") ||
        check(accel_model_output_count(model, &n_out), "outputs"))
        goto done;
    if (n_in > MAX_TENSORS || n_out > MAX_TENSORS || input_files > n_in) {
        fprintf(stderr, "error: the model has %zu inputs and %zu outputs; %zu input files given\n", n_in, n_out,
                input_files);
        goto done;
    }
    for (size_t i = 0; i < n_in; i++) {
        in_info[i].struct_size = sizeof in_info[i];
        if (check(accel_model_input_info(model, i, &in_info[i]), "input info")) goto done;
        print_info("input", i, &in_info[i]);
        if (check(accel_buffer_alloc(device, in_info[i].byte_size, &in[i]), "allocate input")) goto done;
        if (i < input_files) {
            if (load_input(in[i], inputs[i], in_info[i].byte_size)) goto done;
        } else {
            void* p = NULL;
            accel_buffer_host_ptr(in[i], &p);
            memset(p, 0, in_info[i].byte_size);
            /* A run on zeros says so: its outputs are no answer to any real input. */
            printf("input %zu '%s': no --input file given, running on zeros\n", i, in_info[i].name);
        }
    }
    for (size_t i = 0; i < n_out; i++) {
        out_info[i].struct_size = sizeof out_info[i];
        if (check(accel_model_output_info(model, i, &out_info[i]), "output info")) goto done;
        print_info("output", i, &out_info[i]);
        if (check(accel_buffer_alloc(device, out_info[i].byte_size, &out[i]), "allocate output")) goto done;
    }

    times = calloc((size_t)repeat, sizeof *times);
    if (!times) goto done;
    for (long r = 0; r < repeat; r++) {
        double t0 = now_ms();
        if (check(accel_run(model, in, n_in, out, n_out, NULL), "run")) goto done;
        times[r] = now_ms() - t0;
    }
    qsort(times, (size_t)repeat, sizeof *times, compare_doubles);
    printf("latency: median %.3f ms, min %.3f ms over %ld run(s)\n", times[repeat / 2], times[0], repeat);
    if (output_prefix)
        for (size_t i = 0; i < n_out; i++)
            if (save_output(out[i], output_prefix, i, out_info[i].byte_size)) goto done;
    rc = 0;

done:
    free(times);
    for (size_t i = 0; i < MAX_TENSORS; i++) {
        accel_buffer_release(in[i]);
        accel_buffer_release(out[i]);
    }
    accel_model_release(model);
    accel_device_release(device);
    return rc;
}
