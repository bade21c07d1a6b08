/* cffi_helpers.c - see cffi_helpers.h: allocation, strided writes, jobs with a Python completion, the
 * exit protocol's counters. The synchronous runs are in cffi_run.c. */
#include "cffi_helpers.h"
#include "cffi_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Defined by cffi in the generated module (extern "Python+C" in build_ffi.py): the Python side of a
 * job's completion, given everything it reports so that Python makes no call back into C. */
void accel_cffi_job_done(void* user_data, accel_status status, const accel_job_timing* timing, const char* message);

static atomic_llong g_inflight;      /* jobs of this front-end not finished (callback returned) */
static atomic_llong g_active;        /* trampolines past the door check, not yet out of Python */
static atomic_int g_refuse_jobs;     /* set by the exit hook: no new jobs */
static atomic_int g_python_closed;   /* set by the exit hook once it has waited: callbacks skip Python */

accel_status accel_cffi_alloc(accel_device* device, uint64_t nbytes, accel_cffi_allocation* out) {
    accel_buffer* buffer = NULL;
    void* data = NULL;
    uint64_t size = 0;
    accel_status status = accel_buffer_alloc(device, nbytes, &buffer);
    if (status == ACCEL_OK) status = accel_buffer_host_ptr(buffer, &data);
    if (status == ACCEL_OK) status = accel_buffer_size(buffer, &size);
    if (status != ACCEL_OK) {
        accel_buffer_release(buffer); /* void: the failing call's message stays */
        buffer = NULL;
        data = NULL;
        size = 0;
    }
    out->buffer = buffer;
    out->data = (uint8_t*)data;
    out->size = size;
    return status;
}

accel_status accel_cffi_write(accel_buffer* buffer, const void* src, uint32_t ndim, const int64_t* shape,
                              const int64_t* strides, uint32_t element_size) {
    int64_t merged_shape[ACCEL_MAX_DIMS];
    int64_t merged_strides[ACCEL_MAX_DIMS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < ndim; i++) {
        if (shape[i] == 0) return ACCEL_OK; /* nothing to copy */
        if (shape[i] == 1) continue;
        if (n > 0 && merged_strides[n - 1] == strides[i] * shape[i]) {
            merged_shape[n - 1] *= shape[i];
            merged_strides[n - 1] = strides[i];
            continue;
        }
        if (n == ACCEL_MAX_DIMS) {
            /* Let the library word the refusal: it names the dimension limit. */
            return accel_buffer_write_strided(buffer, 0, src, ndim, shape, strides, element_size);
        }
        merged_shape[n] = shape[i];
        merged_strides[n] = strides[i];
        n++;
    }
    return accel_buffer_write_strided(buffer, 0, src, n, merged_shape, merged_strides, element_size);
}

void accel_cffi_fill_options(accel_run_options* o, int32_t priority, uint64_t core_mask, int64_t timeout_us,
                             int32_t no_wait) {
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->priority = priority;
    o->core_mask = core_mask;
    o->timeout_us = timeout_us;
    o->flags = no_wait ? ACCEL_SUBMIT_NO_WAIT : 0;
}

accel_status accel_cffi_begin_job(void) {
    atomic_fetch_add(&g_inflight, 1); /* before the check: the exit hook sees this job or refuses it */
    if (atomic_load(&g_refuse_jobs)) {
        atomic_fetch_sub(&g_inflight, 1);
        return ACCEL_CFFI_REFUSED;
    }
    return ACCEL_OK;
}

void accel_cffi_end_job(void) { atomic_fetch_sub(&g_inflight, 1); }

static atomic_ulong g_main_thread;

void accel_cffi_set_main_thread(uint64_t thread_ident) { atomic_store(&g_main_thread, (unsigned long)thread_ident); }

int accel_cffi_on_main_thread(void) { return (unsigned long)pthread_self() == atomic_load(&g_main_thread); }

/* The driver's completion callback: into Python unless the door is closed. The in-flight count
 * drops after the callback, so the exit hook that sees zero knows no callback is still to come. */
static void trampoline(accel_job* job, accel_status status, void* user_data) {
    atomic_fetch_add(&g_active, 1);
    if (!atomic_load(&g_python_closed)) {
        const char* message = "";
        if (status != ACCEL_OK) {
            accel_job_wait(job, 0); /* inside the callback: the job's result and message, no wait */
            message = accel_last_error_message();
        }
        accel_job_timing timing;
        memset(&timing, 0, sizeof timing);
        timing.struct_size = sizeof timing;
        accel_job_get_timing(job, &timing);
        accel_cffi_job_done(user_data, status, &timing, message);
    }
    atomic_fetch_sub(&g_active, 1);
    accel_cffi_end_job();
}

accel_status accel_cffi_submit(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                               accel_buffer* const* outputs, size_t output_count, int32_t priority, uint64_t core_mask,
                               int64_t timeout_us, void* user_data, accel_job** out_job) {
    accel_status status = accel_cffi_begin_job();
    if (status != ACCEL_OK) return status;
    accel_run_options options;
    accel_cffi_fill_options(&options, priority, core_mask, timeout_us, accel_cffi_on_main_thread());
    options.callback = trampoline;
    options.user_data = user_data;
    status = accel_job_submit(model, inputs, input_count, outputs, output_count, &options, out_job);
    if (status != ACCEL_OK) accel_cffi_end_job(); /* no callback will come */
    return status;
}

void accel_cffi_refuse_jobs(void) { atomic_store(&g_refuse_jobs, 1); }
void accel_cffi_close_python(void) { atomic_store(&g_python_closed, 1); }
int64_t accel_cffi_inflight(void) { return atomic_load(&g_inflight); }
int64_t accel_cffi_active(void) { return atomic_load(&g_active); }
