/* test_vart.c - the vart driver through accel's public ABI, on the stand-in VART: opening and
 * introspection, zero-copy and copying runs checked against onnxruntime's numbers (int8, +-1; a float32
 * NCHW DPU subgraph, the stand-in's liberty, within float tolerance), async
 * and concurrent jobs with callbacks, every validation error (the stand-in would abort the process on
 * any of them reaching it), per-job timeouts and cancellation while VART holds a runner.
 * argv: <models folder> <path of the stand-in's libvart-runner.so> <part> */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <accel/accel.h>

#include "test_util.h"

#define CHECK(cond) REQUIRE(cond, "check failed: %s", #cond)
#define OK(call) REQUIRE_OK(call)
/* A call that must fail with `status` and a message containing `text`. */
#define FAILS(call, status, text)                                                           \
    do {                                                                                    \
        accel_status s_ = (call);                                                           \
        REQUIRE(s_ == (status) && strstr(accel_last_error_message(), (text)),               \
                "%s gave %s \"%s\", expected %s with \"%s\"", #call, accel_status_name(s_), \
                accel_last_error_message(), accel_status_name(status), text);               \
    } while (0)

static const char* g_dir;
static void (*g_hold)(int);
static int (*g_running)(void);

static void* read_file(const char* name, size_t* size) {
    char* path = test_path(g_dir, name);
    size_t ignored;
    void* data = test_read_file(path, size ? size : &ignored);
    free(path);
    return data;
}

static accel_model* load(accel_device* dev, const char* file) {
    char path[1024];
    accel_model* m = NULL;
    snprintf(path, sizeof path, "%s/%s", g_dir, file);
    OK(accel_model_load_file(dev, path, &m));
    return m;
}

#define alloc test_alloc

static void* host(accel_buffer* b) {
    void* p = NULL;
    OK(accel_buffer_host_ptr(b, &p));
    return p;
}

static void close_enough(const int8_t* got, const int8_t* want, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) REQUIRE(abs(got[i] - want[i]) <= 1, "element %zu: got %d, want %d", i, got[i], want[i]);
}

static uint64_t copied(accel_device* dev) {
    accel_memory_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    OK(accel_device_get_stats(dev, &s));
    return s.bytes_copied;
}

#define sleep_ms test_sleep_ms

/* ---- conv: x (1,8,8,3) -> y (1,8,8,4), int8 NHWC ---- */

typedef struct {
    accel_buffer* in;
    accel_buffer* out;
} conv_io;

static int8_t* g_x;
static int8_t* g_y;

static void conv_fill(conv_io* io) {
    memcpy(host(io->in), g_x, 192);
    memset(host(io->out), 0x55, 256);
}

static void conv_check(conv_io* io) { close_enough((const int8_t*)host(io->out), g_y, 256); }

static accel_status conv_run(accel_model* m, conv_io* io, const accel_run_options* o) {
    return accel_run(m, &io->in, 1, &io->out, 1, o);
}

