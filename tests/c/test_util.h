/* test_util.h - the C tests' shared helpers: checks with clear messages, the case manifest written by
 * tests/tools/make_cases.py, and small wrappers over the public ABI (accel.h only). C99 + POSIX. */
#ifndef ACCEL_TEST_UTIL_H
#define ACCEL_TEST_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <accel/accel.h>

/* ---- checks ----
 * REQUIRE*: fatal (prints, exits 1). EXPECT*: counts a failure and goes on; a test's main returns
 * test_finish(), non-zero when any check failed. */
extern int test_failures;
extern const char* test_name;

void test_fail_at(const char* file, int line, int fatal, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
int test_finish(void);

#define REQUIRE(cond, ...)                                             \
    do {                                                               \
        if (!(cond)) test_fail_at(__FILE__, __LINE__, 1, __VA_ARGS__); \
    } while (0)
#define EXPECT(cond, ...)                                              \
    do {                                                               \
        if (!(cond)) test_fail_at(__FILE__, __LINE__, 0, __VA_ARGS__); \
    } while (0)

/* Checks a call's status, printing the status name and accel_last_error_message() when it differs. */
#define STATUS_CHECK_(fatal, expr, want)                                                                     \
    do {                                                                                                     \
        accel_status got_ = (expr);                                                                          \
        accel_status want_ = (want);                                                                         \
        if (got_ != want_)                                                                                   \
            test_fail_at(__FILE__, __LINE__, fatal, "%s returned %s, expected %s (last error: '%s')", #expr, \
                         accel_status_name(got_), accel_status_name(want_),                                  \
                         got_ != ACCEL_OK ? accel_last_error_message() : "");                                \
    } while (0)
#define REQUIRE_OK(expr) STATUS_CHECK_(1, expr, ACCEL_OK)
#define EXPECT_OK(expr) STATUS_CHECK_(0, expr, ACCEL_OK)
#define REQUIRE_STATUS(expr, want) STATUS_CHECK_(1, expr, want)
#define EXPECT_STATUS(expr, want) STATUS_CHECK_(0, expr, want)

/* A failing call must leave a non-empty message and the same status in accel_last_error_status(). */
#define EXPECT_ERROR_REPORTED(status)                                                                 \
    do {                                                                                              \
        EXPECT(accel_last_error_message()[0] != '\0', "status %s left an empty error message",        \
               accel_status_name(status));                                                            \
        EXPECT(accel_last_error_status() == (status), "accel_last_error_status() is %s, expected %s", \
               accel_status_name(accel_last_error_status()), accel_status_name(status));              \
    } while (0)

/* ---- time, threads ---- */
uint64_t test_now_ns(void);
void test_sleep_ms(unsigned ms);

/* ---- files ---- */
/* Reads a whole file (malloc'ed, caller frees); exits the test on failure. */
void* test_read_file(const char* path, size_t* out_size);
/* dir + "/" + name into a static-free malloc'ed string. */
char* test_path(const char* dir, const char* name);

/* ---- the case manifest (see tests/tools/make_cases.py) ---- */
typedef struct test_tensor {
    char name[128];
    accel_dtype dtype;
    uint32_t ndim;
    int64_t shape[ACCEL_MAX_DIMS];
    uint64_t byte_size;
    char file[256];
    void* data; /* the file's bytes, loaded by test_manifest_load */
} test_tensor;

typedef struct test_case {
    char name[128];
    char tag[32];
    char model_file[256];
    char compile_error[512]; /* non-empty: the compiler refused this case (no model, no tensors) */
    size_t n_inputs, n_outputs;
    test_tensor* inputs;
    test_tensor* outputs;
} test_case;

typedef struct test_manifest {
    char dir[1024];
    size_t count;
    test_case* cases;
} test_manifest;

/* Reads dir/manifest.txt and every tensor file it names; exits the test on a malformed manifest. */
void test_manifest_load(const char* dir, test_manifest* out);
void test_manifest_free(test_manifest* m);
/* The first case with this name (or, with find_tag, this tag); exits the test if there is none. */
const test_case* test_manifest_find(const test_manifest* m, const char* name);
const test_case* test_manifest_find_tag(const test_manifest* m, const char* tag);
/* The case's model path (malloc'ed). */
char* test_case_model_path(const test_manifest* m, const test_case* c);

/* ---- ABI helpers ---- */
accel_device* test_open(const char* uri);            /* exits on failure */
accel_model* test_load(accel_device* d, const test_manifest* m, const test_case* c); /* from the file */
accel_buffer* test_alloc(accel_device* d, uint64_t size);
/* Buffers for every input (filled with the case's data) and output (filled with 0xFF bytes). */
void test_make_io(accel_device* d, const test_case* c, accel_buffer** inputs, accel_buffer** outputs);
void test_release_io(const test_case* c, accel_buffer** inputs, accel_buffer** outputs);
/* Compares output `index` of the case with the buffer's contents: max abs error <=
 * 1e-4 * max(1, max|expected|) and no NaN where the expected value is finite. Returns 1 if it matches,
 * else prints the worst element (prefixed by `what`) and returns 0. */
int test_compare_output(const test_case* c, size_t index, accel_buffer* buf, const char* what);
int test_compare_floats(const float* got, const float* want, size_t n, const char* what);

/* ---- the device set-up the tests share ----
 * The model of one case loaded on a device, with the case's input and output buffers (test_make_io). A
 * set-up holds a reference to its device: test_setup_open opens one on `uri`, test_setup_on shares an open
 * one (two models on one device). test_setup_close releases what the set-up still holds: a test that
 * releases a part itself first (to see that a job keeps it alive) sets that field to NULL. */
#define TEST_MAX_IO 8
typedef struct test_setup {
    accel_device* device;
    const test_case* c;
    accel_model* model;
    accel_buffer* in[TEST_MAX_IO];
    accel_buffer* out[TEST_MAX_IO];
} test_setup;
void test_setup_open(test_setup* s, const test_manifest* m, const char* uri, const test_case* c);
void test_setup_on(test_setup* s, accel_device* d, const test_manifest* m, const test_case* c);
void test_setup_close(test_setup* s);

/* The scheduling tests' set-up: a device opened on `uri` with a slow case (`slow_name`) and the "tiny"
 * case set up on it; all released by test_pair_close. */
typedef struct test_pair {
    accel_device* device;
    test_setup slow;
    test_setup tiny;
} test_pair;
void test_pair_open(test_pair* p, const test_manifest* m, const char* uri, const char* slow_name);
void test_pair_close(test_pair* p);

/* The job's timing (struct_size set). */
accel_job_timing test_timing(accel_job* job);
/* Polls the job's timing until it has started (started_ns != 0); exits the test after 30 s. */
void test_wait_started(accel_job* job);

/* ---- a completion callback's record ----
 * What a job's callback was called with, for the test to wait for and check. test_record_callback is the
 * callback that fills it: its user_data is the record, or a struct of the test's own that begins with one
 * (that struct's own callback sets its fields, then calls test_record_note, whose unlock publishes them). */
typedef struct test_record {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int calls;
    accel_job* job;
    accel_status status; /* -1 until called */
    void* user_data;
    pthread_t thread; /* the thread the callback ran on */
} test_record;
/* Run options (struct_size set) that call `callback` with `user_data` when the job completes. */
accel_run_options test_callback_options(accel_job_callback callback, void* user_data);
void test_record_init(test_record* r);
void test_record_destroy(test_record* r);
/* One call: counted and recorded under r->mu, waking test_record_wait. */
void test_record_note(test_record* r, accel_job* job, accel_status status, void* user_data);
void test_record_callback(accel_job* job, accel_status status, void* user_data);
/* Until the callback has been called (a hang is the test's time limit). */
void test_record_wait(test_record* r);

/* Threads of this process (Linux: /proc/self/status), -1 if unknown. */
int test_thread_count(void);
/* The thread count once the drivers are loaded and before any device is open (recorded by the first
 * test_open). test_finish waits (up to 3 s) for the process to be back to it, so that a driver thread
 * still tearing a device down cannot race the exit-time leak check of another test's run; whether that
 * teardown happens on time is checked by release_while_running. */
extern int test_thread_baseline;

/* The cases directory: argv[1], or exits with a usage message. */
const char* test_cases_dir(int argc, char** argv);

#endif /* ACCEL_TEST_UTIL_H */
