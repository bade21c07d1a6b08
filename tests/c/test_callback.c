/* callback: called exactly once with the job, its status and user_data, on a thread other than the
 * submitter's; it may call accel_* functions; fire and forget (out_job NULL with a callback) works;
 * out_job NULL without a callback is ACCEL_ERR_INVALID_ARGUMENT. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>

#include "test_util.h"

/* The shared record (test_util.h) and what this callback reads inside the call. */
typedef struct record {
    test_record base; /* first: the callback's user_data is the record */
    accel_status timing_status;
    accel_job_timing timing;
    accel_status read_status;
    float out[64];
    accel_buffer* out_buffer;
    uint64_t out_bytes;
    int retain; /* the callback retains the job ("retain it to keep it longer") */
} record;

static void record_init(record* r) {
    memset(r, 0, sizeof *r);
    test_record_init(&r->base);
}

static void callback(accel_job* job, accel_status status, void* user_data) {
    record* r = user_data;
    /* the job handle is valid during the call, and any accel_* function may be called */
    accel_job_timing t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    r->timing_status = accel_job_get_timing(job, &t);
    r->timing = t;
    r->read_status = r->out_buffer ? accel_buffer_read(r->out_buffer, 0, r->out, r->out_bytes) : ACCEL_OK;
    if (r->retain) accel_job_retain(job);
    test_record_note(&r->base, job, status, user_data);
}