static void test_basics(void) {
    accel_device* dev = NULL;
    accel_device_info info;
    accel_tensor_info t;
    size_t n = 0, i, size = 0;
    char* fix;
    void* bytes;
    accel_model* m;

    OK(accel_driver_count(&n));
    for (i = 0; i < n; i++) {
        const char* name = NULL;
        OK(accel_driver_name(i, &name));
        if (strcmp(name, "vart") == 0) break;
    }
    CHECK(i < n);
    FAILS(accel_device_open("vart:1", &dev), ACCEL_ERR_NOT_FOUND, "no DPU device 1");
    FAILS(accel_device_open("vart:zero", &dev), ACCEL_ERR_INVALID_ARGUMENT, "zero");
    FAILS(accel_device_open("vart:0,runners=0", &dev), ACCEL_ERR_INVALID_ARGUMENT, "runners=0");
    FAILS(accel_device_open("vart:0,cores=2", &dev), ACCEL_ERR_INVALID_ARGUMENT, "unknown option 'cores=2'");
    FAILS(accel_device_open("vart:0,hint=throughput", &dev), ACCEL_ERR_INVALID_ARGUMENT,
          "unknown option 'hint=throughput'");
    CHECK(dev == NULL);
    OK(accel_device_open("vart:0,runners=3", &dev));
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(accel_device_get_info(dev, &info));
    CHECK(strcmp(info.backend, "vart") == 0 && info.max_inflight == 3 && info.alignment == 64);
    CHECK(info.hint == ACCEL_HINT_NONE); /* the board's runners are not chosen by a performance hint */

    m = load(dev, "conv.xmodel");
    OK(accel_model_input_count(m, &n));
    CHECK(n == 1);
    OK(accel_model_output_count(m, &n));
    CHECK(n == 1);
    fix = (char*)read_file("conv.fix", NULL);
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    OK(accel_model_input_info(m, 0, &t));
    CHECK(strcmp(t.name, "x") == 0 && t.dtype == ACCEL_DTYPE_INT8 && t.layout == ACCEL_LAYOUT_NHWC);
    CHECK(t.ndim == 4 && t.shape[0] == 1 && t.shape[1] == 8 && t.shape[2] == 8 && t.shape[3] == 3);
    CHECK(t.strides[3] == 1 && t.strides[2] == 3 && t.strides[0] == 192 && t.byte_size == 192);
    CHECK(t.quant.type == ACCEL_QUANT_SHIFT && t.quant.count == 1 && t.quant.shifts[0] == 6);
    OK(accel_model_output_info(m, 0, &t));
    CHECK(strcmp(t.name, "y") == 0 && t.byte_size == 256 && t.shape[3] == 4);
    CHECK(t.quant.type == ACCEL_QUANT_SHIFT && t.quant.shifts[0] == atoi(strchr(fix, '\n') + 1));
    FAILS(accel_model_input_info(m, 1, &t), ACCEL_ERR_INVALID_ARGUMENT, "input index 1");
    accel_model_release(m);
    free(fix);

    /* From memory (through a private temporary file). */
    bytes = read_file("two_io.xmodel", &size);
    m = NULL;
    OK(accel_model_load_memory(dev, bytes, size, &m));
    OK(accel_model_input_info(m, 1, &t));
    CHECK(strcmp(t.name, "ab") == 0 && t.layout == ACCEL_LAYOUT_NONE && t.quant.shifts[0] == 5);
    /* Outputs in their tensors' name order (XIR's, which VART's runner keeps), not the ONNX model's (sum, diff). */
    OK(accel_model_output_info(m, 0, &t));
    CHECK(strcmp(t.name, "diff") == 0);
    OK(accel_model_output_info(m, 1, &t));
    CHECK(strcmp(t.name, "sum") == 0);
    accel_model_release(m);
    free(bytes);
    accel_device_release(dev);
}

/* ---- synchronous runs: the zero-copy path, the copy path, multiple inputs and outputs ---- */

