/* test_bpu.c - the bpu driver through the public ABI only, on a stand-in runtime of either generation:
 *   test_bpu <models dir> dnn|ucp info|run|async|cancel|timeout|limits|errors|late
 * dnn: the X3/X5 libdnn driver on its stand-in, .bin models; ucp: the S100 hbUCP driver on its
 * stand-in, .hbm models. The models and their reference bytes come from make_models.py (the fixture).
 * The stand-in's test hook (STANDIN_HOLD(1), named by CMake: the executable links the generation's
 * stand-in) keeps tasks from running, which makes limits, timeouts and cancellation deterministic.
 * What a generation cannot express is left out with a printed reason. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../c/test_util.h"

void STANDIN_HOLD(int on);

/* What differs between the generations, as the tests see it. */
typedef struct generation {
    const char* name;
    const char* suffix;         /* of its model files */
    uint32_t cores;             /* BPU cores its runtime addresses (bpu:any's default) */
    int has_layout;             /* tensors say NCHW / NHWC */
    int s100;                   /* dynamic strides and int32 zero points (the dyn model) */
    const char* device_name;    /* part of the device's name */
    const char* missing_file;   /* part of the message for a model file that does not exist */
    const char* invalid_model;  /* ... for one that is not a model */
    const char* task_limit;     /* ... at the runtime's own task limit */
} generation;

static const generation kGenerations[] = {
    {"dnn", ".bin", 2, 1, 0, "libdnn", "hbDNNInitializeFromFiles: -6000006 (can not open file)",
     "hbDNNInitializeFromFiles: -6000002 (invalid model)", "hbDNNInfer: -6000009 (task number exceeds limit)"},
    {"ucp", ".hbm", 4, 0, 1, "hbUCP", "hbDNNInitializeFromFiles: -500001 (file cannot be opened)",
     "hbDNNInitializeFromFiles: -600002 (invalid model)", "hbDNNInferV2: -200001 (too many tasks)"},
};

static const char* g_dir;
static const generation* g;

/* The path of model file <name><suffix><tail> (tail: "" or "#model"). */
static char* model_path(const char* name, const char* tail) {
    char file[128];
    snprintf(file, sizeof file, "%s%s%s", name, g->suffix, tail);
    return test_path(g_dir, file);
}

/* A part of a test the generation cannot express, said so. */
static void left_out(const char* what, const char* why) { printf("%s: %s left out: %s\n", g->name, what, why); }

/* ---- helpers ---- */

/* Loads model file <name><suffix><tail>. */
static accel_model* load_model(accel_device* d, const char* name, const char* tail) {
    char* path = model_path(name, tail);
    accel_model* m = NULL;
    REQUIRE_OK(accel_model_load_file(d, path, &m));
    free(path);
    return m;
}

static accel_model* load(accel_device* d, const char* name) { return load_model(d, name, ""); }

static accel_tensor_info info_of(accel_model* m, int input, size_t i) {
    accel_tensor_info t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    if (input) REQUIRE_OK(accel_model_input_info(m, i, &t));
    else REQUIRE_OK(accel_model_output_info(m, i, &t));
    return t;
}

static size_t count_of(accel_model* m, int input) {
    size_t n = 0;
    if (input) REQUIRE_OK(accel_model_input_count(m, &n));
    else REQUIRE_OK(accel_model_output_count(m, &n));
    return n;
}

static void* host(accel_buffer* b) {
    void* p = NULL;
    REQUIRE_OK(accel_buffer_host_ptr(b, &p));
    return p;
}

typedef struct io {
    size_t n_in, n_out;
    accel_buffer* in[4];
    accel_buffer* out[4];
} io;

/* Buffers for the model's tensors; inputs get <name>.in<i> written straight into the host pointer (no
 * sync: the driver must clean them), outputs are filled with 0x5A. */
static io make_io(accel_device* d, accel_model* m, const char* name) {
    io x;
    memset(&x, 0, sizeof x);
    x.n_in = count_of(m, 1);
    x.n_out = count_of(m, 0);
    for (size_t i = 0; i < x.n_in; i++) {
        accel_tensor_info t = info_of(m, 1, i);
        char file[128];
        size_t size = 0;
        snprintf(file, sizeof file, "%s.in%zu", name, i);
        char* path = test_path(g_dir, file);
        void* data = test_read_file(path, &size);
        REQUIRE(size == t.byte_size, "%s: %zu bytes, the tensor has %llu", file, size, (unsigned long long)t.byte_size);
        x.in[i] = test_alloc(d, t.byte_size);
        memcpy(host(x.in[i]), data, size);
        free(data);
        free(path);
    }
    for (size_t i = 0; i < x.n_out; i++) {
        accel_tensor_info t = info_of(m, 0, i);
        x.out[i] = test_alloc(d, t.byte_size);
        memset(host(x.out[i]), 0x5A, t.byte_size);
    }
    return x;
}

static void release_io(io* x) {
    for (size_t i = 0; i < x->n_in; i++) accel_buffer_release(x->in[i]);
    for (size_t i = 0; i < x->n_out; i++) accel_buffer_release(x->out[i]);
}

static double element(const uint8_t* p, accel_dtype t) {
    switch (t) {
        case ACCEL_DTYPE_INT8: return *(const int8_t*)p;
        case ACCEL_DTYPE_UINT8: return *p;
        case ACCEL_DTYPE_INT16: {
            int16_t v;
            memcpy(&v, p, 2);
            return v;
        }
        case ACCEL_DTYPE_INT32: {
            int32_t v;
            memcpy(&v, p, 4);
            return v;
        }
        default: {
            float v;
            memcpy(&v, p, 4);
            return v;
        }
    }
}