/* A chain: each callback submits the next job (fire and forget) until `remaining` reaches 0. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    accel_model* model;
    accel_buffer* in;
    accel_buffer* out;
    int remaining, calls, errors, done;
    accel_status first_error;
} chain;

static void chain_callback(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    (void)user_data;
    pthread_mutex_lock(&chain.mu);
    chain.calls++;
    if (status != ACCEL_OK && !chain.errors++) chain.first_error = status;
    int more = chain.remaining-- > 0;
    pthread_mutex_unlock(&chain.mu);
    accel_status s = ACCEL_OK;
    if (more) {
        accel_run_options o = test_callback_options(chain_callback, NULL);
        s = accel_job_submit(chain.model, &chain.in, 1, &chain.out, 1, &o, NULL);
    }
    pthread_mutex_lock(&chain.mu);
    if (s != ACCEL_OK && !chain.errors++) chain.first_error = s;
    if (!more || s != ACCEL_OK) chain.done = 1;
    pthread_mutex_unlock(&chain.mu);
}

int main(int argc, char** argv) {
    test_name = "callback";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    const test_case* c = test_manifest_find(&m, "tiny");
    REQUIRE(c->outputs[0].byte_size <= sizeof(((record*)0)->out), "tiny's output is too big for this test");

    test_setup s;
    test_setup_open(&s, &m, "emu:cores=2", c);
    accel_device* d = s.device;
    accel_model* model = s.model;
    accel_buffer **in = s.in, **out = s.out;
    pthread_t self = pthread_self();

    /* ---- with a handle ---- */
    record r;
    record_init(&r);
    r.out_buffer = out[0];
    r.out_bytes = c->outputs[0].byte_size;
    accel_run_options o = test_callback_options(callback, &r);
    accel_job* job = NULL;
    REQUIRE_OK(accel_job_submit(model, in, 1, out, 1, &o, &job));
    EXPECT_OK(accel_job_wait(job, -1));
    test_record_wait(&r.base);
    test_sleep_ms(50); /* a second call would show now */
    pthread_mutex_lock(&r.base.mu);
    EXPECT(r.base.calls == 1, "the callback ran %d times", r.base.calls);
    EXPECT(r.base.job == job, "the callback got job %p, submit returned %p", (void*)r.base.job, (void*)job);
    EXPECT(r.base.status == ACCEL_OK, "the callback got status %s", accel_status_name(r.base.status));
    EXPECT(r.base.user_data == &r, "the callback got user_data %p, expected %p", r.base.user_data, (void*)&r);
    EXPECT(!pthread_equal(r.base.thread, self), "the callback ran on the submitting thread");
    EXPECT(r.timing_status == ACCEL_OK, "accel_job_get_timing inside the callback gave %s",
           accel_status_name(r.timing_status));
    EXPECT(r.timing.finished_ns != 0, "inside the callback the job has no finished_ns");
    EXPECT(r.read_status == ACCEL_OK, "accel_buffer_read inside the callback gave %s",
           accel_status_name(r.read_status));
    EXPECT(test_compare_floats(r.out, (const float*)c->outputs[0].data, (size_t)(c->outputs[0].byte_size / 4),
                               "output read inside the callback"),
           "the output read inside the callback is wrong: the callback ran before the output was written");
    pthread_mutex_unlock(&r.base.mu);
    accel_job_release(job);

    test_sleep_ms(20);
    EXPECT(r.base.calls == 1, "releasing the job called the callback again");

    /* ---- fire and forget ---- */
    accel_memory_stats st0;
    memset(&st0, 0, sizeof st0);
    st0.struct_size = sizeof st0;
    REQUIRE_OK(accel_device_get_stats(d, &st0));
    record f;
    record_init(&f);
    void* p = NULL;
    REQUIRE_OK(accel_buffer_host_ptr(out[0], &p));
    memset(p, 0xFF, (size_t)c->outputs[0].byte_size);
    f.out_buffer = out[0];
    f.out_bytes = c->outputs[0].byte_size;
    f.retain = 1;
    o.user_data = &f;
    REQUIRE_OK(accel_job_submit(model, in, 1, out, 1, &o, NULL));
    test_record_wait(&f.base);
    test_sleep_ms(50);
    pthread_mutex_lock(&f.base.mu);
    EXPECT(f.base.calls == 1, "the fire-and-forget callback ran %d times", f.base.calls);
    EXPECT(f.base.status == ACCEL_OK, "the fire-and-forget callback got %s", accel_status_name(f.base.status));
    EXPECT(f.base.job != NULL, "the fire-and-forget callback got a NULL job");
    EXPECT(!pthread_equal(f.base.thread, self), "the fire-and-forget callback ran on the submitting thread");
    EXPECT(f.timing_status == ACCEL_OK, "accel_job_get_timing inside the fire-and-forget callback gave %s",
           accel_status_name(f.timing_status));
    EXPECT(test_compare_floats(f.out, (const float*)c->outputs[0].data, (size_t)(c->outputs[0].byte_size / 4),
                               "fire-and-forget output"),
           "the fire-and-forget job's output is wrong");
    pthread_mutex_unlock(&f.base.mu);
    EXPECT(test_compare_output(c, 0, out[0], "fire-and-forget output after the callback"), "wrong output");
    /* the callback retained the fire-and-forget job: the handle outlives the callback */
    if (f.base.job) {
        test_sleep_ms(20);
        EXPECT_OK(accel_job_wait(f.base.job, 0));
        int32_t done = 0;
        EXPECT_OK(accel_job_poll(f.base.job, &done));
        EXPECT(done == 1, "a finished fire-and-forget job polls as not done");
        accel_job_timing t = test_timing(f.base.job);
        EXPECT(t.finished_ns >= t.started_ns && t.started_ns >= t.queued_ns && t.queued_ns != 0,
               "fire-and-forget timing out of order");
        accel_job_release(f.base.job);
    }

    /* ---- out_job NULL without a callback: refused, nothing submitted ---- */
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    EXPECT_STATUS(accel_job_submit(model, in, 1, out, 1, &o, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_submit(model, in, 1, out, 1, NULL, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    /* a callback set in a struct whose struct_size does not reach it does not count */
    accel_run_options small;
    memset(&small, 0, sizeof small);
    small.struct_size = (uint32_t)offsetof(accel_run_options, callback);
    small.callback = callback;
    small.user_data = &f;
    EXPECT_STATUS(accel_job_submit(model, in, 1, out, 1, &small, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    /* jobs_completed counts the fire-and-forget job once its callback has returned */
    accel_memory_stats st1;
    memset(&st1, 0, sizeof st1);
    st1.struct_size = sizeof st1;
    uint64_t deadline = test_now_ns() + 10ull * 1000 * 1000 * 1000;
    do {
        REQUIRE_OK(accel_device_get_stats(d, &st1));
        if (st1.jobs_completed == st0.jobs_completed + 1) break;
        test_sleep_ms(5);
    } while (test_now_ns() < deadline);
    EXPECT(st1.jobs_submitted == st0.jobs_submitted + 1, "jobs_submitted moved by %llu, expected 1 (refusals count?)",
           (unsigned long long)(st1.jobs_submitted - st0.jobs_submitted));
    EXPECT(st1.jobs_completed == st0.jobs_completed + 1, "jobs_completed moved by %llu, expected 1",
           (unsigned long long)(st1.jobs_completed - st0.jobs_completed));
    pthread_mutex_lock(&f.base.mu);
    EXPECT(f.base.calls == 1, "a refused submission called a callback");
    pthread_mutex_unlock(&f.base.mu);

    /* ---- a struct_size that does not reach `callback`: the callback field is not read ---- */
    {
        record ignored;
        record_init(&ignored);
        accel_run_options old_opts;
        memset(&old_opts, 0, sizeof old_opts);
        old_opts.struct_size = (uint32_t)offsetof(accel_run_options, callback);
        old_opts.callback = callback; /* beyond struct_size: must be ignored */
        old_opts.user_data = &ignored;
        accel_job* j = NULL;
        REQUIRE_OK(accel_job_submit(model, in, 1, out, 1, &old_opts, &j));
        EXPECT_OK(accel_job_wait(j, -1));
        accel_job_release(j);
        test_sleep_ms(50);
        EXPECT(ignored.base.calls == 0, "a callback beyond options->struct_size was called %d times",
               ignored.base.calls);
    }

    /* ---- callbacks may submit: a chain of 20 jobs, each submitted from the previous one's callback ---- */
    {
        chain.model = model;
        chain.in = in[0];
        chain.out = out[0];
        chain.remaining = 20;
        pthread_mutex_init(&chain.mu, NULL);
        pthread_cond_init(&chain.cv, NULL);
        accel_run_options co = test_callback_options(chain_callback, NULL);
        REQUIRE_OK(accel_job_submit(model, in, 1, out, 1, &co, NULL));
        uint64_t deadline = test_now_ns() + 20ull * 1000 * 1000 * 1000;
        pthread_mutex_lock(&chain.mu);
        while (!chain.done && test_now_ns() < deadline) {
            pthread_mutex_unlock(&chain.mu);
            test_sleep_ms(2);
            pthread_mutex_lock(&chain.mu);
        }
        EXPECT(chain.done, "a chain of submissions from callbacks did not finish");
        EXPECT(chain.errors == 0, "%d callbacks of the chain saw an error or failed to submit (first: %s)",
               chain.errors, accel_status_name(chain.first_error));
        EXPECT(chain.calls == 21, "the chain ran %d callbacks, expected 21", chain.calls);
        pthread_mutex_unlock(&chain.mu);
    }

    /* ---- many fire-and-forget jobs, then release everything at once: each callback once ---- */
    enum { MANY = 40 };
    static record many[MANY];
    for (int i = 0; i < MANY; i++) {
        record_init(&many[i]);
        o = test_callback_options(callback, &many[i]);
        /* Jobs run on two cores at once: each writes a buffer of its own, which it alone keeps alive. */
        accel_buffer* own_out = NULL;
        REQUIRE_OK(accel_buffer_alloc(d, c->outputs[0].byte_size, &own_out));
        REQUIRE_OK(accel_job_submit(model, in, 1, &own_out, 1, &o, NULL));
        accel_buffer_release(own_out);
    }
    test_setup_close(&s); /* the jobs keep what they need alive */
    for (int i = 0; i < MANY; i++) {
        test_record_wait(&many[i].base);
    }
    test_sleep_ms(50);
    for (int i = 0; i < MANY; i++) {
        EXPECT(many[i].base.calls == 1 && many[i].base.status == ACCEL_OK,
               "fire-and-forget job %d: %d calls, status %s", i, many[i].base.calls,
               accel_status_name(many[i].base.status));
    }
    test_manifest_free(&m);
    return test_finish();
}
