/* conformance: the checks every driver passes, written once and run on each driver (the shape of IREE's HAL
 * conformance suite: one suite, instantiated per driver with the checks that driver declares it does not
 * support, and why).
 *
 *   test_conformance CHECK URI DIR MODEL INPUTS OUTPUTS [UNSUPPORTED]
 *
 * CHECK is one of kChecks below; URI opens a device of the driver under test; DIR/MODEL is a model file that
 * driver loads, of float32 tensors; INPUTS and OUTPUTS name files in DIR (comma-separated) holding each input's
 * bytes and each output's expected bytes as the device's buffers hold them. UNSUPPORTED, when given, is the
 * driver's reason for not supporting CHECK: the check then asserts the ABI's documented refusal instead (accel.h
 * says what a driver that cannot do it answers), so that a declared exception is checked too; a check whose
 * refusal accel.h does not define cannot be declared unsupported.
 *
 * conformance_suite() (tests/CMakeLists.txt) makes one ctest per driver and check, conformance_<driver>_<check>;
 * each driver's instantiation, with its list of what it does not support and why, is beside its other tests
 * (tests/CMakeLists.txt for emu, tests/drivers/bpu and tests/drivers/vart for the vendor drivers). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

typedef struct suite {
    const char* uri;
    char scheme[32];
    test_manifest manifest; /* one case: the model and its files */
    const test_case* c;
    const char* unsupported; /* the driver's reason, or NULL */
} suite;

/* ---- the model's case, from the files named on the command line ---- */

static size_t split_files(const char* list, const char* dir, test_tensor* out, const char* what) {
    size_t n = 0;
    const char* p = list;
    while (*p) {
        const char* end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        REQUIRE(n < TEST_MAX_IO, "more than %d %s", TEST_MAX_IO, what);
        REQUIRE(len > 0 && len < sizeof out[n].file, "bad %s list '%s'", what, list);
        test_tensor* t = &out[n++];
        memset(t, 0, sizeof *t);
        memcpy(t->file, p, len);
        memcpy(t->name, p, len < sizeof t->name ? len : sizeof t->name - 1);
        t->dtype = ACCEL_DTYPE_FLOAT32;
        char* path = test_path(dir, t->file);
        size_t size = 0;
        t->data = test_read_file(path, &size);
        t->byte_size = size;
        free(path);
        p = end ? end + 1 : p + len;
    }
    return n;
}

static void suite_init(suite* s, char** argv, int argc) {
    memset(s, 0, sizeof *s);
    s->uri = argv[2];
    size_t scheme_len = strcspn(s->uri, ":");
    REQUIRE(scheme_len > 0 && scheme_len < sizeof s->scheme, "URI '%s' has no scheme", s->uri);
    memcpy(s->scheme, s->uri, scheme_len);
    test_manifest* m = &s->manifest;
    snprintf(m->dir, sizeof m->dir, "%s", argv[3]);
    m->count = 1;
    m->cases = calloc(1, sizeof(test_case));
    REQUIRE(m->cases, "out of memory");
    test_case* c = &m->cases[0];
    snprintf(c->name, sizeof c->name, "%s", argv[4]);
    snprintf(c->tag, sizeof c->tag, "conformance");
    snprintf(c->model_file, sizeof c->model_file, "%s", argv[4]);
    c->inputs = calloc(TEST_MAX_IO, sizeof(test_tensor));
    c->outputs = calloc(TEST_MAX_IO, sizeof(test_tensor));
    REQUIRE(c->inputs && c->outputs, "out of memory");
    c->n_inputs = split_files(argv[5], m->dir, c->inputs, "inputs");
    c->n_outputs = split_files(argv[6], m->dir, c->outputs, "outputs");
    s->c = c;
    s->unsupported = argc > 7 ? argv[7] : NULL;
}

static void expect_outputs(const suite* s, test_setup* t, const char* what) {
    for (size_t i = 0; i < s->c->n_outputs; i++) {
        char label[96];
        snprintf(label, sizeof label, "%s, output %zu", what, i);
        EXPECT(test_compare_output(s->c, i, t->out[i], label), "%s differs from the expected output", label);
    }
}