/* Compares the valid elements (walked with the tensor's strides) of `got` with <name>.out<i>: floats
 * within 1e-4 relative, integers within one quantum. Returns 1 if they match. */
static int compare_output(accel_model* m, const char* name, size_t i, const void* got) {
    accel_tensor_info t = info_of(m, 0, i);
    char file[128];
    size_t size = 0;
    snprintf(file, sizeof file, "%s.out%zu", name, i);
    char* path = test_path(g_dir, file);
    uint8_t* want = test_read_file(path, &size);
    free(path);
    REQUIRE(size == t.byte_size, "%s: %zu bytes, the tensor has %llu", file, size, (unsigned long long)t.byte_size);
    int64_t index[ACCEL_MAX_DIMS] = {0};
    int64_t total = 1;
    for (uint32_t d = 0; d < t.ndim; d++) total *= t.shape[d];
    int ok = 1;
    for (int64_t n = 0; n < total && ok; n++) {
        int64_t off = 0;
        for (uint32_t d = 0; d < t.ndim; d++) off += index[d] * t.strides[d];
        double g = element((const uint8_t*)got + off, t.dtype), w = element(want + off, t.dtype);
        double tol = t.dtype == ACCEL_DTYPE_FLOAT32 ? 1e-4 * (1 + (w < 0 ? -w : w)) : 1.0;
        if (!(g - w <= tol && w - g <= tol)) {
            fprintf(stderr, "%s output %zu element %lld (offset %lld): got %g, want %g\n", name, i, (long long)n,
                    (long long)off, g, w);
            ok = 0;
        }
        for (int d = (int)t.ndim - 1; d >= 0; d--) {
            if (++index[d] < t.shape[d]) break;
            index[d] = 0;
        }
    }
    free(want);
    return ok;
}

static accel_run_options options(void) {
    accel_run_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    return o;
}

static accel_job* submit(accel_model* m, io* x, const accel_run_options* o) {
    accel_job* job = NULL;
    REQUIRE_OK(accel_job_submit(m, x->in, x->n_in, x->out, x->n_out, o, &job));
    return job;
}

static accel_memory_stats stats(accel_device* d) {
    accel_memory_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    REQUIRE_OK(accel_device_get_stats(d, &s));
    return s;
}

/* ---- info: URIs, device info, tensor descriptions ---- */

static void expect_dims(const int64_t* got, const int64_t* want, uint32_t n, const char* what) {
    for (uint32_t i = 0; i < n; i++)
        EXPECT(got[i] == want[i], "%s[%u] = %lld, want %lld", what, i, (long long)got[i], (long long)want[i]);
}

