/* timeout: on one core, a slow job runs; a job with timeout_us=1000 queued behind it times out
 * (accel_job_wait returns ACCEL_ERR_TIMEOUT with a message, its callback sees ACCEL_ERR_TIMEOUT, it never
 * ran). A short wait on the running job returns ACCEL_ERR_NOT_READY; accel_job_poll reports progress. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int cb_calls = 0;
static accel_status cb_status = -1;

static void callback(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    (void)user_data;
    pthread_mutex_lock(&mu);
    cb_calls++;
    cb_status = status;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

/* test_timeout CASES_DIR limits: very long timeouts mean "a long time", never "already expired", "not
 * ready at once" or a hang: accel_job_wait(job, INT64_MAX) on a running job waits for it; a job whose
 * timeout_us is huge runs to completion. A hang is reported after 10 s and the test exits at once (its
 * device may be wedged, so it is not released). */
static void wait_or_die(accel_job* job, const char* what) {
    accel_status s = accel_job_wait(job, 10ll * 1000 * 1000);
    if (s == ACCEL_ERR_NOT_READY) {
        fprintf(stderr, "%s: FAIL: %s: the job did not finish within 10 s (the device hangs or spins)\n", test_name,
                what);
        fflush(stderr);
        _exit(1);
    }
    EXPECT(s == ACCEL_OK, "%s: the job finished with %s (%s)", what, accel_status_name(s),
           s ? accel_last_error_message() : "");
}

static int limits(const test_manifest* m) {
    test_pair p;
    test_pair_open(&p, m, "emu:cores=1", "slow");
    accel_model *ms = p.slow.model, *mt = p.tiny.model;
    accel_buffer **sin = p.slow.in, **sout = p.slow.out, **tin = p.tiny.in, **tout = p.tiny.out;

    /* waits far longer than the job takes: they wait for it */
    static const int64_t waits[] = {INT64_MAX, INT64_MAX / 1000 + 1, 3600ll * 1000 * 1000 * 24 * 365 * 1000};
    for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++) {
        accel_job* a = NULL;
        REQUIRE_OK(accel_job_submit(ms, sin, 1, sout, 1, NULL, &a));
        test_wait_started(a);
        accel_status s = accel_job_wait(a, waits[i]);
        int32_t done = 0;
        accel_job_poll(a, &done);
        EXPECT(s == ACCEL_OK, "accel_job_wait(running job, %lld us) returned %s after the job %s (%s)",
               (long long)waits[i], accel_status_name(s), done ? "finished" : "had not finished",
               s ? accel_last_error_message() : "");
        wait_or_die(a, "after a long wait");
        accel_job_release(a);
    }

    /* huge job timeouts: effectively none */
    static const int64_t timeouts[] = {INT64_MAX, INT64_MAX / 1000 + 5, INT64_MAX / 1000 - 5,
                                       (int64_t)(UINT64_MAX / 1000 / 2), 3600ll * 1000 * 1000 * 24 * 365 * 100};
    for (size_t i = 0; i < sizeof timeouts / sizeof timeouts[0]; i++) {
        accel_run_options o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.timeout_us = timeouts[i];
        accel_job* j = NULL;
        REQUIRE_OK(accel_job_submit(mt, tin, 1, tout, 1, &o, &j));
        char what[96];
        snprintf(what, sizeof what, "a job with timeout_us = %lld", (long long)timeouts[i]);
        wait_or_die(j, what);
        accel_job_release(j);
    }

    test_pair_close(&p);
    return test_finish();
}

