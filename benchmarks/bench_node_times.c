/*
 * bench_node_times.c - what per-node profiling costs (ACCEL_SUBMIT_PROFILE_NODES), measured side by
 * side in one run: synchronous runs of a model without the flag and with it (the node times read
 * after each run), in interleaved rounds; the median run of each and their ratio. Without the flag a
 * run should cost what it did before the feature (one pointer test per node); with it, two clock reads
 * per node, an allocation at submit and the copy out.
 *
 *   bench_node_times MODEL.accm [--uri emu:cores=1] [--plain]
 *
 * --plain runs the unflagged runs alone (to compare a build from before the feature, compiled with
 * -DACCEL_SUBMIT_PROFILE_NODES=2 against its older header).
 */
#include <accel/accel.h>

#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ROUNDS = 40, PER_ROUND = 250 };

typedef struct io {
    accel_model* model;
    accel_buffer* in[8];
    accel_buffer* out[8];
    size_t n_in, n_out;
} io;

/* ns per synchronous run over PER_ROUND runs; `profiled` asks for node times and reads them. */
static double round_ns(const io* x, int profiled, accel_node_time* times, size_t nodes) {
    accel_run_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = profiled ? ACCEL_SUBMIT_PROFILE_NODES : 0;
    double t0 = now_ns();
    for (int r = 0; r < PER_ROUND; r++) {
        if (!profiled) {
            CHECK(accel_run(x->model, x->in, x->n_in, x->out, x->n_out, &o));
            continue;
        }
        accel_job* job = NULL;
        CHECK(accel_job_submit(x->model, x->in, x->n_in, x->out, x->n_out, &o, &job));
        CHECK(accel_job_wait(job, -1));
        size_t count = 0;
        CHECK(accel_job_get_node_times(job, times, nodes, &count));
        accel_job_release(job);
    }
    return (now_ns() - t0) / PER_ROUND;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.accm [--uri URI] [--plain]\n", argv[0]);
        return 2;
    }
    const char* uri = "emu:cores=1";
    int plain_only = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--uri") && i + 1 < argc) uri = argv[++i];
        else if (!strcmp(argv[i], "--plain")) plain_only = 1;
    }
    accel_device* dev;
    CHECK(accel_device_open(uri, &dev));
    io x;
    memset(&x, 0, sizeof x);
    CHECK(accel_model_load_file(dev, argv[1], &x.model));
    CHECK(accel_model_input_count(x.model, &x.n_in));
    CHECK(accel_model_output_count(x.model, &x.n_out));
    if (x.n_in > 8 || x.n_out > 8) return fprintf(stderr, "at most 8 inputs and outputs\n"), 1;
    for (size_t i = 0; i < x.n_in + x.n_out; i++) {
        accel_tensor_info t;
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        int is_in = i < x.n_in;
        CHECK(is_in ? accel_model_input_info(x.model, i, &t) : accel_model_output_info(x.model, i - x.n_in, &t));
        accel_buffer** b = is_in ? &x.in[i] : &x.out[i - x.n_in];
        CHECK(accel_buffer_alloc(dev, t.byte_size, b));
        void* p;
        CHECK(accel_buffer_host_ptr(*b, &p));
        memset(p, 0, t.byte_size);
    }
    size_t nodes = 0;
    accel_node_time* times = NULL;
    if (!plain_only) {
        CHECK(accel_model_get_node_count(x.model, &nodes));
        times = (accel_node_time*)calloc(nodes ? nodes : 1, sizeof *times);
    }
    round_ns(&x, 0, times, nodes); /* warm-up */
    double off[ROUNDS], on[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        off[r] = round_ns(&x, 0, times, nodes);
        on[r] = plain_only ? 0 : round_ns(&x, 1, times, nodes);
    }
    qsort(off, ROUNDS, sizeof off[0], cmp_double);
    qsort(on, ROUNDS, sizeof on[0], cmp_double);
    printf("%s on %s: %zu nodes\n", argv[1], uri, nodes);
    printf("sync run, profiling off: %.0f ns (median of %d rounds of %d runs)\n", off[ROUNDS / 2], ROUNDS, PER_ROUND);
    if (!plain_only)
        printf("sync run, profiling on:  %.0f ns (submit, wait, node times, release): %.3fx\n", on[ROUNDS / 2],
               on[ROUNDS / 2] / off[ROUNDS / 2]);
    for (size_t i = 0; i < x.n_in; i++) accel_buffer_release(x.in[i]);
    for (size_t i = 0; i < x.n_out; i++) accel_buffer_release(x.out[i]);
    free(times);
    accel_model_release(x.model);
    accel_device_release(dev);
    return 0;
}