static void test_info(void) {
    size_t n = 0, found = 0;
    REQUIRE_OK(accel_driver_count(&n));
    for (size_t i = 0; i < n; i++) {
        const char* name = NULL;
        REQUIRE_OK(accel_driver_name(i, &name));
        found += strcmp(name, "bpu") == 0;
    }
    EXPECT(found == 1, "the bpu driver was found %zu times", found);

    struct {
        const char* uri;
        uint32_t cores;
    } good[] = {{"bpu:0", 1},      {"bpu:1", 1},           {"bpu:any", g->cores},
                {"bpu", g->cores}, {"bpu:any,cores=1", 1}, {"bpu:0,cores=2", 1}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        accel_device* d = test_open(good[i].uri);
        accel_device_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        REQUIRE_OK(accel_device_get_info(d, &info));
        EXPECT(strcmp(info.backend, "bpu") == 0, "backend '%s'", info.backend);
        EXPECT(info.cores == good[i].cores, "%s: %u cores, want %u", good[i].uri, info.cores, good[i].cores);
        EXPECT(info.max_inflight == 32 && info.alignment == 64 && info.debug == 0, "%s: max_inflight %u alignment %llu",
               good[i].uri, info.max_inflight, (unsigned long long)info.alignment);
        EXPECT(strstr(info.name, g->device_name) != NULL, "name '%s'", info.name);
        EXPECT(info.hint == ACCEL_HINT_NONE, "%s: hint %u, want none", good[i].uri, info.hint);
        EXPECT_OK(accel_device_check(d));
        accel_device_release(d);
    }
    char beyond[32], too_many[32];
    snprintf(beyond, sizeof beyond, "bpu:%u", g->cores);
    snprintf(too_many, sizeof too_many, "bpu:any,cores=%u", g->cores + 1);
    struct {
        const char* uri;
        accel_status want;
    } bad[] = {{beyond, ACCEL_ERR_NOT_FOUND},
               {"bpu:1,cores=1", ACCEL_ERR_NOT_FOUND},
               {"bpu:x", ACCEL_ERR_INVALID_ARGUMENT},
               {too_many, ACCEL_ERR_INVALID_ARGUMENT},
               {"bpu:any,pool=1M", ACCEL_ERR_INVALID_ARGUMENT},
               {"bpu:0,0", ACCEL_ERR_INVALID_ARGUMENT}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        accel_device* d = NULL;
        EXPECT_STATUS(accel_device_open(bad[i].uri, &d), bad[i].want);
        EXPECT_ERROR_REPORTED(bad[i].want);
    }

    accel_device* d = test_open("bpu:0");
    /* int8: input S8 [1,3,8,8] aligned [1,4,8,8]; output S8 per-axis, aligned [1,3,8,16]. */
    accel_model* m = load(d, "int8");
    accel_tensor_info x = info_of(m, 1, 0), y = info_of(m, 0, 0);
    const int64_t shape[4] = {1, 3, 8, 8}, x_strides[4] = {256, 64, 8, 1}, y_strides[4] = {384, 128, 16, 1};
    EXPECT(strcmp(x.name, "x") == 0 && strcmp(y.name, "y") == 0, "names '%s' '%s'", x.name, y.name);
    const accel_layout nchw = g->has_layout ? ACCEL_LAYOUT_NCHW : ACCEL_LAYOUT_NONE;
    EXPECT(x.dtype == ACCEL_DTYPE_INT8 && x.layout == nchw && x.ndim == 4 && x.byte_size == 256,
           "x: dtype %d layout %d ndim %u byte_size %llu", x.dtype, x.layout, x.ndim, (unsigned long long)x.byte_size);
    expect_dims(x.shape, shape, 4, "x.shape");
    expect_dims(x.strides, x_strides, 4, "x.strides");
    EXPECT(x.quant.type == ACCEL_QUANT_PER_TENSOR && x.quant.count == 1 && x.quant.scales &&
               x.quant.scales[0] == 0.05f && !x.quant.zero_points && !x.quant.shifts && x.quant.axis == -1,
           "x quant: type %d count %u axis %d", x.quant.type, x.quant.count, x.quant.axis);
    EXPECT(y.dtype == ACCEL_DTYPE_INT8 && y.byte_size == 384, "y: dtype %d byte_size %llu", y.dtype,
           (unsigned long long)y.byte_size);
    expect_dims(y.shape, shape, 4, "y.shape");
    expect_dims(y.strides, y_strides, 4, "y.strides");
    EXPECT(y.quant.type == ACCEL_QUANT_PER_AXIS && y.quant.axis == 1 && y.quant.count == 3 && y.quant.zero_points &&
               y.quant.scales[1] == 0.2f && y.quant.zero_points[1] == 3 && y.quant.zero_points[2] == -2,
           "y quant: type %d axis %d count %u", y.quant.type, y.quant.axis, y.quant.count);
    accel_tensor_info none;
    none.struct_size = sizeof none;
    EXPECT_STATUS(accel_model_input_info(m, 1, &none), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_output_info(m, 7, &none), ACCEL_ERR_INVALID_ARGUMENT);
    accel_model_release(m);

    /* nhwc: float32 NHWC padded in C; output U8 per tensor. */
    m = load(d, "nhwc");
    x = info_of(m, 1, 0);
    y = info_of(m, 0, 0);
    const int64_t hx[4] = {1024, 128, 16, 4}, hy[4] = {192, 24, 3, 1};
    if (!g->has_layout) left_out("the NCHW and NHWC layout checks", "S100 tensor properties have no layout (NONE)");
    EXPECT(x.layout == (g->has_layout ? ACCEL_LAYOUT_NHWC : ACCEL_LAYOUT_NONE) && x.dtype == ACCEL_DTYPE_FLOAT32 &&
               x.byte_size == 1024 && x.quant.type == ACCEL_QUANT_NONE && !x.quant.scales,
           "nhwc x: layout %d dtype %d byte_size %llu quant %d", x.layout, x.dtype, (unsigned long long)x.byte_size,
           x.quant.type);
    expect_dims(x.strides, hx, 4, "nhwc x.strides");
    EXPECT(y.dtype == ACCEL_DTYPE_UINT8 && y.byte_size == 192 && y.quant.type == ACCEL_QUANT_PER_TENSOR,
           "nhwc y: dtype %d byte_size %llu", y.dtype, (unsigned long long)y.byte_size);
    expect_dims(y.strides, hy, 4, "nhwc y.strides");
    accel_model_release(m);

    /* two inputs, two outputs, an S16 input, 2-D tensors without layout. */
    m = load(d, "two");
    EXPECT(count_of(m, 1) == 2 && count_of(m, 0) == 2, "two: counts");
    accel_tensor_info b = info_of(m, 1, 1), prod = info_of(m, 0, 1);
    EXPECT(strcmp(b.name, "b") == 0 && b.dtype == ACCEL_DTYPE_INT16 && b.layout == ACCEL_LAYOUT_NONE && b.ndim == 2 &&
               b.byte_size == 32 && b.strides[0] == 32 && b.strides[1] == 2,
           "two b: '%s' dtype %d layout %d", b.name, b.dtype, b.layout);
    EXPECT(strcmp(prod.name, "prod") == 0, "two output 1 '%s'", prod.name);
    accel_model_release(m);

    /* S100: a dynamic stride, which the driver makes dense (and sizes the buffer by); zero points
     * beyond int8 (130 for a U8 input, 1000 for an S16 output). */
    if (g->s100) {
        m = load(d, "dyn");
        x = info_of(m, 1, 0);
        y = info_of(m, 0, 0);
        const int64_t dyn_shape[3] = {1, 4, 6}, dyn_x[3] = {32, 8, 1}, dyn_y[3] = {48, 12, 2};
        EXPECT(x.dtype == ACCEL_DTYPE_UINT8 && x.ndim == 3 && x.byte_size == 32 &&
                   x.quant.type == ACCEL_QUANT_PER_TENSOR && x.quant.zero_points && x.quant.zero_points[0] == 130,
               "dyn x: dtype %d ndim %u byte_size %llu quant %d", x.dtype, x.ndim, (unsigned long long)x.byte_size,
               x.quant.type);
        expect_dims(x.shape, dyn_shape, 3, "dyn x.shape");
        expect_dims(x.strides, dyn_x, 3, "dyn x.strides");
        EXPECT(
            y.dtype == ACCEL_DTYPE_INT16 && y.byte_size == 48 && y.quant.zero_points && y.quant.zero_points[0] == 1000,
            "dyn y: dtype %d byte_size %llu", y.dtype, (unsigned long long)y.byte_size);
        expect_dims(y.strides, dyn_y, 3, "dyn y.strides");
        accel_model_release(m);
    } else {
        left_out("the dyn model (dynamic strides, int32 zero points)", "X3/X5 libdnn has neither");
    }

    /* A file of several models: the first, or one by name. */
    m = load(d, "multi");
    EXPECT(info_of(m, 1, 0).byte_size == 768, "multi loads its first model (dense)");
    accel_model_release(m);
    m = load_model(d, "multi", "#nhwc");
    EXPECT(info_of(m, 1, 0).byte_size == 1024, "multi#nhwc loads nhwc");
    accel_model_release(m);
    char* path = model_path("multi", "#nope");
    EXPECT_STATUS(accel_model_load_file(d, path, &m), ACCEL_ERR_NOT_FOUND);
    EXPECT(strstr(accel_last_error_message(), "'nhwc'") != NULL, "message '%s' lists the models",
           accel_last_error_message());
    free(path);
    accel_device_release(d);
}