static void test_runs(void) {
    accel_device* dev = NULL;
    accel_model *m, *m2;
    conv_io lent, plain;
    accel_buffer *a, *ab, *outs[2], *ins[2];
    int8_t *qa, *qab, *sum, *diff;
    uint64_t before;
    int round;

    OK(accel_device_open("vart:0,runners=2", &dev));
    m = load(dev, "conv.xmodel");
    /* Exactly the tensors' sizes: runner buffers lent as accel buffers. */
    lent.in = alloc(dev, 192);
    lent.out = alloc(dev, 256);
    /* Other sizes: plain host memory, copied by VART. */
    plain.in = alloc(dev, 192 + 64);
    plain.out = alloc(dev, 256 + 64);
    for (round = 0; round < 3; round++) {
        conv_fill(&lent);
        before = copied(dev);
        OK(conv_run(m, &lent, NULL));
        conv_check(&lent);
        CHECK(copied(dev) == before); /* zero copy */
        conv_fill(&plain);
        before = copied(dev);
        OK(conv_run(m, &plain, NULL));
        conv_check(&plain);
        CHECK(copied(dev) == before + 192 + 256);
        /* Mixed: a lent input with a plain output. */
        memset(host(plain.out), 0, 256);
        OK(accel_run(m, &lent.in, 1, &plain.out, 1, NULL));
        close_enough((const int8_t*)host(plain.out), g_y, 256);
    }
    /* Per-node profiling (ABI 1.1): VART runs a DPU subgraph as one call and times no layer, so the
     * driver leaves node times out: a job asking for them runs as usual, its node times UNSUPPORTED. */
    {
        accel_run_options o;
        accel_job* job = NULL;
        size_t nodes = 0;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.flags = ACCEL_SUBMIT_PROFILE_NODES;
        conv_fill(&lent);
        OK(accel_job_submit(m, &lent.in, 1, &lent.out, 1, &o, &job));
        OK(accel_job_wait(job, -1));
        conv_check(&lent);
        FAILS(accel_job_get_node_times(job, NULL, 0, &nodes), ACCEL_ERR_UNSUPPORTED, "cannot time");
        accel_job_release(job);
        FAILS(accel_model_get_node_count(m, &nodes), ACCEL_ERR_UNSUPPORTED, "'vart' driver cannot time");
    }
    /* The model goes first; the lent buffers keep their runner (and its graph) alive. */
    accel_model_release(m);
    conv_fill(&lent);
    OK(accel_buffer_sync(lent.in, ACCEL_SYNC_TO_DEVICE, 0, 0));
    OK(accel_buffer_sync(lent.out, ACCEL_SYNC_TO_HOST, 0, 0));
    accel_buffer_release(lent.in);
    accel_buffer_release(lent.out);
    accel_buffer_release(plain.in);
    accel_buffer_release(plain.out);

    /* Two inputs ("ab" contains "a": VART matches buffers by name) and two saturating outputs. */
    m2 = load(dev, "two_io.xmodel");
    qa = (int8_t*)read_file("two_io.in0.bin", NULL);
    qab = (int8_t*)read_file("two_io.in1.bin", NULL);
    diff = (int8_t*)read_file("two_io.out0.bin", NULL); /* the DPU subgraph's order: tensor names sorted */
    sum = (int8_t*)read_file("two_io.out1.bin", NULL);
    for (round = 0; round < 2; round++) {
        uint64_t extra = round ? 64 : 0; /* lent, then plain */
        a = alloc(dev, 16 + extra);
        ab = alloc(dev, 16 + extra);
        outs[0] = alloc(dev, 16 + extra);
        outs[1] = alloc(dev, 16 + extra);
        memcpy(host(a), qa, 16);
        memcpy(host(ab), qab, 16);
        ins[0] = a;
        ins[1] = ab;
        OK(accel_run(m2, ins, 2, outs, 2, NULL));
        close_enough((const int8_t*)host(outs[0]), diff, 16);
        close_enough((const int8_t*)host(outs[1]), sum, 16);
        accel_buffer_release(a);
        accel_buffer_release(ab);
        accel_buffer_release(outs[0]);
        accel_buffer_release(outs[1]);
    }
    free(qa);
    free(qab);
    free(sum);
    free(diff);
    accel_model_release(m2);
    accel_device_release(dev);
}

/* ---- a float32 NCHW DPU subgraph: x (1,3,8,8) -> y (1,4,8,8), unquantized ---- */

static void check_dense_f32_nchw(const accel_tensor_info* t, const char* name, int64_t c) {
    CHECK(strcmp(t->name, name) == 0 && t->dtype == ACCEL_DTYPE_FLOAT32 && t->layout == ACCEL_LAYOUT_NCHW);
    CHECK(t->ndim == 4 && t->shape[0] == 1 && t->shape[1] == c && t->shape[2] == 8 && t->shape[3] == 8);
    CHECK(t->strides[3] == 4 && t->strides[2] == 32 && t->strides[1] == 256 && t->strides[0] == c * 256);
    CHECK(t->byte_size == (uint64_t)c * 256 && t->quant.type == ACCEL_QUANT_NONE && t->quant.count == 0);
    CHECK(t->quant.shifts == NULL && t->quant.scales == NULL);
}

static void test_float(void) {
    accel_device* dev = NULL;
    accel_model* m;
    accel_tensor_info t;
    float *x, *y;
    int round;
    size_t i;

    OK(accel_device_open("vart:0,runners=2", &dev));
    m = load(dev, "conv_f32.xmodel");
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    OK(accel_model_input_info(m, 0, &t));
    check_dense_f32_nchw(&t, "x", 3);
    OK(accel_model_output_info(m, 0, &t));
    check_dense_f32_nchw(&t, "y", 4);

    x = (float*)read_file("conv_f32.in0.bin", NULL);
    y = (float*)read_file("conv_f32.out0.bin", NULL);
    for (round = 0; round < 2; round++) {
        uint64_t extra = round ? 64 : 0, before = copied(dev); /* lent (zero copy), then plain */
        conv_io io;
        const float* got;
        io.in = alloc(dev, 768 + extra);
        io.out = alloc(dev, 1024 + extra);
        memcpy(host(io.in), x, 768);
        memset(host(io.out), 0x55, 1024);
        OK(conv_run(m, &io, NULL));
        got = (const float*)host(io.out);
        for (i = 0; i < 256; i++)
            REQUIRE(fabsf(got[i] - y[i]) <= 1e-4f + 1e-4f * fabsf(y[i]), "y[%zu]: got %g, want %g", i, got[i], y[i]);
        CHECK(copied(dev) == before + (round ? 768 + 1024 : 0));
        accel_buffer_release(io.in);
        accel_buffer_release(io.out);
    }
    free(x);
    free(y);
    accel_model_release(m);
    accel_device_release(dev);
}

