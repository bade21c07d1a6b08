/* cffi_run.c - synchronous runs of the cffi front-end (see cffi_helpers.h, accel_cffi_run).
 *
 * Off the main thread a run is one blocking submit and one untimed wait. On the main thread, which
 * must come back to Python at least every slice so that the signal handlers (Ctrl-C) run, a run is a
 * small state machine kept here in C, under the caller's token: waiting for an in-flight slot, then
 * for the job. Python only repeats accel_cffi_finish(token) while it answers NOT_READY, and calls
 * accel_cffi_abandon(token) if anything raises; nothing of the run lives in Python, so an exception
 * at any point loses nothing and copies nothing twice. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cffi_helpers.h"
#include "cffi_internal.h"

/* A run of the main thread that came back to Python before it ended. */
typedef struct pending_run {
    uint64_t token;
    accel_model* model;        /* the caller holds it for the whole run */
    accel_buffer** buffers;    /* inputs then outputs, the caller's (held by it); until submitted */
    size_t input_count, output_count;
    accel_run_options options;
    accel_job* job;            /* NULL until submitted */
    accel_buffer* owned_input; /* a buffer this run made (the copy path), released at its end */
    accel_job_timing* timing;  /* the caller's, filled when the job ends; may be NULL */
    struct pending_run* next;
} pending_run;

/* The calling thread's pending runs, most recent first (a run nested in a signal handler is above
 * the one it interrupted). */
static _Thread_local pending_run* t_pending;

