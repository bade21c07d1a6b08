/* cffi_helpers.h - the few C functions of the cffi front-end (accel._cffi) beyond the run core
 * (accel_runcore.h, which the module also exposes). Plain C over the public ABI, no Python API (so
 * the module stays a cffi module, PyPy included). Each one saves Python round trips on a hot path
 * (every call through cffi releases and retakes the GIL). build_ffi.py makes the cdef from this
 * header, so everything here and in accel_runcore.h is visible as accel._cffi.lib.<name>. */
#ifndef ACCEL_CFFI_HELPERS_H
#define ACCEL_CFFI_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include <accel/accel.h>

#include "accel_runcore.h"

/* Owners made before the call that fills them (Python's ffi.new_allocator over these): a one-pointer
 * box for a device, model, job or (imported) buffer handle. The handle a call
 * leaves in one is released when the owner is freed, so a KeyboardInterrupt between the C call and the
 * Python object that takes the handle over leaks nothing: the owner exists before the call. */
void* accel_cffi_owner_alloc(size_t size); /* zeroed */
void accel_cffi_free_device_box(void* box);
void accel_cffi_free_model_box(void* box);
void accel_cffi_free_job_box(void* box);
void accel_cffi_free_buffer_box(void* box);

/* Device memory as a cffi array that owns it, made in one step by ffi.new_allocator(alloc=
 * accel_cffi_memory_alloc, free=accel_cffi_memory_free): the allocation of the `nbytes` that
 * accel_cffi_memory_target last named on this thread happens on its device (the array is `nbytes`
 * rounded up to the alignment, the buffer's usable size), and NULL (cffi's MemoryError) leaves the reason
 * in accel_cffi_memory_status() and the thread's last error. accel_cffi_memory_last gives the handle
 * of this thread's last allocation (no reference of its own), for job submissions; a registry maps
 * the memory back to its buffer for free, which releases it. accel_cffi_memory_target returns the
 * device's alignment (the usable size of a buffer is its size rounded up to it), 0 if the device
 * cannot say; it is asked once per device and thread (a stale answer, for another device opened at
 * the address of a released one, could only change the rounding: the array is never larger than the
 * buffer allocated for it). */
uint32_t accel_cffi_memory_target(accel_device* device, uint64_t nbytes);
void* accel_cffi_memory_alloc(size_t size);
void accel_cffi_memory_free(void* data);
accel_status accel_cffi_memory_status(void);
accel_buffer* accel_cffi_memory_last(void);

/* accel_runcore_run for the common one-input, one-output model: no arrays to build in Python. */
accel_status accel_cffi_run_1x1(accel_model* model, accel_buffer* input, accel_buffer* output, int32_t priority,
                                uint64_t token);

/* accel_cffi_run_1x1 from host memory: a fresh input buffer of `input_bytes` on `device` receives
 * `src_bytes` from `src` (one copy, counted in bytes_copied, however long the run waits for a slot),
 * and goes when the run is over. */
accel_status accel_cffi_run_copied_1x1(accel_model* model, accel_device* device, const void* src, uint64_t src_bytes,
                                       uint64_t input_bytes, accel_buffer* output, int32_t priority, uint64_t token);

#endif /* ACCEL_CFFI_HELPERS_H */