/* ---- asynchronous and concurrent jobs with callbacks ---- */

typedef struct {
    pthread_mutex_t mutex;
    int calls;
    int failures;
} counter;

static void count_callback(accel_job* job, accel_status status, void* user_data) {
    counter* c = (counter*)user_data;
    int32_t done = 0;
    /* Inside its callback the job has its result. */
    if (accel_job_wait(job, 0) != status || accel_job_poll(job, &done) != ACCEL_OK || !done)
        status = ACCEL_ERR_INTERNAL;
    pthread_mutex_lock(&c->mutex);
    c->calls++;
    if (status != ACCEL_OK) c->failures++;
    pthread_mutex_unlock(&c->mutex);
}

typedef struct {
    accel_model* model;
    accel_device* device;
    counter* counter;
} worker_args;

#define JOBS_PER_THREAD 6

static void* submit_thread(void* arg) {
    worker_args* w = (worker_args*)arg;
    conv_io io[JOBS_PER_THREAD];
    accel_job* jobs[JOBS_PER_THREAD];
    accel_run_options o;
    int i;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.callback = count_callback;
    o.user_data = w->counter;
    for (i = 0; i < JOBS_PER_THREAD; i++) {
        /* Every other job on lent buffers (pinned to their runner), the rest copied. */
        io[i].in = alloc(w->device, 192 + (i % 2) * 64);
        io[i].out = alloc(w->device, 256 + (i % 2) * 64);
        conv_fill(&io[i]);
        jobs[i] = NULL;
        OK(accel_job_submit(w->model, &io[i].in, 1, &io[i].out, 1, &o, &jobs[i]));
    }
    for (i = 0; i < JOBS_PER_THREAD; i++) {
        accel_job_timing t;
        OK(accel_job_wait(jobs[i], -1));
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        OK(accel_job_get_timing(jobs[i], &t));
        CHECK(t.core >= 0 && t.core < 2 && t.started_ns >= t.queued_ns && t.finished_ns >= t.started_ns);
        conv_check(&io[i]);
        accel_job_release(jobs[i]);
        accel_buffer_release(io[i].in);
        accel_buffer_release(io[i].out);
    }
    return NULL;
}

