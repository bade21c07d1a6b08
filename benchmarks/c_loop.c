/*
 * c_loop.c - the "C loop" column of bench_frontends.py: each measured row done in plain C over the same
 * C ABI, the same libaccel and the same emulator driver as the Python front-ends.
 *
 *   c_loop TINY.accm BIG.accm TINY_INPUT.bin BIG_INPUT.bin [--uri emu:cores=1,threads=1] [--inflight K]
 *
 * TINY is a model with one small input and one small output, BIG one with a large input and a small
 * output; the .bin files hold their inputs' bytes. After setting up, it prints
 *   ready <the tiny model's outputs, then the big model's, for those inputs, as space separated floats>
 * then serves commands read from stdin, one a line (bench_frontends.py drives it round by round, as it
 * drives its Python children):
 *   <row> <warmup_ms> <target_ms>  ->  prints "<ns per call>" (per job for async)
 *   quit
 * Rows:
 *   run_tensors  accel_run on preallocated input and output buffers
 *   run_numpy    what a run with a host array does: alloc input, accel_buffer_write, alloc output,
 *                accel_run, release both
 *   async        K jobs submitted with a completion callback, then accel_job_wait + release on each
 *   view         accel_buffer_host_ptr of a 1024x1024 float32 buffer (a C "view" is its pointer)
 *   copy_in      run_numpy on BIG with a host array of its input's size
 *   memcpy       memcpy of BIG's input bytes between two host arrays
 * Each command warms up for warmup_ms (at least one call), then times as many calls as the warm-up rate
 * says fit in target_ms.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */

#include <accel/accel.h>

#include "bench_util.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_INFLIGHT = 64 };

struct model {
    accel_model* handle;
    uint64_t in_bytes, out_bytes; /* byte_size of its one input and one output */
    accel_buffer* in;
    accel_buffer* out;
};

struct ctx {
    struct model tiny, big;
    accel_device* dev;
    void* tiny_host; /* the models' inputs as host arrays */
    void* big_host;
    void* big_copy;  /* memcpy's destination */
    accel_buffer* outs[MAX_INFLIGHT];
    size_t inflight;
    atomic_long completed;
    void* volatile sink; /* where the view row leaves its pointer, so it is not optimized away */
};

static uint64_t tensor_bytes(accel_model* m, int output) {
    accel_tensor_info t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    CHECK(output ? accel_model_output_info(m, 0, &t) : accel_model_input_info(m, 0, &t));
    return t.byte_size ? t.byte_size : 1;
}

static void load(struct ctx* c, const char* path, struct model* m) {
    CHECK(accel_model_load_file(c->dev, path, &m->handle));
    size_t n_in = 0, n_out = 0;
    CHECK(accel_model_input_count(m->handle, &n_in));
    CHECK(accel_model_output_count(m->handle, &n_out));
    if (n_in != 1 || n_out != 1) {
        fprintf(stderr, "c_loop: %s: expected one input and one output\n", path);
        exit(1);
    }
    m->in_bytes = tensor_bytes(m->handle, 0);
    m->out_bytes = tensor_bytes(m->handle, 1);
    CHECK(accel_buffer_alloc(c->dev, m->in_bytes, &m->in));
    CHECK(accel_buffer_alloc(c->dev, m->out_bytes, &m->out));
}

static void* host_array(uint64_t nbytes, int fill) {
    void* p = malloc(nbytes);
    if (!p) {
        fprintf(stderr, "c_loop: out of host memory\n");
        exit(1);
    }
    memset(p, fill, nbytes); /* touch every page before timing */
    return p;
}

/* ---- the rows: one call each ---- */

static void run_tensors(struct ctx* c) { CHECK(accel_run(c->tiny.handle, &c->tiny.in, 1, &c->tiny.out, 1, NULL)); }

static void run_with_host_input(struct ctx* c, const struct model* m, const void* host) {
    accel_buffer* in = NULL;
    accel_buffer* out = NULL;
    CHECK(accel_buffer_alloc(c->dev, m->in_bytes, &in));
    CHECK(accel_buffer_write(in, 0, host, m->in_bytes));
    CHECK(accel_buffer_alloc(c->dev, m->out_bytes, &out));
    CHECK(accel_run(m->handle, &in, 1, &out, 1, NULL));
    accel_buffer_release(in);
    accel_buffer_release(out);
}

static void run_numpy(struct ctx* c) { run_with_host_input(c, &c->tiny, c->tiny_host); }

static void copy_in(struct ctx* c) { run_with_host_input(c, &c->big, c->big_host); }

static void on_done(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    (void)status;
    atomic_fetch_add(&((struct ctx*)user_data)->completed, 1);
}

static void async_batch(struct ctx* c) {
    accel_job* jobs[MAX_INFLIGHT];
    accel_run_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.callback = on_done;
    opts.user_data = c;
    for (size_t i = 0; i < c->inflight; i++)
        CHECK(accel_job_submit(c->tiny.handle, &c->tiny.in, 1, &c->outs[i], 1, &opts, &jobs[i]));
    for (size_t i = 0; i < c->inflight; i++) {
        CHECK(accel_job_wait(jobs[i], -1));
        accel_job_release(jobs[i]);
    }
}

