/* concurrency: 4 threads x 50 runs of one model on emu:cores=2 give outputs bit-identical to a sequential
 * run (each thread with its own buffers), and the sequential run matches onnxruntime. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>

#include "test_util.h"

enum { THREADS = 4, RUNS = 50 };

static accel_device* g_dev;
static accel_model* g_model;
static const test_case* g_case;
static void* g_reference[8];

static accel_job* g_shared_job;

static void* wait_shared(void* arg) {
    accel_status* result = arg;
    accel_status s = accel_job_wait(g_shared_job, 1000);
    if (s == ACCEL_ERR_NOT_READY) s = accel_job_wait(g_shared_job, -1);
    *result = s;
    return NULL;
}

typedef struct {
    int index;
    int mismatches;
    int failures;
    accel_status first_error;
} worker;

static void* work(void* arg) {
    worker* w = arg;
    accel_buffer *in[8], *out[8];
    test_make_io(g_dev, g_case, in, out);
    for (int r = 0; r < RUNS; r++) {
        for (size_t i = 0; i < g_case->n_outputs; i++) {
            void* p = NULL;
            accel_buffer_host_ptr(out[i], &p);
            memset(p, 0xFF, (size_t)g_case->outputs[i].byte_size);
        }
        /* half the runs synchronous, half submitted and waited with a callback-free job */
        accel_status s;
        if (r % 2) {
            s = accel_run(g_model, in, g_case->n_inputs, out, g_case->n_outputs, NULL);
        } else {
            accel_job* job = NULL;
            accel_run_options o;
            memset(&o, 0, sizeof o);
            o.struct_size = sizeof o;
            o.priority = w->index * 10;
            s = accel_job_submit(g_model, in, g_case->n_inputs, out, g_case->n_outputs, &o, &job);
            if (s == ACCEL_OK) {
                s = accel_job_wait(job, -1);
                accel_job_release(job);
            }
        }
        if (s != ACCEL_OK) {
            if (!w->failures) w->first_error = s;
            w->failures++;
            continue;
        }
        for (size_t i = 0; i < g_case->n_outputs; i++) {
            void* p = NULL;
            accel_buffer_host_ptr(out[i], &p);
            if (memcmp(p, g_reference[i], (size_t)g_case->outputs[i].byte_size) != 0) w->mismatches++;
        }
    }
    test_release_io(g_case, in, out);
    return NULL;
}

int main(int argc, char** argv) {
    test_name = "concurrency";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    g_case = test_manifest_find(&m, "small_cnn");
    REQUIRE(g_case->n_outputs <= 8 && g_case->n_inputs <= 8, "too many tensors");
    g_dev = test_open("emu:cores=2");
    g_model = test_load(g_dev, &m, g_case);

    /* the sequential reference */
    {
        accel_buffer *in[8], *out[8];
        test_make_io(g_dev, g_case, in, out);
        REQUIRE_OK(accel_run(g_model, in, g_case->n_inputs, out, g_case->n_outputs, NULL));
        for (size_t i = 0; i < g_case->n_outputs; i++) {
            EXPECT(test_compare_output(g_case, i, out[i], "sequential reference"), "the reference run is wrong");
            g_reference[i] = malloc(g_case->outputs[i].byte_size);
            REQUIRE(g_reference[i], "out of memory");
            REQUIRE_OK(accel_buffer_read(out[i], 0, g_reference[i], g_case->outputs[i].byte_size));
        }
        test_release_io(g_case, in, out);
    }

    pthread_t threads[THREADS];
    worker workers[THREADS];
    for (int t = 0; t < THREADS; t++) {
        memset(&workers[t], 0, sizeof workers[t]);
        workers[t].index = t;
        REQUIRE(pthread_create(&threads[t], NULL, work, &workers[t]) == 0, "pthread_create");
    }
    for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; t++) {
        EXPECT(workers[t].failures == 0, "thread %d: %d of %d runs failed (first: %s)", t, workers[t].failures, RUNS,
               accel_status_name(workers[t].first_error));
        EXPECT(workers[t].mismatches == 0, "thread %d: %d of %d runs differ from the sequential run", t,
               workers[t].mismatches, RUNS);
    }

    /* several threads wait on the same job at once (accel_job_wait is "safe from several threads") */
    {
        accel_buffer *in[8], *out[8];
        test_make_io(g_dev, g_case, in, out);
        REQUIRE_OK(accel_job_submit(g_model, in, g_case->n_inputs, out, g_case->n_outputs, NULL, &g_shared_job));
        pthread_t waiters[THREADS];
        accel_status results[THREADS];
        for (int t = 0; t < THREADS; t++)
            REQUIRE(pthread_create(&waiters[t], NULL, wait_shared, &results[t]) == 0, "pthread_create");
        for (int t = 0; t < THREADS; t++) pthread_join(waiters[t], NULL);
        for (int t = 0; t < THREADS; t++)
            EXPECT(results[t] == ACCEL_OK, "waiter %d got %s", t, accel_status_name(results[t]));
        for (size_t i = 0; i < g_case->n_outputs; i++) {
            void* p = NULL;
            accel_buffer_host_ptr(out[i], &p);
            EXPECT(memcmp(p, g_reference[i], (size_t)g_case->outputs[i].byte_size) == 0, "shared job output differs");
        }
        accel_job_release(g_shared_job);
        test_release_io(g_case, in, out);
    }

    accel_memory_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    uint64_t deadline = test_now_ns() + 10ull * 1000 * 1000 * 1000;
    do {
        REQUIRE_OK(accel_device_get_stats(g_dev, &st));
        if (st.jobs_completed == st.jobs_submitted) break;
        test_sleep_ms(5);
    } while (test_now_ns() < deadline);
    EXPECT(st.jobs_submitted == 2 + THREADS * RUNS, "jobs_submitted %llu, expected %d",
           (unsigned long long)st.jobs_submitted, 2 + THREADS * RUNS);
    EXPECT(st.jobs_completed == st.jobs_submitted, "jobs_completed %llu of %llu", (unsigned long long)st.jobs_completed,
           (unsigned long long)st.jobs_submitted);
    EXPECT(st.live_buffers == 0, "%llu buffers live after every thread released its own",
           (unsigned long long)st.live_buffers);

    for (size_t i = 0; i < g_case->n_outputs; i++) free(g_reference[i]);
    accel_model_release(g_model);
    accel_device_release(g_dev);
    test_manifest_free(&m);
    return test_finish();
}
