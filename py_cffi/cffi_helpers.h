/* cffi_helpers.h - the few C functions of the cffi front-end (accel._cffi). Plain C over the public
 * ABI, no Python API (so the module stays a cffi module, PyPy included). Each one saves Python
 * round trips on a hot path (every call through cffi releases and retakes the GIL) or guards the
 * door between the driver's threads and the interpreter. build_ffi.py makes the cdef from this
 * header, so everything here is visible as accel._cffi.lib.<name>. */
#ifndef ACCEL_CFFI_HELPERS_H
#define ACCEL_CFFI_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include <accel/accel.h>

/* A buffer as accel_cffi_alloc returns it: the handle (one reference), its host pointer and size. */
typedef struct accel_cffi_allocation {
    accel_buffer* buffer;
    uint8_t* data;
    uint64_t size;
} accel_cffi_allocation;

/* accel_buffer_alloc, then its host pointer and usable size; on failure nothing is left allocated. */
accel_status accel_cffi_alloc(accel_device* device, uint64_t nbytes, accel_cffi_allocation* out);

/* One copy of a strided host array into `buffer` from offset 0 (accel_buffer_write_strided), for
 * arrays of up to 64 dimensions: unit dimensions are dropped and contiguous neighbours merged first,
 * so an array that is at most ACCEL_MAX_DIMS-dimensional at heart is accepted. */
accel_status accel_cffi_write(accel_buffer* buffer, const void* src, uint32_t ndim, const int64_t* shape,
                              const int64_t* strides, uint32_t element_size);

/* Returned instead of a status when the exit hook refuses new jobs (not an accel_status value). */
#define ACCEL_CFFI_REFUSED (-1)

/* One synchronous run in progress: the job while it outlives a wait slice (NULL whenever the
 * caller has no job to release, whatever happens in Python between two calls, a KeyboardInterrupt
 * included), and its timing once it has ended. */
typedef struct accel_cffi_call {
    accel_job* job;
    accel_job_timing timing;
} accel_cffi_call;

/* Submits a job (no callback) and waits up to `slice_us` (negative: until it ends), counted as in
 * flight for the exit hook meanwhile. If it ended: call->timing is filled, the job released and its
 * result returned (the message is the thread's accel_last_error_message()). If the slice ended first:
 * ACCEL_ERR_NOT_READY with the job in call->job, for accel_cffi_finish or accel_cffi_abandon.
 * `no_wait` submits with ACCEL_SUBMIT_NO_WAIT (then ACCEL_ERR_BUSY when no slot is free).
 * ACCEL_CFFI_REFUSED once the exit hook refuses jobs. */
accel_status accel_cffi_run(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                            accel_buffer* const* outputs, size_t output_count, int32_t priority,
                            uint64_t core_mask, int64_t timeout_us, int32_t no_wait, int64_t slice_us,
                            accel_cffi_call* call);

/* Waits for call->job up to `slice_us` (negative: until it ends). If it ended: as accel_cffi_run;
 * else ACCEL_ERR_NOT_READY and the job is still in call->job. */
accel_status accel_cffi_finish(accel_cffi_call* call, int64_t slice_us);

/* Releases call->job if there is one (a job not started is cancelled) and stops counting it. */
void accel_cffi_abandon(accel_cffi_call* call);

/* Submits a job whose completion calls the Python callback accel_cffi_job_done(job, status,
 * user_data) through a C trampoline, unless the door to Python is closed (accel_cffi_close_python).
 * Counts the job as in flight until its callback has returned (or, on failure here, not at all).
 * ACCEL_CFFI_REFUSED once the exit hook refuses jobs. */
accel_status accel_cffi_submit(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                               accel_buffer* const* outputs, size_t output_count, int32_t priority,
                               uint64_t core_mask, int64_t timeout_us, int32_t no_wait, void* user_data,
                               accel_job** out_job);

/* The interpreter-exit protocol (CORE_API.md "Interpreter exit"), driven by the core's atexit hook:
 * refuse new jobs; wait until none is in flight; close the door so that later callbacks never enter
 * Python; wait until no trampoline is inside Python. Counters: jobs in flight and trampolines in
 * Python. */
void accel_cffi_refuse_jobs(void);
void accel_cffi_close_python(void);
int64_t accel_cffi_inflight(void);
int64_t accel_cffi_active(void);

#endif /* ACCEL_CFFI_HELPERS_H */