static void refill_outputs(const suite* s, test_setup* t) {
    for (size_t i = 0; i < s->c->n_outputs; i++) {
        void* p = NULL;
        REQUIRE_OK(accel_buffer_host_ptr(t->out[i], &p));
        memset(p, 0xFF, (size_t)s->c->outputs[i].byte_size);
    }
}

/* ---- device_info: what accel_device_get_info gives, and how it honours a caller's struct_size ---- */

static void check_device_info(const suite* s, test_setup* t) {
    accel_device* d = t->device;
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    EXPECT(info.backend && strcmp(info.backend, s->scheme) == 0, "backend is '%s', the URI's scheme '%s'",
           info.backend ? info.backend : "(null)", s->scheme);
    EXPECT(info.name && info.name[0], "device name is empty");
    EXPECT(info.cores >= 1, "cores %u", info.cores);
    EXPECT(info.max_inflight >= 1, "max_inflight %u", info.max_inflight);
    EXPECT(info.alignment >= 1 && (info.alignment & (info.alignment - 1)) == 0, "alignment %llu is not a power of two",
           (unsigned long long)info.alignment);
    /* A struct from an older, smaller header: only struct_size bytes are written. */
    unsigned char raw[sizeof(accel_device_info) + 16];
    memset(raw, 0xA5, sizeof raw);
    uint32_t small = (uint32_t)(offsetof(accel_device_info, max_inflight));
    memcpy(raw, &small, sizeof small);
    REQUIRE_OK(accel_device_get_info(d, (accel_device_info*)(void*)raw));
    for (size_t i = small; i < sizeof raw; i++) {
        if (raw[i] != 0xA5) {
            EXPECT(0, "accel_device_get_info wrote byte %zu past struct_size %u", i, small);
            break;
        }
    }
    /* A caller built against ABI 1.0 (no threads field) gets every 1.0 field and nothing past them. */
    memset(raw, 0xA5, sizeof raw);
    uint32_t v10 = (uint32_t)offsetof(accel_device_info, threads);
    memcpy(raw, &v10, sizeof v10);
    REQUIRE_OK(accel_device_get_info(d, (accel_device_info*)(void*)raw));
    accel_device_info head;
    memcpy(&head, raw, v10);
    EXPECT(head.cores == info.cores && head.max_inflight == info.max_inflight && head.pool_bytes == info.pool_bytes &&
               head.backend && strcmp(head.backend, s->scheme) == 0,
           "a 1.0-sized struct: cores %u, max_inflight %u (a full one: %u, %u)", head.cores, head.max_inflight,
           info.cores, info.max_inflight);
    for (size_t i = v10; i < sizeof raw; i++) {
        if (raw[i] != 0xA5) {
            EXPECT(0, "accel_device_get_info wrote byte %zu past a 1.0 struct_size %u", i, v10);
            break;
        }
    }
}

/* ---- tensors: the model's inputs and outputs, as the files hold them ---- */

static void expect_tensor(const accel_tensor_info* t, const test_tensor* file, const char* what, size_t i) {
    EXPECT(t->name && t->name[0], "%s %zu has no name", what, i);
    EXPECT(t->dtype == ACCEL_DTYPE_FLOAT32, "%s %zu is %s, the suite's model is float32", what, i,
           accel_dtype_name(t->dtype));
    EXPECT(t->byte_size == file->byte_size, "%s %zu: byte_size %llu, its file '%s' holds %llu", what, i,
           (unsigned long long)t->byte_size, file->file, (unsigned long long)file->byte_size);
    uint64_t elements = 1;
    for (uint32_t k = 0; k < t->ndim; k++) elements *= (uint64_t)t->shape[k];
    EXPECT(t->ndim >= 1 && t->byte_size >= elements * 4, "%s %zu: byte_size %llu for %llu float32 elements", what, i,
           (unsigned long long)t->byte_size, (unsigned long long)elements);
}

