/* runcore: the Python front-ends' run core (python/native/accel_runcore.h) from C, on the emulator:
 * on the main thread a run that outlasts a slice answers SLICE_OVER and completes under its token,
 * runs nest by token, an abandoned run not started is cancelled, elsewhere a run blocks once; waits
 * keep their deadline; a job with a callback reaches the hook once with its result, counted as
 * pending until the hook returned; the exit drain refuses new jobs and closes the door, and a hook
 * that never returns costs it a few bounded waits, never more. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "runcore_internal.h" /* the drain's waits, to check the counts between two steps */
#include "test_util.h"

static atomic_int hook_calls;
static atomic_int hook_status = -100;
static atomic_llong hook_finished_ns;
static atomic_int hook_message_empty;

static atomic_int hook_blocks;  /* set: the hook waits until it is cleared (a callback that does not return) */
static atomic_int hook_blocked; /* set by a hook that waits */
static atomic_int release_jobs_calls, last_step_calls;

static void count_release_jobs(void) { atomic_fetch_add(&release_jobs_calls, 1); }
static void count_last_step(int64_t limit_us) {
    EXPECT(limit_us == ACCEL_RUNCORE_HOOKS_US, "last_step's bound: %lld", (long long)limit_us);
    atomic_fetch_add(&last_step_calls, 1);
}

static void hook(void* user_data, accel_status status, const accel_job_timing* timing, const char* message) {
    if (atomic_load(&hook_blocks)) {
        atomic_store(&hook_blocked, 1);
        while (atomic_load(&hook_blocks)) test_sleep_ms(1);
    }
    EXPECT(user_data == (void*)&hook_calls, "the hook got user_data %p", user_data);
    atomic_store(&hook_status, status);
    atomic_store(&hook_finished_ns, (long long)timing->finished_ns);
    atomic_store(&hook_message_empty, message[0] == '\0');
    atomic_fetch_add(&hook_calls, 1);
}

/* Completes a run started under `token`, counting the slices it took. */
static accel_status complete(accel_status status, uint64_t token, int* slices) {
    while (status == ACCEL_RUNCORE_SLICE_OVER) {
        ++*slices;
        status = accel_runcore_finish(token);
    }
    return status;
}

typedef struct off_main {
    accel_model* model;
    accel_buffer **in, **out;
    accel_status status;
} off_main;

static void* run_off_main(void* arg) {
    off_main* r = (off_main*)arg;
    r->status = accel_runcore_run(r->model, r->in, 1, r->out, 1, 0, 0, 0, NULL, NULL, 99);
    return NULL;
}