int main(int argc, char** argv) {
    test_name = "timeout";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    if (argc > 2 && strcmp(argv[2], "limits") == 0) {
        test_name = "timeout_limits";
        int rc = limits(&m);
        test_manifest_free(&m);
        return rc;
    }
    test_pair p;
    test_pair_open(&p, &m, "emu:cores=1", "slow");
    const test_case *slow = p.slow.c, *tiny = p.tiny.c;
    accel_model *ms = p.slow.model, *mt = p.tiny.model;
    accel_buffer **sin = p.slow.in, **sout = p.slow.out, **tin = p.tiny.in, **tout = p.tiny.out;

    /* how long the slow model takes here (the scheduling assertions below need it to be slow) */
    uint64_t t0 = test_now_ns();
    REQUIRE_OK(accel_run(ms, sin, 1, sout, 1, NULL));
    uint64_t slow_ns = test_now_ns() - t0;
    printf("timeout: the slow model runs in %.1f ms\n", slow_ns / 1e6);
    REQUIRE(test_compare_output(slow, 0, sout[0], "slow"), "the slow model gave a wrong result");
    REQUIRE(slow_ns >= 5 * 1000 * 1000, "the slow model runs in %.2f ms: too fast to hold a core for this test",
            slow_ns / 1e6);

    /* A: the slow job, running */
    accel_job* a = NULL;
    REQUIRE_OK(accel_job_submit(ms, sin, 1, sout, 1, NULL, &a));
    test_wait_started(a);
    int32_t done = 7;
    EXPECT_OK(accel_job_poll(a, &done));
    EXPECT(done == 0, "accel_job_poll says a running job is done (%d)", done);
    accel_status s = accel_job_wait(a, 1000);
    EXPECT(s == ACCEL_ERR_NOT_READY, "a 1 ms wait on a running job gave %s", accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    s = accel_job_wait(a, 0);
    EXPECT(s == ACCEL_ERR_NOT_READY, "a 0 us wait (poll) on a running job gave %s", accel_status_name(s));

    /* B: queued behind A with a 1 ms timeout */
    accel_run_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.timeout_us = 1000;
    o.callback = callback;
    accel_job* b = NULL;
    uint64_t b_submit = test_now_ns();
    REQUIRE_OK(accel_job_submit(mt, tin, 1, tout, 1, &o, &b));
    s = accel_job_wait(b, -1);
    uint64_t b_waited = test_now_ns() - b_submit;
    EXPECT(s == ACCEL_ERR_TIMEOUT, "a job queued past its timeout finished with %s", accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    EXPECT(b_waited >= 1000 * 1000, "the timed-out job finished %.3f ms after submission, before its 1 ms timeout",
           b_waited / 1e6);
    accel_job_timing ta_now = test_timing(a);
    accel_job_timing tb = test_timing(b);
    EXPECT(tb.finished_ns != 0, "the timed-out job has no finished_ns");
    EXPECT(tb.started_ns == 0, "the timed-out job has started_ns %llu, but it never ran",
           (unsigned long long)tb.started_ns);
    EXPECT(tb.core == -1, "the timed-out job has core %d, but it never ran", tb.core);
    EXPECT(tb.finished_ns >= tb.queued_ns + 1000 * 1000, "the timed-out job finished %.3f ms after it was queued",
           (tb.finished_ns - tb.queued_ns) / 1e6);
    if (ta_now.finished_ns != 0 && ta_now.finished_ns < tb.finished_ns)
        printf("timeout: note: the slow job finished before the queued job's timeout was handled (loaded machine?)\n");
    /* waiting again gives the same result; poll says done */
    EXPECT_STATUS(accel_job_wait(b, 0), ACCEL_ERR_TIMEOUT);
    EXPECT_STATUS(accel_job_wait(b, -1), ACCEL_ERR_TIMEOUT);
    done = 0;
    EXPECT_OK(accel_job_poll(b, &done));
    EXPECT(done == 1, "accel_job_poll says a timed-out job is not done");
    pthread_mutex_lock(&mu);
    while (cb_calls == 0) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);

    /* A finishes fine */
    EXPECT_OK(accel_job_wait(a, -1));
    done = 0;
    EXPECT_OK(accel_job_poll(a, &done));
    EXPECT(done == 1, "accel_job_poll says a finished job is not done");
    EXPECT_OK(accel_job_wait(a, 0));
    EXPECT(test_compare_output(slow, 0, sout[0], "slow job A"), "job A gave a wrong result");

    test_sleep_ms(50);
    pthread_mutex_lock(&mu);
    EXPECT(cb_calls == 1, "the timed-out job's callback ran %d times", cb_calls);
    EXPECT(cb_status == ACCEL_ERR_TIMEOUT, "the timed-out job's callback saw %s", accel_status_name(cb_status));
    pthread_mutex_unlock(&mu);

    /* A queued job's timeout fires on time even when a later deadline was armed first: the completion
     * thread, asleep until L's 60 s deadline, must be woken for B2's 1 ms one. Three slow jobs ahead
     * keep the core busy for well over that. */
    {
        accel_job* ahead[3];
        for (int k = 0; k < 3; k++) REQUIRE_OK(accel_job_submit(ms, sin, 1, sout, 1, NULL, &ahead[k]));
        accel_run_options lo;
        memset(&lo, 0, sizeof lo);
        lo.struct_size = sizeof lo;
        lo.timeout_us = 60ll * 1000 * 1000;
        accel_job* l = NULL;
        REQUIRE_OK(accel_job_submit(mt, tin, 1, tout, 1, &lo, &l));
        test_sleep_ms(2); /* the completion thread arms L's deadline and sleeps */
        accel_run_options bo = lo;
        bo.timeout_us = 1000;
        accel_job* b2 = NULL;
        REQUIRE_OK(accel_job_submit(mt, tin, 1, tout, 1, &bo, &b2));
        EXPECT_STATUS(accel_job_wait(b2, -1), ACCEL_ERR_TIMEOUT);
        accel_job_timing tb2 = test_timing(b2);
        accel_job_timing last = test_timing(ahead[2]);
        EXPECT(last.finished_ns == 0 || tb2.finished_ns < last.finished_ns,
               "a queued job's 1 ms timeout was handled only when the %.1f ms of slow jobs ahead of it had run: "
               "a later deadline armed first hid it",
               3 * slow_ns / 1e6);
        for (int k = 0; k < 3; k++) {
            EXPECT_OK(accel_job_wait(ahead[k], -1));
            accel_job_release(ahead[k]);
        }
        EXPECT_OK(accel_job_wait(l, -1));
        accel_job_release(l);
        accel_job_release(b2);
    }

    /* a generous timeout does not fire */
    o.timeout_us = 60ll * 1000 * 1000;
    o.callback = NULL;
    accel_job* c = NULL;
    REQUIRE_OK(accel_job_submit(mt, tin, 1, tout, 1, &o, &c));
    EXPECT_OK(accel_job_wait(c, -1));
    EXPECT(test_compare_output(tiny, 0, tout[0], "tiny with a timeout"), "wrong result");
    /* a negative timeout means none */
    o.timeout_us = -5;
    accel_job* e = NULL;
    REQUIRE_OK(accel_job_submit(mt, tin, 1, tout, 1, &o, &e));
    EXPECT_OK(accel_job_wait(e, -1));

    /* a job that starts at once but cannot finish within its timeout: ACCEL_ERR_TIMEOUT too ("a job did
     * not finish within its own timeout"), after it started. The run time is the fastest of 3 runs. */
    for (int k = 0; k < 2; k++) {
        uint64_t t1 = test_now_ns();
        REQUIRE_OK(accel_run(ms, sin, 1, sout, 1, NULL));
        uint64_t dt = test_now_ns() - t1;
        if (dt < slow_ns) slow_ns = dt;
    }
    /* timeouts from far below the run time to just below it: whatever the job does, "ACCEL_OK" means it
     * finished within its timeout (1 ms of slack for the bookkeeping after the last check) */
    static const double fractions[] = {0.125, 0.5, 0.8, 0.9};
    for (size_t k = 0; k < sizeof fractions / sizeof fractions[0]; k++) {
        o.timeout_us = (int64_t)(slow_ns * fractions[k] / 1000);
        if (o.timeout_us < 500) o.timeout_us = 500;
        accel_job* r = NULL;
        REQUIRE_OK(accel_job_submit(ms, sin, 1, sout, 1, &o, &r));
        s = accel_job_wait(r, -1);
        accel_job_timing tr = test_timing(r);
        double elapsed_ms = (tr.finished_ns - tr.queued_ns) / 1e6, timeout_ms = o.timeout_us / 1e3;
        if (s == ACCEL_OK)
            EXPECT(elapsed_ms <= timeout_ms + 1.0,
                   "a job with a %.2f ms timeout reported ACCEL_OK but finished %.2f ms after submission", timeout_ms,
                   elapsed_ms);
        if (fractions[k] <= 0.125) {
            EXPECT(s == ACCEL_ERR_TIMEOUT,
                   "a %.1f ms job with a %.2f ms timeout finished with %s, expected "
                   "ACCEL_ERR_TIMEOUT",
                   slow_ns / 1e6, timeout_ms, accel_status_name(s));
            EXPECT(tr.started_ns != 0 && tr.core == 0, "the job that ran past its timeout has started_ns %llu, core %d",
                   (unsigned long long)tr.started_ns, tr.core);
        }
        if (s != ACCEL_OK) {
            EXPECT(s == ACCEL_ERR_TIMEOUT, "a job with a timeout finished with %s", accel_status_name(s));
            EXPECT_ERROR_REPORTED(s);
        }
        accel_job_release(r);
    }
    /* the device is fine afterwards */
    EXPECT_OK(accel_run(ms, sin, 1, sout, 1, NULL));
    EXPECT(test_compare_output(slow, 0, sout[0], "slow after a timeout"), "wrong result after a timed-out run");

    accel_job_release(a);
    accel_job_release(b);
    accel_job_release(c);
    accel_job_release(e);
    test_pair_close(&p);
    test_manifest_free(&m);
    return test_finish();
}
