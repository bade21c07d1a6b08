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

/* A buffer as accel_cffi_alloc returns it: the handle (one reference), its host pointer and size. */
typedef struct accel_cffi_allocation {
    accel_buffer* buffer;
    uint8_t* data;
    uint64_t size;
} accel_cffi_allocation;

/* accel_buffer_alloc, then its host pointer and usable size; on failure nothing is left allocated. */
accel_status accel_cffi_alloc(accel_device* device, uint64_t nbytes, accel_cffi_allocation* out);

/* accel_runcore_run for the common one-input, one-output model: no arrays to build in Python. */
accel_status accel_cffi_run_1x1(accel_model* model, accel_buffer* input, accel_buffer* output, int32_t priority,
                                uint64_t token);

/* accel_cffi_run_1x1 from host memory: a fresh input buffer of `input_bytes` on `device` receives
 * `src_bytes` from `src` (one copy, counted in bytes_copied, however long the run waits for a slot),
 * and goes when the run is over. */
accel_status accel_cffi_run_copied_1x1(accel_model* model, accel_device* device, const void* src, uint64_t src_bytes,
                                       uint64_t input_bytes, accel_buffer* output, int32_t priority, uint64_t token);

#endif /* ACCEL_CFFI_HELPERS_H */
