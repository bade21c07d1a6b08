/* runcore_run.c - synchronous runs (accel_runcore_run): on the main thread a small state machine,
 * waiting for an in-flight slot, then for the job, kept under the caller's token between slices. */
#include <stdlib.h>
#include <string.h>

#include "runcore_internal.h"

/* A run of the main thread. It starts on the caller's stack and moves to the heap only if it has to
 * outlive the call (most runs end within their first slice, with nothing allocated). */
typedef struct pending_run {
    uint64_t token;
    accel_model* model;            /* the caller holds it for the whole run */
    accel_buffer* const* inputs;   /* the caller's (held by it); only until submitted */
    accel_buffer* const* outputs;
    size_t input_count, output_count;
    accel_run_options options;
    accel_job* job;                /* NULL until submitted */
    accel_buffer* owned_input;     /* released at the run's end */
    accel_job_timing* timing;      /* the caller's, filled when the job ends; may be NULL */
    accel_buffer** buffers_copy;   /* a pending run not submitted yet: its own copy of the handles */
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

/* The end of a run: its job and its own input released, its in-flight count dropped. */
static void end_run(pending_run* run) {
    accel_job_release(run->job); /* void calls: the job's message stays the thread's last error */
    accel_buffer_release(run->owned_input);
    runcore_end_job();
}

static void free_run(pending_run* run) {
    free(run->buffers_copy);
    free(run);
}

/* One slice of a run: submission if it still waits for a slot, then the job. Returns the job's
 * result, a submission's failure, or SLICE_OVER. */
static accel_status advance(pending_run* run) {
    const int64_t slice_end = runcore_now_us() + ACCEL_RUNCORE_SLICE_US;
    if (!run->job) {
        accel_status status = runcore_submit_until(run->model, run->inputs, run->input_count, run->outputs,
                                                   run->output_count, &run->options, &run->job, slice_end);
        if (status == ACCEL_ERR_BUSY) return ACCEL_RUNCORE_SLICE_OVER;
        if (status != ACCEL_OK) {
            run->job = NULL;
            return status;
        }
    }
    const int64_t left = slice_end - runcore_now_us();
    accel_status status = accel_job_wait(run->job, left > 0 ? left : 0);
    if (status == ACCEL_ERR_NOT_READY) return ACCEL_RUNCORE_SLICE_OVER;
    runcore_get_timing(run->job, run->timing);
    return status;
}

/* Moves a run that is not over onto the heap, under its token (or ends it if that fails). */
static accel_status keep_pending(pending_run* on_stack) {
    pending_run* run = (pending_run*)malloc(sizeof *run);
    accel_buffer** copy = NULL;
    const size_t count = on_stack->input_count + on_stack->output_count;
    if (run && !on_stack->job && count) {
        copy = (accel_buffer**)malloc(count * sizeof *copy);
        if (copy) {
            if (on_stack->input_count) memcpy(copy, on_stack->inputs, on_stack->input_count * sizeof *copy);
            if (on_stack->output_count)
                memcpy(copy + on_stack->input_count, on_stack->outputs, on_stack->output_count * sizeof *copy);
        }
    }
    if (!run || (!on_stack->job && count && !copy)) {
        free(run);
        free(copy);
        end_run(on_stack);
        return ACCEL_ERR_OUT_OF_MEMORY;
    }
    *run = *on_stack;
    run->inputs = copy; /* the caller's arrays are only valid during the call */
    run->outputs = copy ? copy + run->input_count : NULL;
    run->buffers_copy = copy;
    run->next = t_pending;
    t_pending = run;
    return ACCEL_RUNCORE_SLICE_OVER;
}

accel_status accel_runcore_run(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                               accel_buffer* const* outputs, size_t output_count, int32_t priority, uint64_t core_mask,
                               int64_t timeout_us, accel_job_timing* timing, accel_buffer* owned_input,
                               uint64_t token) {
    if (runcore_begin_job() != ACCEL_OK) {
        accel_buffer_release(owned_input);
        return ACCEL_RUNCORE_REFUSED;
    }
    pending_run run;
    memset(&run, 0, sizeof run);
    run.token = token;
    run.model = model;
    run.inputs = inputs;
    run.outputs = outputs;
    run.input_count = input_count;
    run.output_count = output_count;
    run.owned_input = owned_input;
    run.timing = timing;
    const int main_thread = accel_runcore_on_main_thread();
    runcore_fill_options(&run.options, priority, core_mask, timeout_us, main_thread);
    if (!main_thread) {
        accel_status status =
            accel_job_submit(model, inputs, input_count, outputs, output_count, &run.options, &run.job);
        if (status == ACCEL_OK) {
            status = accel_job_wait(run.job, -1);
            runcore_get_timing(run.job, timing);
        } else {
            run.job = NULL;
        }
        end_run(&run);
        return status;
    }
    accel_status status = advance(&run);
    if (status != ACCEL_RUNCORE_SLICE_OVER) {
        end_run(&run);
        return status;
    }
    return keep_pending(&run);
}

accel_status accel_runcore_finish(uint64_t token) {
    pending_run** link = find_pending(token);
    if (!link) return ACCEL_ERR_INTERNAL;
    pending_run* run = *link;
    accel_status status = advance(run);
    if (status != ACCEL_RUNCORE_SLICE_OVER) {
        *link = run->next;
        end_run(run);
        free_run(run);
    }
    return status;
}

void accel_runcore_abandon(uint64_t token) {
    pending_run** link = find_pending(token);
    if (!link) return;
    pending_run* run = *link;
    *link = run->next;
    end_run(run);
    free_run(run);
}
