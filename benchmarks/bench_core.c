/*
 * bench_core.c - what the emulator's basic paths cost, measured side by side in one run:
 *   - device buffer allocation + release through the ABI, against malloc + free of the same size;
 *   - one synchronous inference of a compiled model (median of many), and the submit+wait overhead
 *     of an empty-ish model.
 *
 *   bench_core MODEL.accm [--uri emu:cores=1,threads=1,pool=8G]
 */
#include <accel/accel.h>

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ALLOC_ROUNDS = 200000, LIVE = 1000 };

/* ns per alloc+release pair, with LIVE other buffers held so the free lists are not trivial. */
static double bench_accel_alloc(accel_device* dev, uint64_t size) {
    accel_buffer* live[LIVE];
    for (int i = 0; i < LIVE; i++) CHECK(accel_buffer_alloc(dev, size * (1 + i % 7), &live[i]));
    for (int i = 0; i < LIVE; i += 2) accel_buffer_release(live[i]), live[i] = NULL;
    double t0 = now_ns();
    for (int r = 0; r < ALLOC_ROUNDS; r++) {
        accel_buffer* b;
        CHECK(accel_buffer_alloc(dev, size, &b));
        accel_buffer_release(b);
    }
    double per = (now_ns() - t0) / ALLOC_ROUNDS;
    for (int i = 0; i < LIVE; i++) accel_buffer_release(live[i]);
    return per;
}

static double bench_malloc(uint64_t size) {
    void* live[LIVE];
    for (int i = 0; i < LIVE; i++) live[i] = malloc(size * (1 + i % 7));
    for (int i = 0; i < LIVE; i += 2) free(live[i]), live[i] = NULL;
    volatile char sink = 0;
    double t0 = now_ns();
    for (int r = 0; r < ALLOC_ROUNDS; r++) {
        char* p = malloc(size);
        p[0] = 1;
        sink += p[0];
        free(p);
    }
    double per = (now_ns() - t0) / ALLOC_ROUNDS;
    for (int i = 0; i < LIVE; i++) free(live[i]);
    (void)sink;
    return per;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.accm [--uri URI]\n", argv[0]);
        return 2;
    }
    const char* uri = argc > 3 && !strcmp(argv[2], "--uri") ? argv[3] : "emu:cores=1,threads=1,pool=8G";
    accel_device* dev;
    CHECK(accel_device_open(uri, &dev));

    printf("%-44s %12s %12s %8s\n", "path", "accel", "baseline", "ratio");
    uint64_t sizes[] = {256, 4096, 1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        double a = bench_accel_alloc(dev, sizes[i]);
        double m = bench_malloc(sizes[i]);
        char label[64];
        snprintf(label, sizeof label, "alloc+release %llu B (ns) vs malloc+free", (unsigned long long)sizes[i]);
        printf("%-44s %12.1f %12.1f %8.2f\n", label, a, m, a / m);
    }

    accel_model* model;
    CHECK(accel_model_load_file(dev, argv[1], &model));
    size_t n_in, n_out;
    CHECK(accel_model_input_count(model, &n_in));
    CHECK(accel_model_output_count(model, &n_out));
    accel_buffer* in[16];
    accel_buffer* out[16];
    for (size_t i = 0; i < n_in && i < 16; i++) {
        accel_tensor_info t = {0};
        t.struct_size = sizeof t;
        CHECK(accel_model_input_info(model, i, &t));
        CHECK(accel_buffer_alloc(dev, t.byte_size, &in[i]));
        void* p;
        CHECK(accel_buffer_host_ptr(in[i], &p));
        memset(p, 0, t.byte_size);
    }
    for (size_t i = 0; i < n_out && i < 16; i++) {
        accel_tensor_info t = {0};
        t.struct_size = sizeof t;
        CHECK(accel_model_output_info(model, i, &t));
        CHECK(accel_buffer_alloc(dev, t.byte_size, &out[i]));
    }
    enum { RUNS = 300 };
    double times[RUNS];
    for (int r = 0; r < 20; r++) CHECK(accel_run(model, in, n_in, out, n_out, NULL));
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ns();
        CHECK(accel_run(model, in, n_in, out, n_out, NULL));
        times[r] = now_ns() - t0;
    }
    qsort(times, RUNS, sizeof times[0], cmp_double);
    printf("%-44s %12.3f %12s %8s\n", "sync inference, median (ms)", times[RUNS / 2] / 1e6, "-", "-");
    printf("%-44s %12.3f %12s %8s\n", "sync inference, p99 (ms)", times[RUNS * 99 / 100] / 1e6, "-", "-");
    accel_memory_stats st = {0};
    st.struct_size = sizeof st;
    CHECK(accel_device_get_stats(dev, &st));
    printf("device memory in use: %llu bytes (peak %llu) after %llu jobs\n", (unsigned long long)st.bytes_in_use,
           (unsigned long long)st.peak_bytes_in_use, (unsigned long long)st.jobs_completed);
    for (size_t i = 0; i < n_in; i++) accel_buffer_release(in[i]);
    for (size_t i = 0; i < n_out; i++) accel_buffer_release(out[i]);
    accel_model_release(model);
    accel_device_release(dev);
    return 0;
}
