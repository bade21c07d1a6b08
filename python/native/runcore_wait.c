/* runcore_wait.c - the waits of the run core: for an in-flight slot (polled, so that the main thread
 * comes back within a slice) and for a job (sliced on the main thread, one blocking wait elsewhere). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep under a strict -std=c11 */
#include <string.h>
#include <time.h>

#include "runcore_internal.h"

int64_t runcore_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void runcore_sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

void runcore_fill_options(accel_run_options* o, int32_t priority, uint64_t core_mask, int64_t timeout_us, int no_wait) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->priority = priority;
    o->core_mask = core_mask;
    o->timeout_us = timeout_us;
    o->flags = no_wait ? ACCEL_SUBMIT_NO_WAIT : 0;
}

accel_status runcore_submit_until(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                                  accel_buffer* const* outputs, size_t output_count, const accel_run_options* options,
                                  accel_job** out_job, int64_t deadline_us) {
    long pause = 20;
    for (;;) {
        accel_status status = accel_job_submit(model, inputs, input_count, outputs, output_count, options, out_job);
        if (status != ACCEL_ERR_BUSY || !(options->flags & ACCEL_SUBMIT_NO_WAIT) || runcore_now_us() >= deadline_us)
            return status;
        runcore_sleep_us(pause);
        pause = pause < 500 ? pause * 2 : 1000;
    }
}

void runcore_get_timing(accel_job* job, accel_job_timing* timing) {
    if (!timing) return;
    memset(timing, 0, sizeof *timing);
    timing->struct_size = sizeof *timing;
    accel_job_get_timing(job, timing);
}

int64_t accel_runcore_deadline(double timeout_s) {
    const int64_t now = runcore_now_us();
    if (!(timeout_s > 0)) return now;
    if (timeout_s >= 1e9) return ACCEL_RUNCORE_FOREVER;
    const double us = timeout_s * 1e6;
    int64_t whole = (int64_t)us;
    if ((double)whole < us) whole++; /* rounded up: a wait never ends before its timeout */
    return now + whole;
}

accel_status accel_runcore_wait(accel_job* job, int64_t deadline) {
    const int main_thread = accel_runcore_on_main_thread();
    if (deadline == ACCEL_RUNCORE_FOREVER && !main_thread) return accel_job_wait(job, -1);
    const int64_t now = runcore_now_us();
    int64_t left = deadline == ACCEL_RUNCORE_FOREVER ? ACCEL_RUNCORE_SLICE_US : deadline - now;
    if (main_thread && left > ACCEL_RUNCORE_SLICE_US) left = ACCEL_RUNCORE_SLICE_US;
    accel_status status = accel_job_wait(job, left > 0 ? left : 0);
    if (status != ACCEL_ERR_NOT_READY) return status; /* the job's own result */
    if (deadline != ACCEL_RUNCORE_FOREVER && runcore_now_us() >= deadline) return ACCEL_ERR_NOT_READY;
    return ACCEL_RUNCORE_SLICE_OVER;
}
