/* test_util.c - see test_util.h. */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

int test_failures = 0;
const char* test_name = "test";

void test_fail_at(const char* file, int line, int fatal, const char* fmt, ...) {
    va_list args;
    fprintf(stderr, "%s: FAIL at %s:%d: ", test_name, file, line);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    fflush(stderr);
    test_failures++;
    if (fatal) {
        fprintf(stderr, "%s: aborting after a fatal check (%d failure(s))\n", test_name, test_failures);
        exit(1);
    }
}

int test_thread_baseline = -1;

int test_thread_count(void) {
    FILE* f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Threads:", 8) == 0) n = atoi(line + 8);
    fclose(f);
    return n;
}

int test_finish(void) {
    if (test_thread_baseline > 0) {
        uint64_t deadline = test_now_ns() + 3ull * 1000 * 1000 * 1000;
        while (test_thread_count() > test_thread_baseline && test_now_ns() < deadline) test_sleep_ms(2);
        if (test_thread_count() > test_thread_baseline)
            fprintf(stderr, "%s: note: %d threads at exit, %d before the first device was opened\n", test_name,
                    test_thread_count(), test_thread_baseline);
    }
    if (test_failures) {
        fprintf(stderr, "%s: %d check(s) FAILED\n", test_name, test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", test_name);
    return 0;
}

uint64_t test_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void test_sleep_ms(unsigned ms) {
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void* test_read_file(const char* path, size_t* out_size) {
    FILE* f = fopen(path, "rb");
    REQUIRE(f, "cannot open '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    unsigned char* data = malloc(cap);
    REQUIRE(data, "out of memory");
    for (;;) {
        if (n == cap) {
            cap *= 2;
            data = realloc(data, cap);
            REQUIRE(data, "out of memory");
        }
        size_t got = fread(data + n, 1, cap - n, f);
        if (got == 0) break;
        n += got;
    }
    REQUIRE(!ferror(f), "error reading '%s'", path);
    fclose(f);
    *out_size = n;
    return data;
}

char* test_path(const char* dir, const char* name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char* p = malloc(n);
    REQUIRE(p, "out of memory");
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

const char* test_cases_dir(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s CASES_DIR (the directory tests/tools/make_cases.py wrote)\n", argv[0]);
        exit(2);
    }
    return argv[1];
}

/* ---- manifest ---- */

static accel_dtype dtype_from_name(const char* s) {
    for (accel_dtype d = 1; d <= ACCEL_DTYPE_BOOL; d++)
        if (strcmp(accel_dtype_name(d), s) == 0) return d;
    return ACCEL_DTYPE_UNKNOWN;
}

/* "in|out <name> <dtype> <ndim> <dims...> <file>" */
static void parse_tensor(const char* dir, char* rest, test_tensor* t, const char* where) {
    char* save = NULL;
    char* name = strtok_r(rest, " ", &save);
    char* dtype = strtok_r(NULL, " ", &save);
    char* ndim = strtok_r(NULL, " ", &save);
    REQUIRE(name && dtype && ndim, "manifest: malformed tensor line (%s)", where);
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = dtype_from_name(dtype);
    REQUIRE(t->dtype != ACCEL_DTYPE_UNKNOWN, "manifest: unknown dtype '%s' (%s)", dtype, where);
    t->ndim = (uint32_t)strtoul(ndim, NULL, 10);
    REQUIRE(t->ndim <= ACCEL_MAX_DIMS, "manifest: ndim %u (%s)", t->ndim, where);
    uint64_t count = 1;
    for (uint32_t i = 0; i < t->ndim; i++) {
        char* d = strtok_r(NULL, " ", &save);
        REQUIRE(d, "manifest: missing dim (%s)", where);
        t->shape[i] = strtoll(d, NULL, 10);
        count *= (uint64_t)t->shape[i];
    }
    t->byte_size = count * accel_dtype_size(t->dtype);
    char* file = strtok_r(NULL, " \n", &save);
    REQUIRE(file, "manifest: missing file (%s)", where);
    snprintf(t->file, sizeof t->file, "%s", file);
    char* path = test_path(dir, file);
    size_t size = 0;
    t->data = test_read_file(path, &size);
    REQUIRE(size == t->byte_size, "%s holds %zu bytes, the manifest says %llu", path, size,
            (unsigned long long)t->byte_size);
    free(path);
}

void test_manifest_load(const char* dir, test_manifest* out) {
    memset(out, 0, sizeof *out);
    snprintf(out->dir, sizeof out->dir, "%s", dir);
    char* path = test_path(dir, "manifest.txt");
    FILE* f = fopen(path, "r");
    REQUIRE(f, "cannot open the case manifest '%s': %s (did the make_cases fixture run?)", path, strerror(errno));
    size_t cap = 0;
    test_case* cur = NULL;
    size_t in_i = 0, out_i = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!line[0]) continue;
        if (strncmp(line, "case ", 5) == 0) {
            REQUIRE(!cur, "manifest: 'case' inside a case: %s", line);
            if (out->count == cap) {
                cap = cap ? cap * 2 : 64;
                out->cases = realloc(out->cases, cap * sizeof *out->cases);
                REQUIRE(out->cases, "out of memory");
            }
            cur = &out->cases[out->count++];
            memset(cur, 0, sizeof *cur);
            unsigned long nin = 0, nout = 0;
            char name[128], tag[32], model[256];
            REQUIRE(sscanf(line + 5, "%127s %31s %255s %lu %lu", name, tag, model, &nin, &nout) == 5,
                    "manifest: malformed line '%s'", line);
            snprintf(cur->name, sizeof cur->name, "%s", name);
            snprintf(cur->tag, sizeof cur->tag, "%s", tag);
            snprintf(cur->model_file, sizeof cur->model_file, "%s", model);
            cur->n_inputs = nin;
            cur->n_outputs = nout;
            cur->inputs = calloc(nin ? nin : 1, sizeof(test_tensor));
            cur->outputs = calloc(nout ? nout : 1, sizeof(test_tensor));
            REQUIRE(cur->inputs && cur->outputs, "out of memory");
            in_i = out_i = 0;
        } else if (strncmp(line, "in ", 3) == 0) {
            REQUIRE(cur && in_i < cur->n_inputs, "manifest: unexpected line '%s'", line);
            parse_tensor(dir, line + 3, &cur->inputs[in_i++], cur->name);
        } else if (strncmp(line, "out ", 4) == 0) {
            REQUIRE(cur && out_i < cur->n_outputs, "manifest: unexpected line '%s'", line);
            parse_tensor(dir, line + 4, &cur->outputs[out_i++], cur->name);
        } else if (strcmp(line, "end") == 0) {
            REQUIRE(cur && in_i == cur->n_inputs && out_i == cur->n_outputs, "manifest: incomplete case");
            cur = NULL;
        } else if (strncmp(line, "compile_error ", 14) == 0) {
            REQUIRE(!cur, "manifest: 'compile_error' inside a case");
            if (out->count == cap) {
                cap = cap ? cap * 2 : 64;
                out->cases = realloc(out->cases, cap * sizeof *out->cases);
                REQUIRE(out->cases, "out of memory");
            }
            test_case* c = &out->cases[out->count++];
            memset(c, 0, sizeof *c);
            const char* rest = line + 14;
            size_t n = strcspn(rest, " ");
            snprintf(c->name, sizeof c->name, "%.*s", (int)(n < 127 ? n : 127), rest);
            snprintf(c->tag, sizeof c->tag, "?");
            snprintf(c->compile_error, sizeof c->compile_error, "%s", rest[n] ? rest + n + 1 : "(no message)");
        } else {
            REQUIRE(0, "manifest: unknown line '%s'", line);
        }
    }
    REQUIRE(!cur, "manifest: the last case has no 'end'");
    fclose(f);
    free(path);
}

void test_manifest_free(test_manifest* m) {
    for (size_t i = 0; i < m->count; i++) {
        test_case* c = &m->cases[i];
        for (size_t k = 0; k < c->n_inputs; k++) free(c->inputs[k].data);
        for (size_t k = 0; k < c->n_outputs; k++) free(c->outputs[k].data);
        free(c->inputs);
        free(c->outputs);
    }
    free(m->cases);
    memset(m, 0, sizeof *m);
}

const test_case* test_manifest_find(const test_manifest* m, const char* name) {
    for (size_t i = 0; i < m->count; i++) {
        if (strcmp(m->cases[i].name, name) == 0) {
            REQUIRE(!m->cases[i].compile_error[0], "case '%s' did not compile: %s", name, m->cases[i].compile_error);
            return &m->cases[i];
        }
    }
    REQUIRE(0, "no case named '%s' in %s/manifest.txt", name, m->dir);
    return NULL;
}

const test_case* test_manifest_find_tag(const test_manifest* m, const char* tag) {
    for (size_t i = 0; i < m->count; i++)
        if (strcmp(m->cases[i].tag, tag) == 0) return &m->cases[i];
    REQUIRE(0, "no case tagged '%s' in %s/manifest.txt", tag, m->dir);
    return NULL;
}

char* test_case_model_path(const test_manifest* m, const test_case* c) { return test_path(m->dir, c->model_file); }

/* ---- ABI helpers ---- */

accel_device* test_open(const char* uri) {
    if (test_thread_baseline < 0) {
        size_t n = 0;
        accel_driver_count(&n); /* drivers (and whatever threads they start when loaded) first */
        test_thread_baseline = test_thread_count();
    }
    accel_device* d = NULL;
    REQUIRE_OK(accel_device_open(uri, &d));
    REQUIRE(d, "accel_device_open('%s') returned OK and a NULL device", uri);
    return d;
}

accel_model* test_load(accel_device* d, const test_manifest* m, const test_case* c) {
    char* path = test_case_model_path(m, c);
    accel_model* model = NULL;
    accel_status s = accel_model_load_file(d, path, &model);
    REQUIRE(s == ACCEL_OK, "loading '%s' gave %s: %s", path, accel_status_name(s), accel_last_error_message());
    free(path);
    return model;
}

accel_buffer* test_alloc(accel_device* d, uint64_t size) {
    accel_buffer* b = NULL;
    REQUIRE_OK(accel_buffer_alloc(d, size, &b));
    return b;
}

void test_make_io(accel_device* d, const test_case* c, accel_buffer** inputs, accel_buffer** outputs) {
    for (size_t i = 0; i < c->n_inputs; i++) {
        inputs[i] = test_alloc(d, c->inputs[i].byte_size ? c->inputs[i].byte_size : 1);
        REQUIRE_OK(accel_buffer_write(inputs[i], 0, c->inputs[i].data, c->inputs[i].byte_size));
    }
    for (size_t i = 0; i < c->n_outputs; i++) {
        uint64_t size = c->outputs[i].byte_size ? c->outputs[i].byte_size : 1;
        outputs[i] = test_alloc(d, size);
        void* p = NULL;
        REQUIRE_OK(accel_buffer_host_ptr(outputs[i], &p));
        memset(p, 0xFF, (size_t)size); /* NaN: an output the device never writes shows */
    }
}

void test_release_io(const test_case* c, accel_buffer** inputs, accel_buffer** outputs) {
    for (size_t i = 0; i < c->n_inputs; i++) accel_buffer_release(inputs[i]);
    for (size_t i = 0; i < c->n_outputs; i++) accel_buffer_release(outputs[i]);
}

void test_setup_on(test_setup* s, accel_device* d, const test_manifest* m, const test_case* c) {
    memset(s, 0, sizeof *s);
    REQUIRE(c->n_inputs <= TEST_MAX_IO && c->n_outputs <= TEST_MAX_IO,
            "case '%s' has %zu inputs and %zu outputs; "
            "a set-up holds %d of each",
            c->name, c->n_inputs, c->n_outputs, TEST_MAX_IO);
    accel_device_retain(d);
    s->device = d;
    s->c = c;
    s->model = test_load(d, m, c);
    test_make_io(d, c, s->in, s->out);
}

void test_setup_open(test_setup* s, const test_manifest* m, const char* uri, const test_case* c) {
    accel_device* d = test_open(uri);
    test_setup_on(s, d, m, c);
    accel_device_release(d); /* the set-up's reference is the one left */
}

void test_setup_close(test_setup* s) {
    for (size_t i = 0; i < s->c->n_inputs; i++) accel_buffer_release(s->in[i]);
    for (size_t i = 0; i < s->c->n_outputs; i++) accel_buffer_release(s->out[i]);
    accel_model_release(s->model);
    accel_device_release(s->device);
    memset(s, 0, sizeof *s);
}

void test_pair_open(test_pair* p, const test_manifest* m, const char* uri, const char* slow_name) {
    p->device = test_open(uri);
    test_setup_on(&p->slow, p->device, m, test_manifest_find(m, slow_name));
    test_setup_on(&p->tiny, p->device, m, test_manifest_find(m, "tiny"));
}

void test_pair_close(test_pair* p) {
    test_setup_close(&p->slow);
    test_setup_close(&p->tiny);
    accel_device_release(p->device);
}

int test_compare_floats(const float* got, const float* want, size_t n, const char* what) {
    double max_ref = 0.0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(want[i]) && fabs((double)want[i]) > max_ref) max_ref = fabs((double)want[i]);
    double tol = 1e-4 * (max_ref > 1.0 ? max_ref : 1.0);
    double worst = -1.0;
    size_t worst_i = 0;
    int nan_bad = 0;
    for (size_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        double err;
        if (isnan(w)) err = isnan(g) ? 0.0 : INFINITY;
        else if (!isfinite(g)) err = INFINITY;
        else err = fabs(g - w);
        if (!isfinite(g) && isfinite(w)) nan_bad = 1;
        if (err > worst) {
            worst = err;
            worst_i = i;
        }
    }
    if (n == 0 || worst <= tol) return 1;
    fprintf(stderr, "%s: %s: max abs error %.3g > tolerance %.3g at element %zu (got %.9g, expected %.9g)%s\n",
            test_name, what, worst, tol, worst_i, (double)got[worst_i], (double)want[worst_i],
            nan_bad ? " [non-finite output]" : "");
    return 0;
}

int test_compare_output(const test_case* c, size_t index, accel_buffer* buf, const char* what) {
    const test_tensor* t = &c->outputs[index];
    REQUIRE(t->dtype == ACCEL_DTYPE_FLOAT32, "only float32 outputs are compared");
    size_t n = (size_t)(t->byte_size / 4);
    float* got = malloc(t->byte_size ? (size_t)t->byte_size : 1);
    REQUIRE(got, "out of memory");
    accel_status s = accel_buffer_read(buf, 0, got, t->byte_size);
    if (s != ACCEL_OK) {
        fprintf(stderr, "%s: %s: accel_buffer_read gave %s: %s\n", test_name, what, accel_status_name(s),
                accel_last_error_message());
        free(got);
        return 0;
    }
    int ok = test_compare_floats(got, (const float*)t->data, n, what);
    free(got);
    return ok;
}

accel_job_timing test_timing(accel_job* job) {
    accel_job_timing t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    REQUIRE_OK(accel_job_get_timing(job, &t));
    return t;
}

void test_wait_started(accel_job* job) {
    uint64_t deadline = test_now_ns() + 30ull * 1000 * 1000 * 1000;
    for (;;) {
        accel_job_timing t = test_timing(job);
        if (t.started_ns != 0) return;
        REQUIRE(test_now_ns() < deadline, "the job did not start within 30 s");
        struct timespec ts = {0, 100 * 1000};
        nanosleep(&ts, NULL);
    }
}

accel_run_options test_callback_options(accel_job_callback callback, void* user_data) {
    accel_run_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.callback = callback;
    o.user_data = user_data;
    return o;
}

void test_record_init(test_record* r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->status = -1;
}

void test_record_destroy(test_record* r) {
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
}

void test_record_note(test_record* r, accel_job* job, accel_status status, void* user_data) {
    pthread_mutex_lock(&r->mu);
    r->calls++;
    r->job = job;
    r->status = status;
    r->user_data = user_data;
    r->thread = pthread_self();
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

void test_record_callback(accel_job* job, accel_status status, void* user_data) {
    test_record_note((test_record*)user_data, job, status, user_data);
}

void test_record_wait(test_record* r) {
    pthread_mutex_lock(&r->mu);
    while (r->calls == 0) pthread_cond_wait(&r->cv, &r->mu);
    pthread_mutex_unlock(&r->mu);
}
