/* release_while_running: a job keeps its model, buffers and device alive until it finishes. Submit a
 * slow job, release the model, the input buffer and the device at once, keep one reference to the output
 * buffer; the job still finishes ACCEL_OK with the right output. Then the same with fire and forget,
 * where the caller keeps nothing and the last references drop on the driver's own thread. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>

#include "test_util.h"

/* Every pthread_detach in the process, the emulator driver's included (this definition comes first in
 * the dynamic lookup, and passes the call on). A device torn down on one of its own threads detaches
 * that thread (it cannot join itself): counting detaches tells whether that happened, where counting
 * threads cannot (pthread_join returns a moment before the kernel drops the thread from /proc). */
static pthread_mutex_t detach_mu = PTHREAD_MUTEX_INITIALIZER;
static int detaches = 0;

__attribute__((visibility("default"))) int pthread_detach(pthread_t thread) {
    static int (*real)(pthread_t);
    pthread_mutex_lock(&detach_mu);
    if (!real) *(void**)&real = dlsym(RTLD_NEXT, "pthread_detach");
    detaches++;
    pthread_mutex_unlock(&detach_mu);
    return real ? real(thread) : 0;
}

static int detach_count(void) {
    pthread_mutex_lock(&detach_mu);
    int n = detaches;
    pthread_mutex_unlock(&detach_mu);
    return n;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int calls = 0;
static accel_status seen = -1;

static void callback(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    (void)user_data;
    pthread_mutex_lock(&mu);
    calls++;
    seen = status;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* The slow case set up on a one-core device (released part by part by the caller: what the test is about)
 * and one job of it submitted, with `callback` or without; *job its handle, or fire and forget if job is NULL. */
static void submit_slow(test_setup* s, const test_manifest* m, const test_case* slow, int with_callback,
                        accel_job** job) {
    test_setup_open(s, m, "emu:cores=1", slow);
    accel_run_options o = test_callback_options(callback, NULL);
    REQUIRE_OK(accel_job_submit(s->model, s->in, 1, s->out, 1, with_callback ? &o : NULL, job));
}

int main(int argc, char** argv) {
    test_name = "release_while_running";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    const test_case* slow = test_manifest_find(&m, "slow");

    /* ---- keep the job and one output reference, release everything else ---- */
    {
        test_setup s;
        accel_job* job = NULL;
        submit_slow(&s, &m, slow, 0, &job);
        accel_device* d = s.device;
        accel_model* model = s.model;
        accel_buffer **in = s.in, **out = s.out;
        accel_model_release(model);
        accel_buffer_release(in[0]);
        accel_device_release(d);
        int32_t done = 1;
        EXPECT_OK(accel_job_poll(job, &done));
        EXPECT_OK(accel_job_wait(job, -1));
        EXPECT(test_compare_output(slow, 0, out[0], "output after releasing model, input and device"),
               "the output is wrong after releasing the model, the input and the device during the job");
        accel_job_timing t = test_timing(job);
        EXPECT(t.core == 0 && t.started_ns != 0 && t.finished_ns >= t.started_ns, "timing: core %d", t.core);
        accel_job_release(job);
        /* the output buffer still holds the device: it is usable */
        float first = 0;
        EXPECT_OK(accel_buffer_read(out[0], 0, &first, sizeof first));
        accel_buffer_release(out[0]); /* the last reference: the device goes now */
    }

    /* ---- release the job handle too, while it runs: it finishes (not cancelled) ---- */
    {
        test_setup s;
        accel_job* job = NULL;
        submit_slow(&s, &m, slow, 1, &job);
        accel_device* d = s.device;
        accel_model* model = s.model;
        accel_buffer **in = s.in, **out = s.out;
        test_wait_started(job);
        accel_job_release(job); /* running: it finishes */
        accel_model_release(model);
        accel_buffer_release(in[0]);
        accel_device_release(d);
        pthread_mutex_lock(&mu);
        while (calls < 1) pthread_cond_wait(&cv, &mu);
        EXPECT(seen == ACCEL_OK, "a running job whose handle was released finished with %s", accel_status_name(seen));
        pthread_mutex_unlock(&mu);
        EXPECT(test_compare_output(slow, 0, out[0], "output of a job released while running"), "wrong output");
        accel_buffer_release(out[0]);
    }

    /* ---- fire and forget, nothing kept: the device ends on the driver's thread ---- */
    {
        test_setup s;
        submit_slow(&s, &m, slow, 1, NULL);
        accel_device* d = s.device;
        accel_model* model = s.model;
        accel_buffer **in = s.in, **out = s.out;
        accel_model_release(model);
        accel_buffer_release(in[0]);
        accel_buffer_release(out[0]);
        accel_device_release(d);
        pthread_mutex_lock(&mu);
        while (calls < 2) pthread_cond_wait(&cv, &mu);
        EXPECT(seen == ACCEL_OK, "a fire-and-forget job with everything released finished with %s",
               accel_status_name(seen));
        pthread_mutex_unlock(&mu);
        test_sleep_ms(100); /* let the driver's thread finish tearing the device down */
        /* that thread could not join itself: it detached, which the last section counts on seeing */
        EXPECT(detach_count() > 0,
               "a device torn down on its own thread detached nothing (is the "
               "pthread_detach counter in this test still seeing the driver's calls?)");
    }

    /* ---- once accel_run has returned, the finished job holds nothing: releasing the buffers gives their
     * memory back at once (else a program that reuses the pool right after a run gets OUT_OF_MEMORY) ---- */
    {
        const test_case* tiny = test_manifest_find(&m, "tiny");
        accel_device* d = test_open("emu:cores=1,pool=1M");
        accel_model* model = test_load(d, &m, tiny);
        enum { ROUNDS = 100 };
        int oom = 0, live_after = 0;
        accel_status first_status = ACCEL_OK;
        for (int r = 0; r < ROUNDS; r++) {
            accel_buffer* in = test_alloc(d, 400u << 10);  /* bigger than needed is fine */
            accel_buffer* out = test_alloc(d, 400u << 10);
            REQUIRE_OK(accel_buffer_write(in, 0, tiny->inputs[0].data, tiny->inputs[0].byte_size));
            REQUIRE_OK(accel_run(model, &in, 1, &out, 1, NULL));
            accel_buffer_release(in);
            accel_buffer_release(out);
            accel_memory_stats st;
            memset(&st, 0, sizeof st);
            st.struct_size = sizeof st;
            REQUIRE_OK(accel_device_get_stats(d, &st));
            if (st.live_buffers != 0) live_after++;
            accel_buffer* big = NULL;
            accel_status s = accel_buffer_alloc(d, 900u << 10, &big);
            if (s != ACCEL_OK) {
                if (!oom) first_status = s;
                oom++;
                test_sleep_ms(5); /* let the pool settle before the next round */
            }
            accel_buffer_release(big);
        }
        EXPECT(live_after == 0,
               "in %d of %d rounds, buffers released after accel_run returned were still live "
               "(live_buffers > 0): the finished job still held them",
               live_after, ROUNDS);
        EXPECT(oom == 0,
               "in %d of %d rounds, allocating 900K of a 1M pool right after accel_run returned and its 800K "
               "of buffers were released failed (%s): the finished job still held the buffers",
               oom, ROUNDS, accel_status_name(first_status));
        accel_model_release(model);
        accel_device_release(d);
    }

    /* ---- and so the caller's last release destroys the device at once: it joins the device's threads,
     * rather than one of them tearing the device down later (detaching itself) while the process exits ---- */
    {
        const test_case* tiny = test_manifest_find(&m, "tiny");
        test_sleep_ms(200); /* earlier sections' devices are gone by now */
        const int base = test_thread_count();
        enum { ROUNDS = 50 };
        int late = 0, lingering = 0;
        for (int r = 0; r < ROUNDS; r++) {
            accel_device* d = test_open("emu:cores=2");
            accel_model* model = test_load(d, &m, tiny);
            accel_buffer *in[1], *out[1];
            test_make_io(d, tiny, in, out);
            REQUIRE_OK(accel_run(model, in, 1, out, 1, NULL));
            test_release_io(tiny, in, out);
            accel_model_release(model);
            const int before = detach_count();
            accel_device_release(d);
            if (detach_count() != before) late++;
            uint64_t deadline = test_now_ns() + 2ull * 1000 * 1000 * 1000;
            while (test_thread_count() > base && test_now_ns() < deadline) test_sleep_ms(1);
            if (test_thread_count() > base) lingering++;
        }
        EXPECT(late == 0,
               "in %d of %d rounds releasing the device after accel_run detached a thread: the finished "
               "job's references were dropped later, on a driver thread, which then tore the device down",
               late, ROUNDS);
        EXPECT(lingering == 0,
               "in %d of %d rounds the device's threads were still running 2 s after the device "
               "was released",
               lingering, ROUNDS);
    }

    test_manifest_free(&m);
    return test_finish();
}