int main(int argc, char** argv) {
    test_name = "runcore";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    const test_case* slow = test_manifest_find(&m, "slower");
    const test_case* tiny = test_manifest_find(&m, "tiny");
    accel_device* d = test_open("emu:cores=1");
    accel_model* ms = test_load(d, &m, slow);
    accel_model* mt = test_load(d, &m, tiny);
    accel_buffer *sin[1], *sout[1], *sout2[1], *tin[1], *tout[1];
    test_make_io(d, slow, sin, sout);
    sout2[0] = test_alloc(d, slow->outputs[0].byte_size);
    test_make_io(d, tiny, tin, tout);
    accel_runcore_set_main_thread((uint64_t)(uintptr_t)pthread_self());
    accel_runcore_set_completion_hook(hook);

    /* a slow run on the main thread comes back every slice, then ends with its result and timing */
    accel_job_timing timing;
    memset(&timing, 0, sizeof timing);
    int slices = 0;
    accel_status s = complete(accel_runcore_run(ms, sin, 1, sout, 1, 0, 0, 0, &timing, NULL, 1), 1, &slices);
    EXPECT_OK(s);
    EXPECT(slices >= 1, "a slow run on the main thread never came back before it ended");
    EXPECT(timing.started_ns != 0 && timing.finished_ns >= timing.started_ns, "the run's timing is not filled");
    EXPECT(test_compare_output(slow, 0, sout[0], "slow run"), "the slow run's output differs");
    EXPECT_STATUS(accel_runcore_finish(1), ACCEL_ERR_INTERNAL); /* over: its token is unknown now */

    /* two runs pending at once (one core: the second waits behind the first), told apart by token;
     * a third, abandoned before it started, is cancelled and frees its slot */
    slices = 0;
    s = accel_runcore_run(ms, sin, 1, sout, 1, 0, 0, 0, NULL, NULL, 2);
    EXPECT_STATUS(s, ACCEL_RUNCORE_SLICE_OVER);
    accel_status s3 = accel_runcore_run(ms, sin, 1, sout2, 1, 0, 0, 0, NULL, NULL, 3);
    EXPECT_STATUS(s3, ACCEL_RUNCORE_SLICE_OVER);
    accel_runcore_abandon(3);
    EXPECT_STATUS(accel_runcore_finish(3), ACCEL_ERR_INTERNAL);
    EXPECT_OK(complete(accel_runcore_run(mt, tin, 1, tout, 1, 0, 0, 0, NULL, NULL, 4), 4, &slices));
    EXPECT(test_compare_output(tiny, 0, tout[0], "nested tiny run"), "the nested run's output differs");
    EXPECT_OK(complete(s, 2, &slices));

    /* off the main thread a run blocks until it ends (no SLICE_OVER) */
    off_main r = {ms, sin, sout, -100};
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, run_off_main, &r) == 0, "pthread_create");
    pthread_join(t, NULL);
    EXPECT_OK(r.status);

    /* a submitted job: the hook once with its result; counted as pending until the hook returned;
     * its wait keeps the deadline (a short one passes first, FOREVER comes back every slice) */
    accel_job* job = NULL;
    s = accel_runcore_submit(ms, sin, 1, sout, 1, 0, 0, 0, 0, &hook_calls, &job);
    REQUIRE_OK(s);
    EXPECT(accel_runcore_callbacks_pending() == 1, "callbacks pending: %lld",
           (long long)accel_runcore_callbacks_pending());
    EXPECT_STATUS(accel_runcore_wait(job, accel_runcore_deadline(0.001)), ACCEL_ERR_NOT_READY);
    slices = 0;
    s = accel_runcore_wait(job, ACCEL_RUNCORE_FOREVER);
    while (s == ACCEL_RUNCORE_SLICE_OVER) {
        slices++;
        s = accel_runcore_wait(job, ACCEL_RUNCORE_FOREVER);
    }
    EXPECT_OK(s);
    EXPECT(slices >= 1, "an untimed wait on the main thread never came back before the job ended");
    accel_job_release(job);
    EXPECT(runcore_wait_device_idle(5000000), "a job still in flight 5 s after it ended");
    EXPECT(atomic_load(&hook_calls) == 1 && atomic_load(&hook_status) == ACCEL_OK && atomic_load(&hook_message_empty),
           "hook: %d calls, status %d", atomic_load(&hook_calls), atomic_load(&hook_status));
    EXPECT(atomic_load(&hook_finished_ns) != 0, "the hook's timing has no finish time");
    EXPECT(accel_runcore_callbacks_pending() == 0, "callbacks pending after the hook: %lld",
           (long long)accel_runcore_callbacks_pending());
    /* the submit flag reaches the job: it records its node times */
    job = NULL;
    REQUIRE_OK(accel_runcore_submit(mt, tin, 1, tout, 1, 0, 0, 0, ACCEL_SUBMIT_PROFILE_NODES, &hook_calls, &job));
    s = accel_runcore_wait(job, ACCEL_RUNCORE_FOREVER);
    while (s == ACCEL_RUNCORE_SLICE_OVER) s = accel_runcore_wait(job, ACCEL_RUNCORE_FOREVER);
    EXPECT_OK(s);
    size_t nodes = 0;
    accel_node_time node_time;
    EXPECT_OK(accel_job_get_node_times(job, &node_time, 1, &nodes));
    EXPECT(nodes == 1 && node_time.started_ns && node_time.started_ns <= node_time.finished_ns,
           "the tiny model's node times: %zu nodes", nodes);
    accel_job_release(job);
    EXPECT(runcore_wait_device_idle(5000000), "a profiled job still in flight 5 s after it ended");
    EXPECT(accel_runcore_deadline(0) <= accel_runcore_deadline(1e-6), "deadlines go backwards");
    EXPECT(accel_runcore_deadline(1e9) == ACCEL_RUNCORE_FOREVER, "1e9 s is not forever");

    /* the exit drain: a hook that never returns (here: until the drain is over), with a job whose
     * completion waits behind it on the device's one completion thread, costs the drain three of its
     * waits for hooks: one for the jobs (none ends while the hook runs), one more after the binding
     * released its jobs, one for the hook; new jobs are refused, nothing submitted; the door closes;
     * the binding's steps run */
    atomic_store(&hook_blocks, 1);
    job = NULL;
    REQUIRE_OK(accel_runcore_submit(mt, tin, 1, tout, 1, 0, 0, 0, 0, &hook_calls, &job));
    while (!atomic_load(&hook_blocked)) test_sleep_ms(1);
    accel_job* behind = NULL;
    REQUIRE_OK(accel_runcore_submit(mt, tin, 1, tout, 1, 0, 0, 0, 0, &hook_calls, &behind));
    EXPECT(accel_runcore_door_open(), "the door closed before the drain closed it");
    accel_runcore_exit_steps steps = {count_release_jobs, count_last_step};
    const int64_t drain_start = runcore_now_us();
    EXPECT(accel_runcore_exit_drain(&steps) == 0, "the drain says a hook that never returned ended");
    const int64_t drain_us = runcore_now_us() - drain_start;
    EXPECT(drain_us >= 3 * ACCEL_RUNCORE_HOOKS_US && drain_us < 3 * ACCEL_RUNCORE_HOOKS_US + 2000000,
           "the drain took %lld us with a hook that never returns", (long long)drain_us);
    EXPECT(atomic_load(&release_jobs_calls) == 1 && atomic_load(&last_step_calls) == 1,
           "steps: release_jobs %d, last_step %d", atomic_load(&release_jobs_calls), atomic_load(&last_step_calls));
    EXPECT_STATUS(accel_runcore_run(mt, tin, 1, tout, 1, 0, 0, 0, NULL, NULL, 5), ACCEL_RUNCORE_REFUSED);
    accel_job* refused = NULL;
    EXPECT_STATUS(accel_runcore_submit(mt, tin, 1, tout, 1, 0, 0, 0, 0, &hook_calls, &refused), ACCEL_RUNCORE_REFUSED);
    EXPECT(refused == NULL, "a refused submission set its job");
    EXPECT(!accel_runcore_door_open(), "the door did not close");
    atomic_store(&hook_blocks, 0); /* the hook returns: the counts come back to zero */
    EXPECT(runcore_wait_device_idle(5000000) && runcore_wait_hooks_done(5000000), "jobs in flight after the drain");
    EXPECT(accel_runcore_callbacks_pending() == 0, "callbacks pending after the hook returned");
    accel_job_release(job);
    accel_job_release(behind);

    test_release_io(slow, sin, sout);
    accel_buffer_release(sout2[0]);
    test_release_io(tiny, tin, tout);
    accel_model_release(ms);
    accel_model_release(mt);
    accel_device_release(d);
    test_manifest_free(&m);
    return test_finish();
}