static void check_tensors(const suite* s, test_setup* t) {
    size_t n_in = 0, n_out = 0;
    REQUIRE_OK(accel_model_input_count(t->model, &n_in));
    REQUIRE_OK(accel_model_output_count(t->model, &n_out));
    EXPECT(n_in == s->c->n_inputs && n_out == s->c->n_outputs,
           "the model has %zu inputs and %zu outputs, the "
           "files %zu and %zu",
           n_in, n_out, s->c->n_inputs, s->c->n_outputs);
    for (int output = 0; output < 2; output++) {
        const size_t n = output ? n_out : n_in;
        const size_t files = output ? s->c->n_outputs : s->c->n_inputs;
        for (size_t i = 0; i < n && i < files; i++) {
            accel_tensor_info info;
            memset(&info, 0, sizeof info);
            info.struct_size = sizeof info;
            REQUIRE_OK(output ? accel_model_output_info(t->model, i, &info)
                              : accel_model_input_info(t->model, i, &info));
            expect_tensor(&info, output ? &s->c->outputs[i] : &s->c->inputs[i], output ? "output" : "input", i);
        }
    }
}

/* ---- run: accel_run gives the expected outputs, the same twice ---- */

static void check_run(const suite* s, test_setup* t) {
    const test_case* c = s->c;
    for (int round = 0; round < 2; round++) {
        refill_outputs(s, t);
        REQUIRE_OK(accel_run(t->model, t->in, c->n_inputs, t->out, c->n_outputs, NULL));
        expect_outputs(s, t, round ? "the second run" : "the first run");
    }
}

/* ---- async: a submitted job's callback, once, then its wait, timing and outputs ---- */

static void check_async(const suite* s, test_setup* t) {
    test_record r;
    test_record_init(&r);
    accel_run_options o = test_callback_options(test_record_callback, &r);
    accel_job* job = NULL;
    REQUIRE_OK(accel_job_submit(t->model, t->in, s->c->n_inputs, t->out, s->c->n_outputs, &o, &job));
    EXPECT_OK(accel_job_wait(job, -1));
    test_record_wait(&r);
    test_sleep_ms(50); /* a second call would show now */
    pthread_mutex_lock(&r.mu);
    EXPECT(r.calls == 1, "the callback ran %d times", r.calls);
    EXPECT(r.job == job && r.status == ACCEL_OK && r.user_data == &r,
           "the callback got job %p (submit gave %p), "
           "status %s",
           (void*)r.job, (void*)job, accel_status_name(r.status));
    pthread_mutex_unlock(&r.mu);
    int32_t done = 0;
    EXPECT_OK(accel_job_poll(job, &done));
    EXPECT(done == 1, "a job that has been waited for polls as not done");
    accel_job_timing tm = test_timing(job);
    EXPECT(tm.core >= 0 && tm.queued_ns != 0 && tm.started_ns >= tm.queued_ns && tm.finished_ns >= tm.started_ns,
           "timing: core %d, queued %llu, started %llu, finished %llu", tm.core, (unsigned long long)tm.queued_ns,
           (unsigned long long)tm.started_ns, (unsigned long long)tm.finished_ns);
    expect_outputs(s, t, "an asynchronous job");
    accel_job_release(job);
    test_record_destroy(&r);
}

/* ---- buffer_too_small: a buffer smaller than its tensor is ACCEL_ERR_SHAPE, input or output ---- */

/* A buffer of fewer than `need` usable bytes: allocated (its size rounded up to the device's alignment) where
 * one alignment unit is less than `need`, else imported (exact); *host is the imported memory, or NULL. */
static accel_buffer* short_buffer(accel_device* d, uint64_t need, void** host) {
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    accel_buffer* b = NULL;
    *host = NULL;
    if (need > info.alignment) {
        b = test_alloc(d, ((need - 1) / info.alignment) * info.alignment);
    } else {
        REQUIRE(need > 4 && posix_memalign(host, 4096, (size_t)need) == 0, "posix_memalign");
        REQUIRE_OK(accel_buffer_import(d, *host, need - 4, &b));
    }
    uint64_t have = 0;
    REQUIRE_OK(accel_buffer_size(b, &have));
    REQUIRE(have < need, "a buffer meant to be short of %llu bytes has %llu", (unsigned long long)need,
            (unsigned long long)have);
    return b;
}

