/*
 * sync_loop.c - the baseline of bench_overhead.py: a plain C loop of synchronous accel_run calls on one
 * compiled model, with preallocated input and output buffers (what model.run(t, outputs=[o]) does
 * through the Python API, minus Python).
 *
 *   sync_loop MODEL.accm N [--uri emu:cores=1] [--rounds R] [--warmup-ms MS]
 *
 * Runs warm-up calls for MS milliseconds (default 300: the OS takes that long to settle where the
 * caller and the device's threads run, and the first milliseconds are not what a long-lived process
 * sees), then R rounds of N timed calls, and prints one line per round and a summary:
 *   round <i> <ns per call>
 *   ns_per_call <median over rounds> min <best round>
 */
#include <accel/accel.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                                 \
    do {                                                                                            \
        accel_status s_ = (call);                                                                   \
        if (s_ != ACCEL_OK) {                                                                       \
            fprintf(stderr, "sync_loop: %s: %s: %s\n", #call, accel_status_name(s_),                \
                    accel_last_error_message());                                                    \
            return 1;                                                                               \
        }                                                                                           \
    } while (0)

enum { MAX_TENSORS = 64, MAX_ROUNDS = 1000 };

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

int main(int argc, char** argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.accm N [--uri URI] [--rounds R] [--warmup-ms MS]\n", argv[0]);
        return 2;
    }
    const char* path = argv[1];
    long n = strtol(argv[2], NULL, 10);
    const char* uri = "emu:cores=1";
    long rounds = 5;
    long warmup_ms = 300;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--uri")) {
            uri = argv[i + 1];
        } else if (!strcmp(argv[i], "--rounds")) {
            rounds = strtol(argv[i + 1], NULL, 10);
        } else if (!strcmp(argv[i], "--warmup-ms")) {
            warmup_ms = strtol(argv[i + 1], NULL, 10);
        } else {
            fprintf(stderr, "sync_loop: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (n <= 0 || rounds <= 0 || rounds > MAX_ROUNDS || warmup_ms < 0) {
        fprintf(stderr, "sync_loop: N and R must be positive (R <= %d), MS not negative\n", MAX_ROUNDS);
        return 2;
    }

    accel_device* dev = NULL;
    CHECK(accel_device_open(uri, &dev));
    accel_model* model = NULL;
    CHECK(accel_model_load_file(dev, path, &model));
    size_t n_in = 0, n_out = 0;
    CHECK(accel_model_input_count(model, &n_in));
    CHECK(accel_model_output_count(model, &n_out));
    if (n_in > MAX_TENSORS || n_out > MAX_TENSORS) {
        fprintf(stderr, "sync_loop: too many tensors\n");
        return 1;
    }
    accel_buffer* in[MAX_TENSORS];
    accel_buffer* out[MAX_TENSORS];
    for (size_t i = 0; i < n_in; i++) {
        accel_tensor_info t;
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        CHECK(accel_model_input_info(model, i, &t));
        CHECK(accel_buffer_alloc(dev, t.byte_size ? t.byte_size : 1, &in[i]));
        void* p = NULL;
        CHECK(accel_buffer_host_ptr(in[i], &p));
        memset(p, 0, t.byte_size);
    }
    for (size_t i = 0; i < n_out; i++) {
        accel_tensor_info t;
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        CHECK(accel_model_output_info(model, i, &t));
        CHECK(accel_buffer_alloc(dev, t.byte_size ? t.byte_size : 1, &out[i]));
    }

    for (double end = now_ns() + warmup_ms * 1e6; now_ns() < end;)
        CHECK(accel_run(model, in, n_in, out, n_out, NULL));

    double per[MAX_ROUNDS];
    for (long r = 0; r < rounds; r++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++) CHECK(accel_run(model, in, n_in, out, n_out, NULL));
        per[r] = (now_ns() - t0) / (double)n;
        printf("round %ld %.1f\n", r, per[r]);
    }
    qsort(per, (size_t)rounds, sizeof per[0], cmp_double);
    printf("ns_per_call %.1f min %.1f\n", per[rounds / 2], per[0]);

    for (size_t i = 0; i < n_in; i++) accel_buffer_release(in[i]);
    for (size_t i = 0; i < n_out; i++) accel_buffer_release(out[i]);
    accel_model_release(model);
    accel_device_release(dev);
    return 0;
}