/* ---- run: numbers, coherence without manual syncs, stats ---- */

static void run_model(accel_device* d, const char* name, const accel_run_options* o) {
    accel_model* m = load(d, name);
    io x = make_io(d, m, name);
    REQUIRE_OK(accel_run(m, x.in, x.n_in, x.out, x.n_out, o));
    for (size_t i = 0; i < x.n_out; i++) EXPECT(compare_output(m, name, i, host(x.out[i])), "%s output %zu", name, i);
    /* Once more with the copying calls. */
    for (size_t i = 0; i < x.n_out; i++) memset(host(x.out[i]), 0, info_of(m, 0, i).byte_size);
    REQUIRE_OK(accel_run(m, x.in, x.n_in, x.out, x.n_out, o));
    for (size_t i = 0; i < x.n_out; i++) {
        accel_tensor_info t = info_of(m, 0, i);
        void* copy = malloc(t.byte_size);
        EXPECT_OK(accel_buffer_read(x.out[i], 0, copy, t.byte_size));
        EXPECT(compare_output(m, name, i, copy), "%s output %zu read with accel_buffer_read", name, i);
        free(copy);
    }
    release_io(&x);
    accel_model_release(m);
}

static void test_run(void) {
    accel_device* d = test_open("bpu:0");
    accel_run_options o = options();
    const char* names[] = {"dense", "int8", "nhwc", "two"};
    for (size_t i = 0; i < 4; i++) run_model(d, names[i], &o);
    accel_memory_stats s = stats(d);
    EXPECT(s.live_buffers == 0 && s.bytes_in_use == 0 && s.jobs_submitted == 8 && s.jobs_completed == 8 &&
               s.allocations == 10 && s.peak_bytes_in_use >= 1024 && s.bytes_copied > 0,
           "stats: live %llu in use %llu submitted %llu completed %llu allocations %llu",
           (unsigned long long)s.live_buffers, (unsigned long long)s.bytes_in_use, (unsigned long long)s.jobs_submitted,
           (unsigned long long)s.jobs_completed, (unsigned long long)s.allocations);
    accel_device_release(d);

    /* Any core, priorities, core masks. */
    d = test_open("bpu:any");
    o.priority = 255;
    o.core_mask = 2;
    run_model(d, "int8", &o);
    o.priority = 7;
    o.core_mask = 1;
    run_model(d, "two", &o);
    if (g->s100) run_model(d, "dyn", &o);
    else left_out("running the dyn model", "X3/X5 libdnn has no dynamic strides or int32 zero points");

    /* From memory. */
    size_t size = 0;
    char* path = model_path("dense", "");
    void* bytes = test_read_file(path, &size);
    accel_model* m = NULL;
    REQUIRE_OK(accel_model_load_memory(d, bytes, size, &m));
    free(bytes);
    free(path);
    io x = make_io(d, m, "dense");
    REQUIRE_OK(accel_run(m, x.in, x.n_in, x.out, x.n_out, NULL));
    EXPECT(compare_output(m, "dense", 0, host(x.out[0])), "dense loaded from memory");

    /* Per-node profiling (ABI 1.1): libdnn/hbUCP time a whole model run, never its layers, so the
     * driver leaves node times out: a job asking for them runs as usual and its node times (and the
     * model's node list) are UNSUPPORTED. */
    accel_run_options profiled = options();
    profiled.flags = ACCEL_SUBMIT_PROFILE_NODES;
    accel_job* job = submit(m, &x, &profiled);
    REQUIRE_OK(accel_job_wait(job, -1));
    EXPECT(compare_output(m, "dense", 0, host(x.out[0])), "dense submitted with ACCEL_SUBMIT_PROFILE_NODES");
    size_t nodes = 0;
    EXPECT_STATUS(accel_job_get_node_times(job, NULL, 0, &nodes), ACCEL_ERR_UNSUPPORTED);
    EXPECT(strstr(accel_last_error_message(), "cannot time"), "message: %s", accel_last_error_message());
    accel_job_release(job);
    EXPECT_STATUS(accel_model_get_node_count(m, &nodes), ACCEL_ERR_UNSUPPORTED);
    accel_node_info node = {sizeof node, 0, NULL, NULL};
    EXPECT_STATUS(accel_model_get_node_info(m, 0, &node), ACCEL_ERR_UNSUPPORTED);

    /* The memory really is cached (the stand-in keeps a device copy): what the host writes after a
     * CLEAN is lost to an INVALIDATE, as on a board. The driver's own flushes hide this from users. */
    float* p = host(x.in[0]);
    p[0] = 1.0f;
    EXPECT_OK(accel_buffer_sync(x.in[0], ACCEL_SYNC_TO_DEVICE, 0, 0));
    p[0] = 2.0f;
    EXPECT_OK(accel_buffer_sync(x.in[0], ACCEL_SYNC_TO_HOST, 0, 4));
    EXPECT(p[0] == 1.0f, "after CLEAN, write, INVALIDATE the host sees %g (the device's 1)", p[0]);
    /* Write without any sync, run, read without any sync: the driver flushes. */
    p[0] = 3.0f;
    REQUIRE_OK(accel_run(m, x.in, x.n_in, x.out, x.n_out, NULL));
    EXPECT(((float*)host(x.out[0]))[0] == 7.0f, "y[0] = %g, want 2 * 3 + 1", ((float*)host(x.out[0]))[0]);
    /* Strided writes. */
    float src[2 * 3] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {3, 2}, strides[2] = {4, 12}; /* the transpose of a 2x3 array */
    EXPECT_OK(accel_buffer_write_strided(x.in[0], 0, src, 2, shape, strides, 4));
    EXPECT(p[0] == 1 && p[1] == 4 && p[2] == 2 && p[5] == 6, "strided write: %g %g %g %g", p[0], p[1], p[2], p[5]);
    release_io(&x);
    accel_model_release(m);
    accel_device_release(d);
}