static void check_buffer_too_small(const suite* s, test_setup* t) {
    const test_case* c = s->c;
    for (int output = 0; output < 2; output++) {
        const test_tensor* tensor = output ? &c->outputs[0] : &c->inputs[0];
        void* host = NULL;
        accel_buffer* small = short_buffer(t->device, tensor->byte_size, &host);
        accel_buffer* saved = output ? t->out[0] : t->in[0];
        if (output) t->out[0] = small;
        else t->in[0] = small;
        accel_job* job = (accel_job*)0x1;
        accel_status got = accel_job_submit(t->model, t->in, c->n_inputs, t->out, c->n_outputs, NULL, &job);
        EXPECT(got == ACCEL_ERR_SHAPE, "a short %s buffer gave %s, expected ACCEL_ERR_SHAPE",
               output ? "output" : "input", accel_status_name(got));
        if (got != ACCEL_OK) {
            EXPECT_ERROR_REPORTED(got);
            EXPECT(job == (accel_job*)0x1, "out_job changed on failure");
        } else {
            accel_job_wait(job, -1);
            accel_job_release(job);
        }
        if (output) t->out[0] = saved;
        else t->in[0] = saved;
        accel_buffer_release(small);
        free(host);
    }
}

/* ---- import: the caller's memory as buffers, the output written into it in place ---- */

static void check_import(const suite* s, test_setup* t) {
    const test_case* c = s->c;
    void* in_host = NULL;
    void* out_host = NULL;
    REQUIRE(posix_memalign(&in_host, 4096, (size_t)c->inputs[0].byte_size) == 0 &&
                posix_memalign(&out_host, 4096, (size_t)c->outputs[0].byte_size) == 0,
            "posix_memalign");
    memcpy(in_host, c->inputs[0].data, (size_t)c->inputs[0].byte_size);
    memset(out_host, 0xFF, (size_t)c->outputs[0].byte_size);
    accel_buffer* in = NULL;
    accel_buffer* out = NULL;
    REQUIRE_OK(accel_buffer_import(t->device, in_host, c->inputs[0].byte_size, &in));
    REQUIRE_OK(accel_buffer_import(t->device, out_host, c->outputs[0].byte_size, &out));
    accel_buffer* saved_in = t->in[0];
    accel_buffer* saved_out = t->out[0];
    t->in[0] = in;
    t->out[0] = out;
    REQUIRE_OK(accel_run(t->model, t->in, c->n_inputs, t->out, c->n_outputs, NULL));
    EXPECT(test_compare_floats((const float*)out_host, (const float*)c->outputs[0].data,
                               (size_t)(c->outputs[0].byte_size / 4), "output 0 in the imported memory"),
           "the output in the caller's memory differs from the expected output");
    t->in[0] = saved_in;
    t->out[0] = saved_out;
    accel_buffer_release(in);
    accel_buffer_release(out);
    free(in_host);
    free(out_host);
}

/* accel.h: ACCEL_ERR_UNSUPPORTED where the backend cannot import; its own buffers still work. */
static void refuse_import(const suite* s, test_setup* t) {
    void* host = NULL;
    REQUIRE(posix_memalign(&host, 4096, 4096) == 0, "posix_memalign");
    accel_buffer* b = (accel_buffer*)0x1;
    accel_status got = accel_buffer_import(t->device, host, 4096, &b);
    EXPECT(got == ACCEL_ERR_UNSUPPORTED, "accel_buffer_import gave %s", accel_status_name(got));
    if (got != ACCEL_OK) {
        EXPECT_ERROR_REPORTED(got);
        EXPECT(b == (accel_buffer*)0x1, "out_buffer changed on failure");
    } else {
        accel_buffer_release(b);
    }
    free(host);
    REQUIRE_OK(accel_run(t->model, t->in, s->c->n_inputs, t->out, s->c->n_outputs, NULL));
    expect_outputs(s, t, "a run on the device's own buffers");
}