static void test_async(void) {
    accel_device* dev = NULL;
    accel_model* m;
    counter c;
    worker_args w;
    pthread_t threads[3];
    accel_memory_stats s;
    conv_io io;
    accel_run_options o;
    int i;

    pthread_mutex_init(&c.mutex, NULL);
    c.calls = c.failures = 0;
    OK(accel_device_open("vart:0,runners=2", &dev));
    m = load(dev, "conv.xmodel");
    w.model = m;
    w.device = dev;
    w.counter = &c;
    for (i = 0; i < 3; i++) CHECK(pthread_create(&threads[i], NULL, submit_thread, &w) == 0);
    for (i = 0; i < 3; i++) CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(c.calls == 3 * JOBS_PER_THREAD && c.failures == 0);

    /* core_mask: bit i lets a job run on runner i (the device's core i), whichever runner lent its buffers. */
    io.in = alloc(dev, 192);
    io.out = alloc(dev, 256);
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    for (i = 0; i < 4; i++) {
        accel_job* job = NULL;
        accel_job_timing t;
        conv_fill(&io);
        o.core_mask = (i % 2) ? 2 : 1;
        OK(accel_job_submit(m, &io.in, 1, &io.out, 1, &o, &job));
        OK(accel_job_wait(job, -1));
        memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        OK(accel_job_get_timing(job, &t));
        REQUIRE(t.core == i % 2, "core_mask 0x%llx: the job ran on core %d", (unsigned long long)o.core_mask, t.core);
        conv_check(&io);
        accel_job_release(job);
    }
    accel_buffer_release(io.in);
    accel_buffer_release(io.out);

    /* Fire and forget: no job handle, the callback only. */
    io.in = alloc(dev, 192);
    io.out = alloc(dev, 256);
    conv_fill(&io);
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.callback = count_callback;
    o.user_data = &c;
    OK(accel_job_submit(m, &io.in, 1, &io.out, 1, &o, NULL));
    for (i = 0; i < 5000; i++) {
        int calls;
        pthread_mutex_lock(&c.mutex);
        calls = c.calls;
        pthread_mutex_unlock(&c.mutex);
        if (calls == 3 * JOBS_PER_THREAD + 1) break;
        sleep_ms(1);
    }
    CHECK(i < 5000 && c.failures == 0);
    accel_buffer_release(io.in);
    accel_buffer_release(io.out);
    accel_model_release(m);
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    for (i = 0; i < 5000; i++) { /* the fire-and-forget job's references go after its callback */
        OK(accel_device_get_stats(dev, &s));
        if (s.live_buffers == 0 && s.jobs_completed == s.jobs_submitted) break;
        sleep_ms(1);
    }
    CHECK(s.live_buffers == 0 && s.jobs_submitted == 3 * JOBS_PER_THREAD + 4 + 1 && s.bytes_in_use == 0);
    accel_device_release(dev);
    pthread_mutex_destroy(&c.mutex);
}

/* ---- validation: each of these would abort the process inside VART ---- */

/* ABI 1.4: one DPU subgraph of a file that has two, by name (accel_load_options.subgraph). */
static void test_subgraph_by_name(accel_device* dev, const char* path) {
    FILE* f = fopen(path, "rb");
    CHECK(f != NULL);
    static char bytes[1 << 20];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    CHECK(n > 0 && n < sizeof bytes);
    accel_load_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    accel_model* m = NULL;
    accel_tensor_info info;
    o.subgraph = "subgraph_conv_1";
    OK(accel_model_load_memory_with_options(dev, bytes, n, &o, &m));
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(accel_model_output_info(m, 0, &info));
    EXPECT(strcmp(info.name, "y_1") == 0, "subgraph_conv_1's output is '%s', expected 'y_1'", info.name);
    accel_model_release(m);
    m = NULL;
    o.subgraph = "subgraph_third";
    FAILS(accel_model_load_memory_with_options(dev, bytes, n, &o, &m), ACCEL_ERR_INVALID_ARGUMENT,
          "no DPU subgraph 'subgraph_third'; its DPU subgraphs: 'subgraph_conv_0', 'subgraph_conv_1'");
    o.subgraph = NULL;  /* no name: as accel_model_load_memory */
    FAILS(accel_model_load_memory_with_options(dev, bytes, n, &o, &m), ACCEL_ERR_UNSUPPORTED, "2 DPU subgraphs");
    FAILS(accel_model_load_memory_with_options(dev, bytes, n, NULL, &m), ACCEL_ERR_UNSUPPORTED, "2 DPU subgraphs");
    o.reserved = 1;
    FAILS(accel_model_load_memory_with_options(dev, bytes, n, &o, &m), ACCEL_ERR_INVALID_ARGUMENT,
          "options->reserved is not 0");
    CHECK(m == NULL);
}