static pending_run** find_pending(uint64_t token) {
    for (pending_run** link = &t_pending; *link; link = &(*link)->next)
        if ((*link)->token == token) return link;
    return NULL;
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Waits for `job` up to `slice_us` (negative: until it ends); if it ended, fills *timing (may be
 * NULL) and returns its result; if not, ACCEL_ERR_NOT_READY. */
static accel_status wait_slice(accel_job* job, int64_t slice_us, accel_job_timing* timing) {
    accel_status status = accel_job_wait(job, slice_us);
    if (status != ACCEL_ERR_NOT_READY && timing) {
        memset(timing, 0, sizeof *timing);
        timing->struct_size = sizeof *timing;
        accel_job_get_timing(job, timing); /* success leaves the job's message in place */
    }
    return status;
}

/* Submits without blocking, retrying while no in-flight slot is free (sleeps of 20 us growing to
 * 1 ms) until `deadline_us`; ACCEL_ERR_BUSY if none came free by then. */
static accel_status submit_until(accel_model* model, accel_buffer* const* buffers, size_t input_count,
                                 size_t output_count, const accel_run_options* options, accel_job** out_job,
                                 int64_t deadline_us) {
    long pause = 20;
    for (;;) {
        accel_status status =
            accel_job_submit(model, buffers, input_count, buffers + input_count, output_count, options, out_job);
        if (status != ACCEL_ERR_BUSY || now_us() >= deadline_us) return status;
        sleep_us(pause);
        pause = pause < 500 ? pause * 2 : 1000;
    }
}

/* The end of a run: its job and its own input released, its in-flight count dropped. */
static void end_run(pending_run* run) {
    accel_job_release(run->job);       /* void calls: the job's message stays the thread's last error */
    accel_buffer_release(run->owned_input);
    free(run->buffers);
    free(run);
    accel_cffi_end_job();
}

/* One slice of a pending run: submission if it is still waiting for a slot, then the job. Returns
 * the job's result, a submission's failure, or NOT_READY. */
static accel_status advance(pending_run* run) {
    const int64_t deadline = now_us() + ACCEL_CFFI_SLICE_US;
    if (!run->job) {
        accel_status status = submit_until(run->model, run->buffers, run->input_count, run->output_count, &run->options,
                                           &run->job, deadline);
        if (status == ACCEL_ERR_BUSY) return ACCEL_ERR_NOT_READY;
        if (status != ACCEL_OK) {
            run->job = NULL;
            return status;
        }
    }
    int64_t left = deadline - now_us();
    return wait_slice(run->job, left > 0 ? left : 0, run->timing);
}

/* Runs on the main thread: one slice; what is not over by then is kept under `token`. */
static accel_status run_on_main(pending_run* run) {
    accel_status status = advance(run);
    if (status != ACCEL_ERR_NOT_READY) {
        end_run(run);
        return status;
    }
    run->next = t_pending;
    t_pending = run;
    return status;
}

/* Starts a run (the in-flight count taken); `owned_input` (may be NULL) is released at its end. */
static accel_status start_run(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                              accel_buffer* const* outputs, size_t output_count, int32_t priority, uint64_t core_mask,
                              int64_t timeout_us, accel_job_timing* timing, uint64_t token, accel_buffer* owned_input) {
    if (!accel_cffi_on_main_thread()) {
        accel_run_options options;
        accel_cffi_fill_options(&options, priority, core_mask, timeout_us, 0);
        accel_job* job = NULL;
        accel_status status = accel_job_submit(model, inputs, input_count, outputs, output_count, &options, &job);
        if (status == ACCEL_OK) status = wait_slice(job, -1, timing);
        accel_job_release(job);
        accel_buffer_release(owned_input);
        accel_cffi_end_job();
        return status;
    }
    pending_run* run = (pending_run*)calloc(1, sizeof *run);
    size_t count = input_count + output_count;
    accel_buffer** buffers = (accel_buffer**)malloc((count ? count : 1) * sizeof *buffers);
    if (!run || !buffers) {
        free(run);
        free(buffers);
        accel_buffer_release(owned_input);
        accel_cffi_end_job();
        return ACCEL_ERR_OUT_OF_MEMORY;
    }
    if (input_count) memcpy(buffers, inputs, input_count * sizeof *buffers);
    if (output_count) memcpy(buffers + input_count, outputs, output_count * sizeof *buffers);
    run->token = token;
    run->model = model;
    run->buffers = buffers;
    run->input_count = input_count;
    run->output_count = output_count;
    accel_cffi_fill_options(&run->options, priority, core_mask, timeout_us, 1);
    run->owned_input = owned_input;
    run->timing = timing;
    return run_on_main(run);
}

accel_status accel_cffi_run(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                            accel_buffer* const* outputs, size_t output_count, int32_t priority, uint64_t core_mask,
                            int64_t timeout_us, accel_job_timing* timing, uint64_t token) {
    accel_status status = accel_cffi_begin_job();
    if (status != ACCEL_OK) return status;
    return start_run(model, inputs, input_count, outputs, output_count, priority, core_mask, timeout_us, timing, token,
                     NULL);
}

accel_status accel_cffi_run_1x1(accel_model* model, accel_buffer* input, accel_buffer* output, int32_t priority,
                                uint64_t token) {
    return accel_cffi_run(model, &input, 1, &output, 1, priority, 0, 0, NULL, token);
}

accel_status accel_cffi_run_copied_1x1(accel_model* model, accel_device* device, const void* src, uint64_t src_bytes,
                                       uint64_t input_bytes, accel_buffer* output, int32_t priority, uint64_t token) {
    accel_status status = accel_cffi_begin_job();
    if (status != ACCEL_OK) return status;
    accel_buffer* input = NULL;
    status = accel_buffer_alloc(device, input_bytes, &input);
    if (status == ACCEL_OK) status = accel_buffer_write(input, 0, src, src_bytes);
    if (status != ACCEL_OK) {
        accel_buffer_release(input);
        accel_cffi_end_job();
        return status;
    }
    return start_run(model, &input, 1, &output, 1, priority, 0, 0, NULL, token, input);
}

accel_status accel_cffi_finish(uint64_t token) {
    pending_run** link = find_pending(token);
    if (!link) return ACCEL_ERR_INTERNAL;
    pending_run* run = *link;
    accel_status status = advance(run);
    if (status != ACCEL_ERR_NOT_READY) {
        *link = run->next;
        end_run(run);
    }
    return status;
}

void accel_cffi_abandon(uint64_t token) {
    pending_run** link = find_pending(token);
    if (!link) return;
    pending_run* run = *link;
    *link = run->next;
    end_run(run);
}