/* ---- overlap: an output sharing memory with an input is ACCEL_ERR_INVALID_ARGUMENT ---- */

static void check_overlap(const suite* s, test_setup* t) {
    const test_case* c = s->c;
    uint64_t size = c->inputs[0].byte_size > c->outputs[0].byte_size ? c->inputs[0].byte_size : c->outputs[0].byte_size;
    accel_buffer* both = test_alloc(t->device, size);
    REQUIRE_OK(accel_buffer_write(both, 0, c->inputs[0].data, c->inputs[0].byte_size));
    accel_buffer* saved_in = t->in[0];
    accel_buffer* saved_out = t->out[0];
    t->in[0] = both;
    t->out[0] = both;
    accel_status got = accel_run(t->model, t->in, c->n_inputs, t->out, c->n_outputs, NULL);
    EXPECT(got == ACCEL_ERR_INVALID_ARGUMENT,
           "output 0 in input 0's buffer gave %s, expected "
           "ACCEL_ERR_INVALID_ARGUMENT",
           accel_status_name(got));
    if (got != ACCEL_OK) EXPECT_ERROR_REPORTED(got);
    t->in[0] = saved_in;
    t->out[0] = saved_out;
    accel_buffer_release(both);
    /* The refusal leaves the model usable. */
    REQUIRE_OK(accel_run(t->model, t->in, c->n_inputs, t->out, c->n_outputs, NULL));
    expect_outputs(s, t, "a run after the refused one");
}

/* ---- submission_errors: what accel_job_submit refuses before anything runs (wrong counts; options: a priority
 * past 255, a core_mask that selects none of the device's cores, an unknown flag; another device's buffer), leaving
 * out_job as it was and counting none of it ---- */

static void expect_refused(const suite* s, test_setup* t, accel_buffer* const* in, size_t n_in,
                           accel_buffer* const* out, size_t n_out, const accel_run_options* o, const char* what) {
    accel_job* job = (accel_job*)0x1;
    accel_status got = accel_job_submit(t->model, in, n_in, out, n_out, o, &job);
    EXPECT(got == ACCEL_ERR_INVALID_ARGUMENT, "%s gave %s, expected ACCEL_ERR_INVALID_ARGUMENT", what,
           accel_status_name(got));
    if (got != ACCEL_OK) {
        EXPECT_ERROR_REPORTED(got);
        EXPECT(job == (accel_job*)0x1, "%s: out_job changed on failure", what);
    } else {
        accel_job_wait(job, -1);
        accel_job_release(job);
    }
    (void)s;
}

/* The refusal's message (the driver kit's, the same on every driver) names what was refused. */
static void expect_message_names(const char* what, const char* text) {
    EXPECT(strstr(accel_last_error_message(), text) != NULL, "%s: the message '%s' does not name '%s'", what,
           accel_last_error_message(), text);
}

static void check_submission_errors(const suite* s, test_setup* t) {
    const test_case* c = s->c;
    accel_run_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    /* Counts. */
    expect_refused(s, t, t->in, c->n_inputs - 1, t->out, c->n_outputs, &o, "one input too few");
    expect_refused(s, t, t->in, c->n_inputs, t->out, c->n_outputs + 1, &o, "one output too many");
    /* Options. */
    o.priority = 256;
    expect_refused(s, t, t->in, c->n_inputs, t->out, c->n_outputs, &o, "priority 256");
    o.priority = 0;
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(t->device, &info));
    if (info.cores < 64) {
        o.core_mask = 1ull << info.cores;
        expect_refused(s, t, t->in, c->n_inputs, t->out, c->n_outputs, &o, "a core_mask past the device's cores");
        expect_message_names("a core_mask past the device's cores", "core_mask");
        o.core_mask = 0;
    }
    o.flags = 0x80;
    expect_refused(s, t, t->in, c->n_inputs, t->out, c->n_outputs, &o, "an unknown flag (0x80)");
    expect_message_names("an unknown flag (0x80)", "unknown flags 0x80");
    o.flags = 0;
    /* Another device's buffer. */
    accel_device* other = test_open(s->uri);
    accel_buffer* foreign = test_alloc(other, c->inputs[0].byte_size);
    accel_buffer* saved = t->in[0];
    t->in[0] = foreign;
    expect_refused(s, t, t->in, c->n_inputs, t->out, c->n_outputs, &o, "an input of another device");
    t->in[0] = saved;
    accel_buffer_release(foreign);
    accel_device_release(other);
    /* The device works after all that, and counted none of it. */
    REQUIRE_OK(accel_run(t->model, t->in, c->n_inputs, t->out, c->n_outputs, NULL));
    expect_outputs(s, t, "a run after the refused submissions");
    accel_memory_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    REQUIRE_OK(accel_device_get_stats(t->device, &st));
    EXPECT(st.jobs_submitted == 1 && st.jobs_completed == 1, "refused submissions were counted: %llu submitted",
           (unsigned long long)st.jobs_submitted);
}

