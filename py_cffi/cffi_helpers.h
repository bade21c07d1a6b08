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

/* Records which thread is the interpreter's main thread (the only one that runs signal handlers):
 * `thread_ident` is Python's threading.main_thread().ident, which CPython and PyPy make from
 * pthread_self() on POSIX systems. */
void accel_cffi_set_main_thread(uint64_t thread_ident);

/* Runs a job (no callback) and waits for it, counting it as in flight for the exit hook meanwhile.
 * On a thread other than the main one: submits (blocking for an in-flight slot if need be) and waits
 * until the job ends. On the main thread, which must come back to Python at least every
 * ACCEL_CFFI_SLICE_US so that the signal handlers run (Ctrl-C), the run waits at most that long for a
 * slot and its job; if it is not over by then it returns ACCEL_ERR_NOT_READY and stays *pending* under
 * `token`, for accel_cffi_finish or accel_cffi_abandon. The run lives on the C side, so an exception in
 * Python (a KeyboardInterrupt) at any point loses nothing: the caller's handler abandons its token,
 * pending or not. Tokens tell apart the runs of one thread (one nested in a signal handler between
 * two slices of another). When the job ends: *timing (may be NULL) is filled, the job released and its
 * result returned (the message is the thread's accel_last_error_message()). ACCEL_CFFI_REFUSED once
 * the exit hook refuses jobs. The caller holds the model and the buffers until the run is over. */
accel_status accel_cffi_run(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                            accel_buffer* const* outputs, size_t output_count, int32_t priority, uint64_t core_mask,
                            int64_t timeout_us, accel_job_timing* timing, uint64_t token);

/* accel_cffi_run for the common one-input, one-output model: no arrays to build in Python. */
accel_status accel_cffi_run_1x1(accel_model* model, accel_buffer* input, accel_buffer* output, int32_t priority,
                                uint64_t token);

/* accel_cffi_run_1x1 from host memory: a fresh input buffer of `input_bytes` on `device` receives
 * `src_bytes` from `src` (one copy, counted in bytes_copied, however long the run waits for a slot),
 * and goes when the run is over. */
accel_status accel_cffi_run_copied_1x1(accel_model* model, accel_device* device, const void* src, uint64_t src_bytes,
                                       uint64_t input_bytes, accel_buffer* output, int32_t priority, uint64_t token);

/* Longest a wait on the main thread lasts before it returns to Python (microseconds). */
#define ACCEL_CFFI_SLICE_US 20000

/* One more slice of the run pending under `token`. If it is over: as accel_cffi_run (timing to the
 * run's `timing`, result returned); else ACCEL_ERR_NOT_READY. */
accel_status accel_cffi_finish(uint64_t token);

/* Ends the run pending under `token`, if any: a job not started is cancelled, one running finishes
 * on its own. */
void accel_cffi_abandon(uint64_t token);

/* Submits a job whose completion calls the Python callback accel_cffi_job_done through a C trampoline,
 * unless the door to Python is closed (accel_cffi_close_python). Counts the job as in flight until its
 * callback has returned (or, on failure here, not at all). On the main thread it does not block for an
 * in-flight slot (ACCEL_SUBMIT_NO_WAIT: ACCEL_ERR_BUSY), so that the caller can run the signal
 * handlers while it retries.
 * ACCEL_CFFI_REFUSED once the exit hook refuses jobs. */
accel_status accel_cffi_submit(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                               accel_buffer* const* outputs, size_t output_count, int32_t priority, uint64_t core_mask,
                               int64_t timeout_us, void* user_data, accel_job** out_job);

/* The interpreter-exit protocol (CORE_API.md "Interpreter exit"), driven by the core's atexit hook:
 * refuse new jobs; wait until none is in flight; close the door so that later callbacks never enter
 * Python; wait until no trampoline is inside Python. Counters: jobs in flight and trampolines in
 * Python. */
void accel_cffi_refuse_jobs(void);
void accel_cffi_close_python(void);
int64_t accel_cffi_inflight(void);
int64_t accel_cffi_active(void);

#endif /* ACCEL_CFFI_HELPERS_H */
