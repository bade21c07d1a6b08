/* inflight: emu:cores=1,max_inflight=16. Callbacks run on one completion thread per device and a job
 * stays in flight until its callback returns, so a first job whose callback blocks (on a condition the
 * test controls) holds its slot and makes every later job wait in line. Then: 16 jobs are accepted, the
 * 17th with ACCEL_SUBMIT_NO_WAIT is ACCEL_ERR_BUSY, and a 17th without the flag (another thread) blocks
 * until the callback is released, then succeeds. Every callback runs exactly once with ACCEL_OK and every
 * result is right. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>

#include "test_util.h"

enum { MAX_INFLIGHT = 16, TOTAL = MAX_INFLIGHT + 1 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int first_entered = 0;   /* job 0's callback is running */
static int first_release = 0;   /* the test lets job 0's callback return */
static int calls[TOTAL];
static accel_status statuses[TOTAL];
static accel_job* seen_jobs[TOTAL];
static int total_calls = 0;

static void callback(accel_job* job, accel_status status, void* user_data) {
    int index = (int)(intptr_t)user_data;
    pthread_mutex_lock(&mu);
    if (index >= 0 && index < TOTAL) {
        calls[index]++;
        statuses[index] = status;
        seen_jobs[index] = job;
    }
    total_calls++;
    if (index == 0) {
        first_entered = 1;
        pthread_cond_broadcast(&cv);
        while (!first_release) pthread_cond_wait(&cv, &mu);
    }
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static accel_run_options options_for(int index, uint32_t flags) {
    accel_run_options o = test_callback_options(callback, (void*)(intptr_t)index);
    o.flags = flags;
    return o;
}

static accel_model* g_model;
static accel_buffer* g_in;
static accel_buffer* g_out[TOTAL];
static accel_job* g_jobs[TOTAL];

typedef struct {
    volatile int returned;
    accel_status status;
    uint64_t returned_ns;
    pthread_mutex_t* mu;
} blocked_submit;

static void* submit_17th(void* arg) {
    blocked_submit* bs = arg;
    accel_run_options o = options_for(MAX_INFLIGHT, 0);
    accel_status s = accel_job_submit(g_model, &g_in, 1, &g_out[MAX_INFLIGHT], 1, &o, &g_jobs[MAX_INFLIGHT]);
    pthread_mutex_lock(&mu);
    bs->status = s;
    bs->returned = 1;
    bs->returned_ns = test_now_ns();
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return NULL;
}

int main(int argc, char** argv) {
    test_name = "inflight";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    const test_case* c = test_manifest_find(&m, "tiny");

    accel_device* d = test_open("emu:cores=1,max_inflight=16");
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    REQUIRE(info.max_inflight == MAX_INFLIGHT, "max_inflight %u", info.max_inflight);
    g_model = test_load(d, &m, c);
    accel_buffer* outs_tmp[1];
    test_make_io(d, c, &g_in, outs_tmp);
    accel_buffer_release(outs_tmp[0]);
    for (int i = 0; i < TOTAL; i++) {
        g_out[i] = test_alloc(d, c->outputs[0].byte_size);
        void* p = NULL;
        REQUIRE_OK(accel_buffer_host_ptr(g_out[i], &p));
        memset(p, 0xFF, (size_t)c->outputs[0].byte_size);
    }

    /* job 0: its callback blocks, holding its in-flight slot */
    accel_run_options o0 = options_for(0, 0);
    REQUIRE_OK(accel_job_submit(g_model, &g_in, 1, &g_out[0], 1, &o0, &g_jobs[0]));
    pthread_mutex_lock(&mu);
    while (!first_entered) pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);

    /* jobs 1..15: accepted (16 in flight in all) */
    for (int i = 1; i < MAX_INFLIGHT; i++) {
        accel_run_options o = options_for(i, ACCEL_SUBMIT_NO_WAIT);
        accel_status s = accel_job_submit(g_model, &g_in, 1, &g_out[i], 1, &o, &g_jobs[i]);
        REQUIRE(s == ACCEL_OK, "job %d of %d was refused with %s (%s)", i + 1, MAX_INFLIGHT, accel_status_name(s),
                accel_last_error_message());
    }
    /* they run (one core, tiny model) but stay in flight: their callbacks wait in line behind job 0's */

    /* the 17th with NO_WAIT: busy, out_job untouched */
    accel_job* busy_job = (accel_job*)(uintptr_t)0x40;
    accel_run_options ob = options_for(-1, ACCEL_SUBMIT_NO_WAIT);
    accel_status s = accel_job_submit(g_model, &g_in, 1, &g_out[MAX_INFLIGHT], 1, &ob, &busy_job);
    EXPECT(s == ACCEL_ERR_BUSY, "the 17th job with ACCEL_SUBMIT_NO_WAIT gave %s, expected ACCEL_ERR_BUSY",
           accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    EXPECT(busy_job == (accel_job*)(uintptr_t)0x40, "out_job changed on ACCEL_ERR_BUSY");
    if (s == ACCEL_OK) accel_job_release(busy_job);
    accel_memory_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    REQUIRE_OK(accel_device_get_stats(d, &st));
    EXPECT(st.jobs_submitted == MAX_INFLIGHT, "jobs_submitted %llu, expected %d (a busy refusal is not a submission)",
           (unsigned long long)st.jobs_submitted, MAX_INFLIGHT);

    /* the 17th without the flag, from another thread: it blocks ... */
    blocked_submit bs;
    memset(&bs, 0, sizeof bs);
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, submit_17th, &bs) == 0, "pthread_create");
    test_sleep_ms(200);
    pthread_mutex_lock(&mu);
    int returned_early = bs.returned;
    pthread_mutex_unlock(&mu);
    EXPECT(!returned_early, "a submission past max_inflight did not block (it returned %s)",
           accel_status_name(bs.status));

    /* ... until the callback returns */
    uint64_t released_ns = test_now_ns();
    pthread_mutex_lock(&mu);
    first_release = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(t, NULL);
    EXPECT(bs.status == ACCEL_OK, "the blocked 17th submission returned %s", accel_status_name(bs.status));
    EXPECT(returned_early || bs.returned_ns >= released_ns, "the 17th submission returned before the slot was freed");

    /* everything completes, once, with ACCEL_OK, and right */
    for (int i = 0; i < TOTAL; i++) {
        if (!g_jobs[i]) continue;
        EXPECT_OK(accel_job_wait(g_jobs[i], -1));
    }
    pthread_mutex_lock(&mu);
    uint64_t deadline = test_now_ns() + 20ull * 1000 * 1000 * 1000;
    while (total_calls < TOTAL && test_now_ns() < deadline) {
        pthread_mutex_unlock(&mu);
        test_sleep_ms(5);
        pthread_mutex_lock(&mu);
    }
    pthread_mutex_unlock(&mu);
    test_sleep_ms(50); /* a duplicate callback would show now */
    pthread_mutex_lock(&mu);
    EXPECT(total_calls == TOTAL, "%d callbacks ran, expected %d", total_calls, TOTAL);
    for (int i = 0; i < TOTAL; i++) {
        EXPECT(calls[i] == 1, "job %d's callback ran %d times", i, calls[i]);
        EXPECT(statuses[i] == ACCEL_OK, "job %d's callback saw %s", i, accel_status_name(statuses[i]));
        EXPECT(seen_jobs[i] == g_jobs[i], "job %d's callback got handle %p, submit returned %p", i, (void*)seen_jobs[i],
               (void*)g_jobs[i]);
    }
    pthread_mutex_unlock(&mu);
    for (int i = 0; i < TOTAL; i++) {
        char what[64];
        snprintf(what, sizeof what, "job %d", i);
        EXPECT(test_compare_output(c, 0, g_out[i], what), "job %d gave a wrong result", i);
    }
    /* jobs_completed counts a job once its callback has returned: wait for the count to settle */
    deadline = test_now_ns() + 10ull * 1000 * 1000 * 1000;
    do {
        REQUIRE_OK(accel_device_get_stats(d, &st));
        if (st.jobs_completed == TOTAL) break;
        test_sleep_ms(5);
    } while (test_now_ns() < deadline);
    EXPECT(st.jobs_submitted == TOTAL && st.jobs_completed == TOTAL, "jobs submitted %llu, completed %llu, expected %d",
           (unsigned long long)st.jobs_submitted, (unsigned long long)st.jobs_completed, TOTAL);

    /* and the slots are free again: 16 more submissions go through (a leaked slot would make one block
     * forever: the ctest TIMEOUT catches that) */
    for (int i = 0; i < TOTAL; i++) accel_job_release(g_jobs[i]);
    for (int round = 0; round < MAX_INFLIGHT; round++) {
        g_jobs[round] = NULL;
        s = accel_job_submit(g_model, &g_in, 1, &g_out[round], 1, NULL, &g_jobs[round]);
        EXPECT(s == ACCEL_OK, "after everything finished, submission %d gave %s", round, accel_status_name(s));
    }
    for (int i = 0; i < MAX_INFLIGHT; i++) {
        if (g_jobs[i]) EXPECT_OK(accel_job_wait(g_jobs[i], -1));
        accel_job_release(g_jobs[i]);
    }

    for (int i = 0; i < TOTAL; i++) accel_buffer_release(g_out[i]);
    accel_buffer_release(g_in);
    accel_model_release(g_model);
    accel_device_release(d);
    test_manifest_free(&m);
    return test_finish();
}