/* ---- buffer_ranges: a read, write or sync past a buffer's usable size, or an unknown sync direction ---- */

static void check_buffer_ranges(const suite* s, test_setup* t) {
    (void)s;
    accel_device* d = t->device;
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    accel_buffer* b = test_alloc(d, 16);
    uint64_t size = 0;
    EXPECT_OK(accel_buffer_size(b, &size));
    EXPECT(size >= 16 && size % info.alignment == 0, "a 16-byte buffer's usable size is %llu (alignment %llu)",
           (unsigned long long)size, (unsigned long long)info.alignment);
    void* p = NULL;
    EXPECT_OK(accel_buffer_host_ptr(b, &p));
    EXPECT(p && (uintptr_t)p % info.alignment == 0, "host pointer %p is not aligned to %llu", p,
           (unsigned long long)info.alignment);
    char mem[256];
    REQUIRE(size < sizeof mem, "a 16-byte buffer of %llu usable bytes", (unsigned long long)size);
    EXPECT_STATUS(accel_buffer_sync(b, ACCEL_SYNC_TO_HOST, size - 4, 8), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_sync(b, (accel_sync_direction)3, 0, 0), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_write(b, size + 1, mem, 1), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_read(b, 0, mem, size + 1), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_OK(accel_buffer_write(b, 0, mem, size));
    EXPECT_OK(accel_buffer_read(b, 0, mem, size));
    accel_buffer_release(b);
}

/* ---- node_times: the nodes a model runs and a profiled job's times of each ---- */

static accel_job* profiled_job(const suite* s, test_setup* t, uint32_t flags) {
    accel_run_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = flags;
    accel_job* job = NULL;
    REQUIRE_OK(accel_job_submit(t->model, t->in, s->c->n_inputs, t->out, s->c->n_outputs, &o, &job));
    EXPECT_OK(accel_job_wait(job, -1));
    return job;
}

static void check_node_times(const suite* s, test_setup* t) {
    size_t count = 0;
    REQUIRE_OK(accel_model_get_node_count(t->model, &count));
    EXPECT(count >= 1, "the model runs %zu nodes", count);
    for (size_t i = 0; i < count; i++) {
        accel_node_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        REQUIRE_OK(accel_model_get_node_info(t->model, i, &info));
        EXPECT(info.name && info.op_type && info.op_type[0], "node %zu: name or op_type missing", i);
    }
    accel_node_info past;
    memset(&past, 0, sizeof past);
    past.struct_size = sizeof past;
    EXPECT_STATUS(accel_model_get_node_info(t->model, count, &past), ACCEL_ERR_INVALID_ARGUMENT);

    accel_job* job = profiled_job(s, t, ACCEL_SUBMIT_PROFILE_NODES);
    accel_job_timing tm = test_timing(job);
    accel_node_time times[256];
    size_t n = 0;
    REQUIRE_OK(accel_job_get_node_times(job, times, sizeof times / sizeof times[0], &n));
    EXPECT(n == count, "the job timed %zu nodes, the model runs %zu", n, count);
    for (size_t i = 0; i < n && i < sizeof times / sizeof times[0]; i++)
        EXPECT(times[i].started_ns >= tm.started_ns && times[i].finished_ns >= times[i].started_ns &&
                   times[i].finished_ns <= tm.finished_ns,
               "node %zu ran %llu..%llu, outside its job's %llu..%llu", i, (unsigned long long)times[i].started_ns,
               (unsigned long long)times[i].finished_ns, (unsigned long long)tm.started_ns,
               (unsigned long long)tm.finished_ns);
    expect_outputs(s, t, "a profiled job");
    accel_job_release(job);
    /* A job submitted without the flag has no node times. */
    job = profiled_job(s, t, 0);
    EXPECT_STATUS(accel_job_get_node_times(job, NULL, 0, &n), ACCEL_ERR_UNSUPPORTED);
    accel_job_release(job);
}

/* accel.h: a driver that cannot time nodes cannot list them (ACCEL_ERR_UNSUPPORTED), runs a job submitted with
 * ACCEL_SUBMIT_PROFILE_NODES as if the flag were not set, and gives that job's node times as
 * ACCEL_ERR_UNSUPPORTED. */
static void refuse_node_times(const suite* s, test_setup* t) {
    size_t count = 7;
    EXPECT_STATUS(accel_model_get_node_count(t->model, &count), ACCEL_ERR_UNSUPPORTED);
    accel_node_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT_STATUS(accel_model_get_node_info(t->model, 0, &info), ACCEL_ERR_UNSUPPORTED);
    accel_job* job = profiled_job(s, t, ACCEL_SUBMIT_PROFILE_NODES);
    size_t n = 0;
    EXPECT_STATUS(accel_job_get_node_times(job, NULL, 0, &n), ACCEL_ERR_UNSUPPORTED);
    expect_outputs(s, t, "a job submitted with ACCEL_SUBMIT_PROFILE_NODES");
    accel_job_release(job);
}

/* ---- the suite ---- */

typedef struct check {
    const char* name;
    void (*run)(const suite*, test_setup*);
    void (*refused)(const suite*, test_setup*); /* what accel.h defines for a driver without it; NULL: none */
} check;

static const check kChecks[] = {
    {"device_info", check_device_info, NULL},
    {"tensors", check_tensors, NULL},
    {"run", check_run, NULL},
    {"async", check_async, NULL},
    {"buffer_too_small", check_buffer_too_small, NULL},
    {"import", check_import, refuse_import},
    {"overlap", check_overlap, NULL},
    {"submission_errors", check_submission_errors, NULL},
    {"buffer_ranges", check_buffer_ranges, NULL},
    {"node_times", check_node_times, refuse_node_times},
};

int main(int argc, char** argv) {
    static char name[96];
    snprintf(name, sizeof name, "conformance_%s", argc > 1 ? argv[1] : "?");
    test_name = name;
    REQUIRE(argc == 7 || argc == 8, "usage: %s CHECK URI DIR MODEL INPUTS OUTPUTS [UNSUPPORTED]", argv[0]);
    const check* chosen = NULL;
    for (size_t i = 0; i < sizeof kChecks / sizeof kChecks[0]; i++)
        if (strcmp(kChecks[i].name, argv[1]) == 0) chosen = &kChecks[i];
    REQUIRE(chosen, "no check '%s'", argv[1]);
    suite s;
    suite_init(&s, argv, argc);
    /* Every check starts from the model loaded on a device of URI, with its buffers. */
    test_setup t;
    test_setup_open(&t, &s.manifest, s.uri, s.c);
    if (s.unsupported) {
        REQUIRE(chosen->refused,
                "%s is declared unsupported on %s (%s), but accel.h defines no refusal for it to "
                "check: a driver must pass it",
                chosen->name, s.scheme, s.unsupported);
        printf("%s on %s: not supported (%s); checking the refusal accel.h defines\n", chosen->name, s.uri,
               s.unsupported);
        chosen->refused(&s, &t);
    } else {
        chosen->run(&s, &t);
    }
    test_setup_close(&t);
    test_manifest_free(&s.manifest);
    return test_finish();
}
