/* runcore_callback.c - jobs with a completion callback: one trampoline for both bindings, which
 * checks the door to Python, gathers what the job reports and calls the binding's one hook. */
#include <stdatomic.h>
#include <string.h>

#include "runcore_internal.h"

static _Atomic(accel_runcore_completion_hook) g_hook;

void accel_runcore_set_completion_hook(accel_runcore_completion_hook hook) { atomic_store(&g_hook, hook); }

/* The driver's completion callback. The counts drop after the hook, so a drain that sees zero knows
 * no hook is still to come. */
static void trampoline(accel_job* job, accel_status status, void* user_data) {
    if (runcore_hook_enter()) {
        const char* message = "";
        if (status != ACCEL_OK) {
            accel_job_wait(job, 0); /* inside the callback: the job's result and message, no wait */
            message = accel_last_error_message();
        }
        accel_job_timing timing;
        runcore_get_timing(job, &timing);
        accel_runcore_completion_hook hook = atomic_load(&g_hook);
        if (hook) hook(user_data, status, &timing, message);
    }
    runcore_hook_leave();
    runcore_callback_end();
    runcore_end_job();
}

accel_status accel_runcore_submit(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                                  accel_buffer* const* outputs, size_t output_count, int32_t priority,
                                  uint64_t core_mask, int64_t timeout_us, uint32_t flags, void* user_data,
                                  accel_job** out_job) {
    if (runcore_begin_job() != ACCEL_OK) return ACCEL_RUNCORE_REFUSED;
    runcore_callback_begin();
    const int main_thread = accel_runcore_on_main_thread();
    accel_run_options options;
    runcore_fill_options(&options, priority, core_mask, timeout_us, main_thread);
    options.flags |= flags & (uint32_t)ACCEL_SUBMIT_PROFILE_NODES;
    options.callback = trampoline;
    options.user_data = user_data;
    accel_status status = runcore_submit_until(model, inputs, input_count, outputs, output_count, &options, out_job,
                                               runcore_now_us() + ACCEL_RUNCORE_SLICE_US);
    if (status != ACCEL_OK) { /* no completion will come */
        runcore_callback_end();
        runcore_end_job();
        if (status == ACCEL_ERR_BUSY && main_thread) return ACCEL_RUNCORE_SLICE_OVER;
    }
    return status;
}