/* ---- async: callbacks, fire and forget, timing ---- */

typedef struct cb_state {
    pthread_mutex_t mutex;
    int calls, ok, in_callback_ok;
    accel_model* model;
    accel_buffer* out;
} cb_state;

static int calls_of(cb_state* s) {
    pthread_mutex_lock(&s->mutex);
    int calls = s->calls;
    pthread_mutex_unlock(&s->mutex);
    return calls;
}

static void on_done(accel_job* job, accel_status status, void* user) {
    cb_state* s = user;
    int32_t done = 0;
    int good = accel_job_wait(job, 0) == status && accel_job_poll(job, &done) == ACCEL_OK && done == 1;
    /* Outputs are already invalidated when the callback runs. */
    if (status == ACCEL_OK && s->out) good = good && compare_output(s->model, "dense", 0, host(s->out));
    pthread_mutex_lock(&s->mutex);
    s->calls++;
    s->ok += status == ACCEL_OK;
    s->in_callback_ok += good;
    pthread_mutex_unlock(&s->mutex);
}

static void test_async(void) {
    enum { N = 20 };
    accel_device* d = test_open("bpu:any");
    accel_model* m = load(d, "dense");
    io x[N];
    cb_state s[N];
    accel_job* jobs[N];
    for (int i = 0; i < N; i++) {
        x[i] = make_io(d, m, "dense");
        memset(&s[i], 0, sizeof s[i]);
        pthread_mutex_init(&s[i].mutex, NULL);
        s[i].model = m;
        s[i].out = x[i].out[0];
        accel_run_options o = options();
        o.callback = on_done;
        o.user_data = &s[i];
        o.priority = i * 10;
        jobs[i] = submit(m, &x[i], &o);
    }
    for (int i = 0; i < N; i++) {
        EXPECT_OK(accel_job_wait(jobs[i], -1));
        EXPECT(s[i].calls == 1 && s[i].ok == 1 && s[i].in_callback_ok == 1, "job %d: %d calls, %d ok, %d good", i,
               s[i].calls, s[i].ok, s[i].in_callback_ok);
        EXPECT(compare_output(m, "dense", 0, host(x[i].out[0])), "job %d output", i);
        accel_job_timing t = test_timing(jobs[i]);
        EXPECT(t.queued_ns > 0 && t.queued_ns <= t.started_ns && t.started_ns <= t.finished_ns && t.core >= 0 &&
                   t.core < (int32_t)g->cores,
               "job %d timing %llu %llu %llu core %d", i, (unsigned long long)t.queued_ns,
               (unsigned long long)t.started_ns, (unsigned long long)t.finished_ns, t.core);
        accel_job_release(jobs[i]);
    }
    /* Fire and forget: no handle, a callback. */
    cb_state f;
    memset(&f, 0, sizeof f);
    pthread_mutex_init(&f.mutex, NULL);
    accel_run_options o = options();
    o.callback = on_done;
    o.user_data = &f;
    REQUIRE_OK(accel_job_submit(m, x[0].in, 1, x[0].out, 1, &o, NULL));
    for (int i = 0; i < 3000 && !calls_of(&f); i++) test_sleep_ms(1);
    EXPECT(f.calls == 1 && f.ok == 1, "fire and forget: %d calls %d ok", f.calls, f.ok);
    /* Neither a handle nor a callback: nobody could see the result. */
    o.callback = NULL;
    EXPECT_STATUS(accel_job_submit(m, x[0].in, 1, x[0].out, 1, &o, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    for (int i = 0; i < N; i++) {
        release_io(&x[i]);
        pthread_mutex_destroy(&s[i].mutex);
    }
    pthread_mutex_destroy(&f.mutex);
    /* The model and device go while nothing runs; the fire-and-forget job may still be dropping them. */
    accel_model_release(m);
    accel_device_release(d);
}

/* ---- cancel and timeout (tasks held by the stand-in) ---- */

/* dense on bpu:0, its buffers, and options with a counting callback. */
typedef struct dense_setup {
    accel_device* d;
    accel_model* m;
    io x;
    cb_state s;
    accel_run_options o;
} dense_setup;

static void dense_open(dense_setup* t) {
    t->d = test_open("bpu:0");
    t->m = load(t->d, "dense");
    t->x = make_io(t->d, t->m, "dense");
    memset(&t->s, 0, sizeof t->s);
    pthread_mutex_init(&t->s.mutex, NULL);
    t->o = options();
    t->o.callback = on_done;
    t->o.user_data = &t->s;
}

static void dense_close(dense_setup* t) {
    release_io(&t->x);
    pthread_mutex_destroy(&t->s.mutex);
    accel_model_release(t->m);
    accel_device_release(t->d);
}

static void test_cancel(void) {
    dense_setup t;
    dense_open(&t);
    accel_device* d = t.d;
    accel_model* m = t.m;
    io x = t.x;
    cb_state* s = &t.s;
    accel_run_options o = t.o;

    STANDIN_HOLD(1);
    accel_job* job = submit(m, &x, &o);
    int32_t done = 1;
    EXPECT_OK(accel_job_poll(job, &done));
    EXPECT(done == 0, "a held job is not done");
    EXPECT_STATUS(accel_job_wait(job, 1000), ACCEL_ERR_NOT_READY);
    accel_job_retain(job);
    accel_job_release(job); /* not the last reference: nothing happens */
    EXPECT_OK(accel_job_poll(job, &done));
    EXPECT(done == 0, "releasing one of two references does not cancel");
    accel_job_release(job); /* the last: cancelled while held */
    for (int i = 0; i < 3000 && !calls_of(s); i++) test_sleep_ms(1);
    pthread_mutex_lock(&s->mutex);
    EXPECT(s->calls == 1 && s->ok == 0, "cancelled job: %d calls, %d ok", s->calls, s->ok);
    pthread_mutex_unlock(&s->mutex);
    STANDIN_HOLD(0);

    /* A job that finished before its release stays finished. */
    memset(host(x.out[0]), 0, 768);
    job = submit(m, &x, &o);
    EXPECT_OK(accel_job_wait(job, -1));
    accel_job_release(job);
    EXPECT(s->calls == 2 && s->ok == 1, "finished job: %d calls, %d ok", s->calls, s->ok);
    EXPECT(compare_output(m, "dense", 0, host(x.out[0])), "output after a cancelled job");

    accel_memory_stats st = stats(d);
    EXPECT(st.jobs_submitted == 2 && st.jobs_completed == 2, "stats: %llu submitted %llu completed",
           (unsigned long long)st.jobs_submitted, (unsigned long long)st.jobs_completed);
    dense_close(&t);
}

static void test_timeout(void) {
    dense_setup t;
    dense_open(&t);
    accel_model* m = t.m;
    io x = t.x;
    accel_run_options o = t.o;
    o.timeout_us = 20000;

    STANDIN_HOLD(1);
    uint64_t t0 = test_now_ns();
    accel_job* job = submit(m, &x, &o);
    EXPECT_STATUS(accel_job_wait(job, -1), ACCEL_ERR_TIMEOUT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_TIMEOUT);
    uint64_t waited_ms = (test_now_ns() - t0) / 1000000;
    EXPECT(waited_ms >= 19 && waited_ms < 5000, "timed out after %llu ms", (unsigned long long)waited_ms);
    EXPECT(t.s.calls == 1 && t.s.ok == 0, "timed out job: %d calls", t.s.calls);
    accel_job_timing tm = test_timing(job);
    EXPECT(tm.core == -1 && tm.started_ns == 0 && tm.finished_ns >= tm.queued_ns, "a job that never ran: core %d",
           tm.core);
    accel_job_release(job);
    /* Through accel_run too. */
    EXPECT_STATUS(accel_run(m, x.in, 1, x.out, 1, &o), ACCEL_ERR_TIMEOUT);
    STANDIN_HOLD(0);

    /* A job that ends in time is not affected by its timeout; the device works on. */
    o.timeout_us = 10 * 1000 * 1000;
    memset(host(x.out[0]), 0, 768);
    job = submit(m, &x, &o);
    EXPECT_OK(accel_job_wait(job, -1));
    EXPECT(compare_output(m, "dense", 0, host(x.out[0])), "output after timeouts");
    accel_job_release(job);
    dense_close(&t);
}

/* ---- late completion: a task released before it ended still runs, in the background ----
 * Run with ACCEL_STANDIN_LATE_COMPLETION=<ms> (CMake sets it): the stand-in's task release then returns at
 * once and, that long later, the task runs to its end, writing its outputs and calling its done callback,
 * as the X5 libdnn's hbDNNReleaseTask allows ("all operations will run in the background"). A driver
 * that released a timed-out task and freed its buffers and its callback's data at once would have the
 * stand-in abort (outputs freed) or ASan report a use after free (the callback). */

static void test_late(void) {
    const char* env = getenv("ACCEL_STANDIN_LATE_COMPLETION");
    int late_ms = env ? atoi(env) : 0;
    REQUIRE(late_ms > 0, "run with ACCEL_STANDIN_LATE_COMPLETION=<ms>");
    for (int round = 0; round < 2; round++) {
        dense_setup t;
        dense_open(&t);
        accel_run_options o = t.o;
        o.timeout_us = 20000;
        STANDIN_HOLD(1);
        accel_job* job = submit(t.m, &t.x, &o);
        EXPECT_STATUS(accel_job_wait(job, -1), ACCEL_ERR_TIMEOUT);
        EXPECT_ERROR_REPORTED(ACCEL_ERR_TIMEOUT);
        EXPECT(t.s.calls == 1 && t.s.ok == 0, "timed out job: %d calls", t.s.calls);
        accel_job_release(job);
        /* Everything the caller holds goes while the task may still run: buffers and model, and in the
         * second round the device too. */
        release_io(&t.x);
        accel_model_release(t.m);
        accel_device* d = t.d;
        if (round == 1) accel_device_release(d);
        test_sleep_ms(3 * late_ms); /* any late completion of a released task has come by now */
        STANDIN_HOLD(0);            /* the held task runs (if the driver still holds it) */
        if (round == 0) {
            /* The task ends and the driver frees what the job kept: nothing stays in use. */
            accel_memory_stats st = stats(d);
            for (int i = 0; i < 5000 && (st.live_buffers || st.bytes_in_use); i++) {
                test_sleep_ms(1);
                st = stats(d);
            }
            EXPECT(st.live_buffers == 0 && st.bytes_in_use == 0, "after the task's end: %llu buffers, %llu bytes",
                   (unsigned long long)st.live_buffers, (unsigned long long)st.bytes_in_use);
            accel_device_release(d);
        }
        test_sleep_ms(3 * late_ms);
        EXPECT(t.s.calls == 1, "the job's callback ran %d times", t.s.calls);
        pthread_mutex_destroy(&t.s.mutex);
    }
}

/* ---- limits: the device's 32 slots and the runtime's process-wide 32 tasks ---- */

typedef struct blocked {
    accel_model* model;
    io* x;
    accel_status status;
    volatile int returned;
    pthread_mutex_t mutex;
} blocked;

static void* submit_blocking(void* arg) {
    blocked* b = arg;
    accel_run_options o = options();
    accel_status s = accel_run(b->model, b->x->in, b->x->n_in, b->x->out, b->x->n_out, &o);
    pthread_mutex_lock(&b->mutex);
    b->status = s;
    b->returned = 1;
    pthread_mutex_unlock(&b->mutex);
    return NULL;
}

static int has_returned(blocked* b) {
    pthread_mutex_lock(&b->mutex);
    int r = b->returned;
    pthread_mutex_unlock(&b->mutex);
    return r;
}

typedef struct nested {
    accel_model* model;
    io* x;
    accel_status inner;
    int calls;
} nested;

static void submit_from_callback(accel_job* job, accel_status status, void* user) {
    (void)job;
    (void)status;
    nested* n = user;
    accel_job* inner = NULL;
    accel_run_options o = options();
    n->inner = accel_job_submit(n->model, n->x->in, 1, n->x->out, 1, &o, &inner);
    accel_job_release(inner);
    n->calls++;
}

static void test_limits(void) {
    enum { LIMIT = 32 };
    accel_device* d0 = test_open("bpu:0");
    accel_device* d1 = test_open("bpu:1");
    accel_model* m0 = load(d0, "dense");
    accel_model* m1 = load(d1, "dense");
    io x0 = make_io(d0, m0, "dense"), x1 = make_io(d1, m1, "dense");
    /* Each job its own output: the same input is fine. */
    accel_buffer* outs[LIMIT];
    accel_job* jobs[LIMIT];
    nested n = {m0, &x0, ACCEL_OK, 0};

    STANDIN_HOLD(1);
    for (int i = 0; i < LIMIT; i++) {
        outs[i] = test_alloc(d0, 768);
        accel_run_options o = options();
        o.flags = ACCEL_SUBMIT_NO_WAIT;
        if (i == 0) o.callback = submit_from_callback, o.user_data = &n;
        REQUIRE_OK(accel_job_submit(m0, x0.in, 1, &outs[i], 1, &o, &jobs[i]));
    }
    accel_run_options o = options();
    o.flags = ACCEL_SUBMIT_NO_WAIT;
    accel_job* extra = NULL;
    /* The device's own limit. */
    EXPECT_STATUS(accel_job_submit(m0, x0.in, 1, x0.out, 1, &o, &extra), ACCEL_ERR_BUSY);
    EXPECT(strstr(accel_last_error_message(), "max_inflight") != NULL, "message '%s'", accel_last_error_message());
    /* The runtime's, reached through another device. */
    EXPECT_STATUS(accel_job_submit(m1, x1.in, 1, x1.out, 1, &o, &extra), ACCEL_ERR_BUSY);
    EXPECT(strstr(accel_last_error_message(), g->task_limit) != NULL, "message '%s'", accel_last_error_message());
    EXPECT_ERROR_REPORTED(ACCEL_ERR_BUSY);

    /* Without the flag, both wait for a slot. */
    blocked b0 = {m0, &x0, ACCEL_ERR_INTERNAL, 0, PTHREAD_MUTEX_INITIALIZER};
    blocked b1 = {m1, &x1, ACCEL_ERR_INTERNAL, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t t0, t1;
    REQUIRE(pthread_create(&t0, NULL, submit_blocking, &b0) == 0, "pthread_create");
    REQUIRE(pthread_create(&t1, NULL, submit_blocking, &b1) == 0, "pthread_create");
    test_sleep_ms(100);
    EXPECT(!has_returned(&b0) && !has_returned(&b1), "submits at the limit did not block");
    STANDIN_HOLD(0);
    pthread_join(t0, NULL);
    pthread_join(t1, NULL);
    EXPECT(b0.status == ACCEL_OK && b1.status == ACCEL_OK, "blocked runs: %s %s", accel_status_name(b0.status),
           accel_status_name(b1.status));
    EXPECT(compare_output(m1, "dense", 0, host(x1.out[0])), "the run that waited for the runtime");
    for (int i = 0; i < LIMIT; i++) {
        EXPECT_OK(accel_job_wait(jobs[i], -1));
        accel_job_release(jobs[i]);
        accel_buffer_release(outs[i]);
    }
    /* The first callback ran while all 32 slots were still held (callbacks run in order, slots free
     * after them): it could not wait, so it was told BUSY. */
    EXPECT(n.calls == 1 && n.inner == ACCEL_ERR_BUSY, "submit inside a callback at the limit: %s",
           accel_status_name(n.inner));
    release_io(&x0);
    release_io(&x1);
    accel_model_release(m0);
    accel_model_release(m1);
    accel_device_release(d0);
    accel_device_release(d1);
}

/* ---- errors ---- */

static void expect_load_error(accel_device* d, const char* file, accel_status want, const char* text) {
    char* path = model_path(file, "");
    accel_model* m = NULL;
    EXPECT_STATUS(accel_model_load_file(d, path, &m), want);
    EXPECT_ERROR_REPORTED(want);
    EXPECT(strstr(accel_last_error_message(), text) != NULL, "%s: message '%s' lacks '%s'", file,
           accel_last_error_message(), text);
    EXPECT(m == NULL, "%s: out-parameter written on failure", file);
    free(path);
}

static void test_errors(void) {
    accel_device* d = test_open("bpu:any");
    expect_load_error(d, "missing", ACCEL_ERR_NOT_FOUND, g->missing_file);
    expect_load_error(d, "bad", ACCEL_ERR_MODEL_FORMAT, g->invalid_model);
    expect_load_error(d, "short", ACCEL_ERR_MODEL_FORMAT, g->invalid_model);
    accel_model* m = NULL;
    EXPECT_STATUS(accel_model_load_memory(d, "ACCELHM1", 8, &m), ACCEL_ERR_MODEL_FORMAT);
    EXPECT(strstr(accel_last_error_message(), "hbDNNInitializeFromDDR") != NULL, "'%s'", accel_last_error_message());

    /* Checked by the conformance suite on both generations instead (tests/c/conformance.c): accel_buffer_import's
     * refusal (import, declared unsupported), wrong counts, a priority past 255, a core_mask past the cores, an
     * unknown flag, another device's buffer (submission_errors) and buffer ranges (buffer_ranges). */
    m = load(d, "two");
    io x = make_io(d, m, "two");
    accel_run_options o = options();
    accel_job* job = NULL;
    /* A buffer smaller than the tensor's aligned size (int8's output: 1x3x8x16 bytes). */
    accel_buffer* small = test_alloc(d, 16);
    accel_model* padded = load(d, "int8");
    io y = make_io(d, padded, "int8");
    EXPECT_STATUS(accel_job_submit(padded, y.in, 1, &small, 1, &o, &job), ACCEL_ERR_SHAPE);
    EXPECT(strstr(accel_last_error_message(), "('y') needs 384 bytes") != NULL, "'%s'", accel_last_error_message());
    release_io(&y);
    accel_model_release(padded);
    /* Aliasing. */
    accel_buffer* out_same[2] = {x.out[0], x.out[0]};
    EXPECT_STATUS(accel_job_submit(m, x.in, 2, out_same, 2, &o, &job), ACCEL_ERR_INVALID_ARGUMENT);
    accel_buffer* out_in[2] = {x.in[0], x.out[1]};
    EXPECT_STATUS(accel_job_submit(m, x.in, 2, out_in, 2, &o, &job), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(job == NULL, "out_job written on failure");
    uint64_t size = 0;
    EXPECT_OK(accel_buffer_size(small, &size));
    EXPECT(size == 64, "a 16-byte buffer's usable size is %llu (rounded to the alignment)", (unsigned long long)size);
    void* p = host(small);
    EXPECT(((uintptr_t)p % 64) == 0, "host pointer %p is not 64-byte aligned", p);
    accel_buffer_release(small);

    /* The device works after all that. */
    REQUIRE_OK(accel_run(m, x.in, 2, x.out, 2, NULL));
    EXPECT(compare_output(m, "two", 0, host(x.out[0])) && compare_output(m, "two", 1, host(x.out[1])), "two");
    accel_memory_stats s = stats(d);
    EXPECT(s.jobs_submitted == 1 && s.jobs_completed == 1, "failed submits are not counted: %llu",
           (unsigned long long)s.jobs_submitted);
    release_io(&x);
    accel_model_release(m);
    accel_device_release(d);
}

int main(int argc, char** argv) {
    if (argc != 4 || (strcmp(argv[2], "dnn") && strcmp(argv[2], "ucp"))) {
        fprintf(stderr, "usage: %s <models dir> dnn|ucp info|run|async|cancel|timeout|limits|errors|late\n", argv[0]);
        return 2;
    }
    g_dir = argv[1];
    g = &kGenerations[strcmp(argv[2], "dnn") ? 1 : 0];
    test_name = argv[3];
    /* The stand-in runs on an emulator device that it opens with the first model and closes with the
     * last; a process that opens and closes it again and again has threads of closed devices exiting
     * while new ones start, where TSan reports glibc freeing a dead thread's dynamic TLS as a race.
     * Real programs keep their runtime up: so does this one, with one model loaded throughout. */
    accel_device* keeper_device = test_open("bpu:any");
    accel_model* keeper = load(keeper_device, "dense");
    if (!strcmp(test_name, "info")) test_info();
    else if (!strcmp(test_name, "run")) test_run();
    else if (!strcmp(test_name, "async")) test_async();
    else if (!strcmp(test_name, "cancel")) test_cancel();
    else if (!strcmp(test_name, "timeout")) test_timeout();
    else if (!strcmp(test_name, "limits")) test_limits();
    else if (!strcmp(test_name, "late")) test_late();
    else if (!strcmp(test_name, "errors")) test_errors();
    else REQUIRE(0, "unknown test '%s'", test_name);
    accel_model_release(keeper);
    accel_device_release(keeper_device);
    return test_finish();
}
