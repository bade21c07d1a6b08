/* cancel: on one core, slow job A runs and job B waits behind it with a callback; releasing B's handle
 * cancels it (its callback sees ACCEL_ERR_CANCELLED and its output is never written); A completes OK;
 * jobs_completed counts both. Releasing a job that already finished calls nothing again. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>

#include "test_util.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int calls[3];
static accel_status statuses[3];

static void callback(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    int i = (int)(intptr_t)user_data;
    pthread_mutex_lock(&mu);
    calls[i]++;
    statuses[i] = status;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static accel_memory_stats stats_of(accel_device* d) {
    accel_memory_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    REQUIRE_OK(accel_device_get_stats(d, &s));
    return s;
}

int main(int argc, char** argv) {
    test_name = "cancel";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    test_pair p;
    test_pair_open(&p, &m, "emu:cores=1", "slow");
    const test_case *slow = p.slow.c, *tiny = p.tiny.c;
    accel_device* d = p.device;
    accel_model *ms = p.slow.model, *mt = p.tiny.model;
    accel_buffer **sin = p.slow.in, **sout = p.slow.out, **tin = p.tiny.in, **tout = p.tiny.out;
    const accel_memory_stats s0 = stats_of(d);

    accel_run_options oa;
    memset(&oa, 0, sizeof oa);
    oa.struct_size = sizeof oa;
    oa.callback = callback;
    oa.user_data = (void*)(intptr_t)0;
    accel_job* a = NULL;
    REQUIRE_OK(accel_job_submit(ms, sin, 1, sout, 1, &oa, &a));
    test_wait_started(a);

    accel_run_options ob = oa;
    ob.user_data = (void*)(intptr_t)1;
    accel_job* b = NULL;
    REQUIRE_OK(accel_job_submit(mt, tin, 1, tout, 1, &ob, &b));
    accel_job_release(b); /* B has not started: A holds the only core */
    accel_job_timing ta = test_timing(a);
    int a_finished_at_cancel = ta.finished_ns != 0;

    pthread_mutex_lock(&mu);
    while (calls[1] == 0) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    EXPECT(!a_finished_at_cancel, "the slow job had finished before B was released: B was not queued");
    pthread_mutex_lock(&mu);
    EXPECT(statuses[1] == ACCEL_ERR_CANCELLED,
           "the released queued job's callback saw %s, expected ACCEL_ERR_CANCELLED", accel_status_name(statuses[1]));
    pthread_mutex_unlock(&mu);

    EXPECT_OK(accel_job_wait(a, -1));
    EXPECT(test_compare_output(slow, 0, sout[0], "slow job A"), "job A gave a wrong result");
    /* B never ran: its output still holds the 0xFF pattern */
    unsigned char* bytes = NULL;
    REQUIRE_OK(accel_buffer_host_ptr(tout[0], (void**)&bytes));
    int untouched = 1;
    for (uint64_t i = 0; i < tiny->outputs[0].byte_size; i++) untouched &= bytes[i] == 0xFF;
    EXPECT(untouched, "the cancelled job wrote its output");

    pthread_mutex_lock(&mu);
    while (calls[0] == 0) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    accel_memory_stats s1;
    uint64_t deadline = test_now_ns() + 10ull * 1000 * 1000 * 1000;
    do {
        s1 = stats_of(d);
        if (s1.jobs_completed >= s0.jobs_completed + 2) break;
        test_sleep_ms(5);
    } while (test_now_ns() < deadline);
    EXPECT(s1.jobs_submitted == s0.jobs_submitted + 2, "jobs_submitted moved by %llu, expected 2",
           (unsigned long long)(s1.jobs_submitted - s0.jobs_submitted));
    EXPECT(s1.jobs_completed == s0.jobs_completed + 2, "jobs_completed moved by %llu, expected 2 (ok + cancelled)",
           (unsigned long long)(s1.jobs_completed - s0.jobs_completed));

    /* releasing a finished job calls nothing again */
    accel_job_release(a);
    test_sleep_ms(50);
    pthread_mutex_lock(&mu);
    EXPECT(calls[0] == 1 && statuses[0] == ACCEL_OK, "job A: %d callback(s), status %s", calls[0],
           accel_status_name(statuses[0]));
    EXPECT(calls[1] == 1, "job B: %d callback(s)", calls[1]);
    pthread_mutex_unlock(&mu);

    /* a cancelled job whose handle was retained twice is cancelled only when the last user reference goes */
    accel_job* a2 = NULL;
    REQUIRE_OK(accel_job_submit(ms, sin, 1, sout, 1, NULL, &a2));
    test_wait_started(a2);
    accel_run_options oc = oa;
    oc.user_data = (void*)(intptr_t)2;
    accel_job* c = NULL;
    REQUIRE_OK(accel_job_submit(mt, tin, 1, tout, 1, &oc, &c));
    accel_job_retain(c);
    accel_job_release(c); /* one reference left: not cancelled */
    EXPECT_OK(accel_job_wait(c, -1));
    EXPECT(test_compare_output(tiny, 0, tout[0], "job C"), "job C gave a wrong result");
    accel_job_release(c);
    EXPECT_OK(accel_job_wait(a2, -1));
    accel_job_release(a2);
    pthread_mutex_lock(&mu);
    while (calls[2] == 0) pthread_cond_wait(&cv, &mu);
    EXPECT(statuses[2] == ACCEL_OK, "job C (still referenced) saw %s", accel_status_name(statuses[2]));
    pthread_mutex_unlock(&mu);

    test_pair_close(&p);
    test_manifest_free(&m);
    return test_finish();
}