static void test_errors(void) {
    accel_device *dev = NULL, *other = NULL;
    accel_model* m;
    accel_buffer *in, *out, *small, *foreign, *pair[2];
    accel_run_options o;
    char path[1024];
    FILE* f;

    OK(accel_device_open("vart:0", &dev));
    OK(accel_device_open("vart:0", &other));
    snprintf(path, sizeof path, "%s/missing.xmodel", g_dir);
    m = NULL;
    FAILS(accel_model_load_file(dev, path, &m), ACCEL_ERR_NOT_FOUND, "missing.xmodel");
    FAILS(accel_model_load_file(dev, g_dir, &m), ACCEL_ERR_NOT_FOUND, "not a regular file");
    snprintf(path, sizeof path, "%s/garbage.xmodel", g_dir);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    fputs("not a serialized XIR graph", f);
    fclose(f);
    FAILS(accel_model_load_file(dev, path, &m), ACCEL_ERR_MODEL_FORMAT, "not a valid xmodel");
    FAILS(accel_model_load_memory(dev, "junk", 4, &m), ACCEL_ERR_MODEL_FORMAT, "the model bytes is not a valid xmodel");
    snprintf(path, sizeof path, "%s/two_dpu.xmodel", g_dir);
    FAILS(accel_model_load_file(dev, path, &m), ACCEL_ERR_UNSUPPORTED,
          "2 DPU subgraphs ('subgraph_conv_0', 'subgraph_conv_1'): name the one to run");
    test_subgraph_by_name(dev, path);
    snprintf(path, sizeof path, "%s/no_dpu.xmodel", g_dir);
    FAILS(accel_model_load_file(dev, path, &m), ACCEL_ERR_UNSUPPORTED, "no DPU subgraph");
    CHECK(m == NULL);

    m = load(dev, "conv.xmodel");
    in = alloc(dev, 192);
    out = alloc(dev, 256);
    small = alloc(dev, 128);
    foreign = NULL;
    OK(accel_buffer_alloc(other, 256, &foreign));
    FAILS(accel_run(m, &in, 0, &out, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT, "0 inputs given, the model has 1");
    pair[0] = in;
    pair[1] = in;
    FAILS(accel_run(m, pair, 2, &out, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT, "2 inputs given");
    FAILS(accel_run(m, &in, 1, pair, 2, NULL), ACCEL_ERR_INVALID_ARGUMENT, "2 outputs given");
    pair[0] = NULL;
    FAILS(accel_run(m, pair, 1, &out, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT, "input 'x' is NULL");
    FAILS(accel_run(m, &small, 1, &out, 1, NULL), ACCEL_ERR_SHAPE, "input 'x' needs 192 bytes, its buffer has 128");
    FAILS(accel_run(m, &in, 1, &small, 1, NULL), ACCEL_ERR_SHAPE, "output 'y' needs 256 bytes");
    FAILS(accel_run(m, &out, 1, &out, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT, "output 'y' shares memory with input 'x'");
    /* Aliasing is by memory, not by handle: a second buffer over the output's bytes is that output too. */
    accel_buffer* alias = NULL;
    OK(accel_buffer_import(dev, host(out), 256, &alias));
    FAILS(accel_run(m, &alias, 1, &out, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT,
          "output 'y' shares memory with input 'x'");
    accel_buffer_release(alias);
    /* Nor by start address: an input over the output's last 192 bytes overlaps it without sharing its start. */
    OK(accel_buffer_import(dev, (char*)host(out) + 64, 192, &alias));
    FAILS(accel_run(m, &alias, 1, &out, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT,
          "output 'y' shares memory with input 'x'");
    accel_buffer_release(alias);
    FAILS(accel_run(m, &in, 1, &foreign, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT, "belongs to another device");
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.priority = 256;
    FAILS(accel_run(m, &in, 1, &out, 1, &o), ACCEL_ERR_INVALID_ARGUMENT, "priority 256");
    o.priority = 0;
    FAILS(accel_job_submit(m, &in, 1, &out, 1, &o, NULL), ACCEL_ERR_INVALID_ARGUMENT, "no callback");
    FAILS(accel_buffer_write(in, 190, "abc", 3), ACCEL_ERR_INVALID_ARGUMENT, "outside the 192-byte buffer");
    FAILS(accel_buffer_sync(in, 3, 0, 0), ACCEL_ERR_INVALID_ARGUMENT, "direction 3");
    FAILS(accel_buffer_import(dev, (char*)host(out) + 1, 16, &small), ACCEL_ERR_ALIGNMENT, "aligned");
    /* Still fine afterwards. */
    memcpy(host(in), g_x, 192);
    OK(accel_run(m, &in, 1, &out, 1, NULL));
    close_enough((const int8_t*)host(out), g_y, 256);
    accel_buffer_release(in);
    accel_buffer_release(out);
    accel_buffer_release(small);
    accel_buffer_release(foreign);
    accel_model_release(m);
    accel_device_release(other);
    accel_device_release(dev);
}

/* ---- timeouts and cancellation, with VART held inside execute_async ---- */

static accel_status g_last_status = -1;
static pthread_mutex_t g_status_mutex = PTHREAD_MUTEX_INITIALIZER;

static void status_callback(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    (void)user_data;
    pthread_mutex_lock(&g_status_mutex);
    g_last_status = status;
    pthread_mutex_unlock(&g_status_mutex);
}

static accel_status last_status(void) {
    accel_status s;
    pthread_mutex_lock(&g_status_mutex);
    s = g_last_status;
    pthread_mutex_unlock(&g_status_mutex);
    return s;
}

static void test_timeouts(void) {
    accel_device* dev = NULL;
    accel_model* m;
    conv_io io, io2;
    accel_job *held = NULL, *queued = NULL, *busy = NULL;
    accel_run_options o;
    int i;

    OK(accel_device_open("vart:0,runners=1", &dev));
    m = load(dev, "conv.xmodel");
    io.in = alloc(dev, 192 + 64);
    io.out = alloc(dev, 256 + 64);
    io2.in = alloc(dev, 192 + 64);
    io2.out = alloc(dev, 256 + 64);
    conv_fill(&io);
    conv_fill(&io2);
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.callback = status_callback;

    g_hold(1);
    /* Running in VART past its own timeout: ours ends it (VART's, 10 s, is never reached). */
    o.timeout_us = 50000;
    OK(accel_job_submit(m, &io.in, 1, &io.out, 1, &o, &held));
    FAILS(accel_job_wait(held, -1), ACCEL_ERR_TIMEOUT, "timeout");
    CHECK(last_status() == ACCEL_ERR_TIMEOUT && g_running() == 1);
    /* Its runner is still busy: the next job queues, and releasing it cancels it. */
    o.timeout_us = 0;
    OK(accel_job_submit(m, &io2.in, 1, &io2.out, 1, &o, &queued));
    FAILS(accel_job_submit(m, &io2.in, 1, &io2.out, 1,
                           &(accel_run_options){sizeof o, 0, 0, 0, ACCEL_SUBMIT_NO_WAIT, 0, 0, 0}, &busy),
          ACCEL_ERR_BUSY, "max_inflight 1");
    FAILS(accel_job_wait(queued, 20000), ACCEL_ERR_NOT_READY, "not finished");
    accel_job_release(queued);
    for (i = 0; i < 5000 && last_status() != ACCEL_ERR_CANCELLED; i++) sleep_ms(1);
    CHECK(last_status() == ACCEL_ERR_CANCELLED);
    /* A job queued behind the held one times out before it starts. */
    o.timeout_us = 20000;
    FAILS(conv_run(m, &io2, &o), ACCEL_ERR_TIMEOUT, "timeout");
    g_hold(0);
    for (i = 0; i < 5000 && g_running() != 0; i++) sleep_ms(1);
    CHECK(g_running() == 0);
    accel_job_release(held);
    /* The runner is free again and the numbers are right. */
    o.timeout_us = 5000000;
    conv_fill(&io);
    OK(conv_run(m, &io, &o));
    conv_check(&io);
    CHECK(last_status() == ACCEL_OK);
    accel_buffer_release(io.in);
    accel_buffer_release(io.out);
    accel_buffer_release(io2.in);
    accel_buffer_release(io2.out);
    accel_model_release(m);
    accel_device_release(dev);
}

int main(int argc, char** argv) {
    void* runner_lib;
    test_name = "driver_vart";
    CHECK(argc == 4);
    g_dir = argv[1];
    /* The stand-in's test hooks, from the library the driver loaded. */
    runner_lib = dlopen(argv[2], RTLD_NOW);
    CHECK(runner_lib != NULL);
    *(void**)&g_hold = dlsym(runner_lib, "standin_vart_hold");
    *(void**)&g_running = dlsym(runner_lib, "standin_vart_running");
    CHECK(g_hold && g_running);
    g_x = (int8_t*)read_file("conv.in0.bin", NULL);
    g_y = (int8_t*)read_file("conv.out0.bin", NULL);
    if (strcmp(argv[3], "basics") == 0) test_basics();
    else if (strcmp(argv[3], "runs") == 0) test_runs();
    else if (strcmp(argv[3], "async") == 0) test_async();
    else if (strcmp(argv[3], "errors") == 0) test_errors();
    else if (strcmp(argv[3], "timeouts") == 0) test_timeouts();
    else if (strcmp(argv[3], "float") == 0) test_float();
    else CHECK(!"unknown part");
    free(g_x);
    free(g_y);
    dlclose(runner_lib);
    return test_finish();
}
