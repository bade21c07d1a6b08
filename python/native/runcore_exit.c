/* runcore_exit.c - the interpreter-exit drain of both bindings (accel_runcore_exit_drain): bounded
 * waits over the run core's counts, with the binding's two steps in between. */
#include "runcore_internal.h"

static int wait_until_zero(int64_t (*count)(void), int64_t limit_us) {
    const int64_t give_up = runcore_now_us() + limit_us;
    while (count() > 0) {
        if (runcore_now_us() >= give_up) return 0;
        runcore_sleep_us(1000);
    }
    return 1;
}

int runcore_wait_hooks_done(int64_t limit_us) { return wait_until_zero(runcore_hooks_running, limit_us); }

int runcore_wait_device_idle(int64_t limit_us) { return wait_until_zero(runcore_jobs_on_device, limit_us); }

/* The drain's wait for the jobs on the device: until none is left, for at most `limit_us`, and no longer
 * than `stall_us` in which none of them ended and a hook was running all along. A driver calls its
 * completions one after another on its completion thread, so the jobs that finish behind a hook that
 * does not return cannot reach theirs before it does: waiting for them is waiting for that hook. */
static int wait_jobs_or_stall(int64_t limit_us, int64_t stall_us) {
    const int64_t start = runcore_now_us();
    int64_t stall_start = start;
    int64_t left = runcore_jobs_on_device();
    while (left > 0) {
        const int64_t now = runcore_now_us();
        if (now - start >= limit_us || now - stall_start >= stall_us) return 0;
        runcore_sleep_us(1000);
        const int64_t count = runcore_jobs_on_device();
        if (count != left || runcore_hooks_running() == 0) stall_start = runcore_now_us();
        left = count;
    }
    return 1;
}

int accel_runcore_exit_drain(const accel_runcore_exit_steps* steps) {
    runcore_refuse_jobs();
    /* A job inside its hook is no longer the device's: only the wait for hooks below waits for it. */
    int idle = wait_jobs_or_stall(ACCEL_RUNCORE_DRAIN_US, ACCEL_RUNCORE_HOOKS_US);
    if (!idle && steps && steps->release_jobs) {
        steps->release_jobs();
        idle = wait_jobs_or_stall(ACCEL_RUNCORE_DRAIN_US, ACCEL_RUNCORE_HOOKS_US);
    }
    runcore_close_door();
    const int hooks_done = runcore_wait_hooks_done(ACCEL_RUNCORE_HOOKS_US);
    if (steps && steps->last_step) steps->last_step(ACCEL_RUNCORE_HOOKS_US);
    return idle && hooks_done;
}