static void view(struct ctx* c) {
    void* p = NULL;
    CHECK(accel_buffer_host_ptr(c->big.in, &p));
    c->sink = p;
}

static void copy_bytes(struct ctx* c) {
    memcpy(c->big_copy, c->big_host, c->big.in_bytes);
    __asm__ __volatile__("" ::: "memory"); /* the copy's result counts as used */
}

struct row {
    const char* name;
    void (*call)(struct ctx*);
};

static const struct row ROWS[] = {
    {"run_tensors", run_tensors}, {"run_numpy", run_numpy}, {"async", async_batch}, {"view", view},
    {"copy_in", copy_in},         {"memcpy", copy_bytes},
};

/* ns per call of row->call: warm up for warmup_ms, then time the calls the warm-up rate fits in target_ms. */
static double measure(struct ctx* c, const struct row* row, double warmup_ms, double target_ms) {
    double t0 = now_ns(), end = t0 + warmup_ms * 1e6, t;
    long warm = 0;
    do {
        row->call(c);
        warm++;
        t = now_ns();
    } while (t < end);
    long n = (long)ceil(target_ms * 1e6 * (double)warm / (t - t0));
    if (n < 1) n = 1;
    t0 = now_ns();
    for (long i = 0; i < n; i++) row->call(c);
    return (now_ns() - t0) / (double)n;
}

static void* read_file(const char* path, uint64_t nbytes) {
    FILE* f = fopen(path, "rb");
    void* p = host_array(nbytes, 0);
    if (!f || fread(p, 1, nbytes, f) != nbytes) {
        fprintf(stderr, "c_loop: cannot read %llu bytes from %s\n", (unsigned long long)nbytes, path);
        exit(1);
    }
    fclose(f);
    return p;
}

int main(int argc, char** argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s TINY.accm BIG.accm TINY_INPUT.bin BIG_INPUT.bin [--uri URI] [--inflight K]\n",
                argv[0]);
        return 2;
    }
    const char* uri = "emu:cores=1,threads=1";
    long inflight = 8;
    for (int i = 5; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--uri")) {
            uri = argv[i + 1];
        } else if (!strcmp(argv[i], "--inflight")) {
            inflight = strtol(argv[i + 1], NULL, 10);
        } else {
            fprintf(stderr, "c_loop: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (inflight < 1 || inflight > MAX_INFLIGHT) {
        fprintf(stderr, "c_loop: --inflight must be from 1 to %d\n", MAX_INFLIGHT);
        return 2;
    }

    static struct ctx c;
    c.inflight = (size_t)inflight;
    CHECK(accel_device_open(uri, &c.dev));
    load(&c, argv[1], &c.tiny);
    load(&c, argv[2], &c.big);
    c.tiny_host = read_file(argv[3], c.tiny.in_bytes);
    c.big_host = read_file(argv[4], c.big.in_bytes);
    c.big_copy = host_array(c.big.in_bytes, 0);
    for (size_t i = 0; i < c.inflight; i++) CHECK(accel_buffer_alloc(c.dev, c.tiny.out_bytes, &c.outs[i]));

    /* The models' outputs for the given inputs, so the caller can check that this side computes. */
    printf("ready");
    const void* hosts[] = {c.tiny_host, c.big_host};
    struct model* models[] = {&c.tiny, &c.big};
    for (int m = 0; m < 2; m++) {
        CHECK(accel_buffer_write(models[m]->in, 0, hosts[m], models[m]->in_bytes));
        CHECK(accel_run(models[m]->handle, &models[m]->in, 1, &models[m]->out, 1, NULL));
        float* y = NULL;
        CHECK(accel_buffer_host_ptr(models[m]->out, (void**)&y));
        for (uint64_t i = 0; i < models[m]->out_bytes / sizeof(float); i++) printf(" %.9g", y[i]);
    }
    printf("\n");
    fflush(stdout);

    char line[256], name[64];
    double warmup_ms = 0, target_ms = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (!strncmp(line, "quit", 4)) break;
        if (sscanf(line, "%63s %lf %lf", name, &warmup_ms, &target_ms) != 3) {
            fprintf(stderr, "c_loop: bad command %s", line);
            return 2;
        }
        const struct row* row = NULL;
        for (size_t i = 0; i < sizeof ROWS / sizeof ROWS[0]; i++)
            if (!strcmp(ROWS[i].name, name)) row = &ROWS[i];
        if (!row) {
            fprintf(stderr, "c_loop: unknown row %s\n", name);
            return 2;
        }
        double ns = measure(&c, row, warmup_ms, target_ms);
        if (row->call == async_batch) ns /= (double)c.inflight;
        printf("%.1f\n", ns);
        fflush(stdout);
    }

    for (size_t i = 0; i < c.inflight; i++) accel_buffer_release(c.outs[i]);
    for (int i = 0; i < 2; i++) {
        accel_buffer_release(models[i]->in);
        accel_buffer_release(models[i]->out);
        accel_model_release(models[i]->handle);
    }
    accel_device_release(c.dev);
    free(c.tiny_host);
    free(c.big_host);
    free(c.big_copy);
    return 0;
}
