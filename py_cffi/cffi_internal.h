/* cffi_internal.h - what the C files of the cffi front-end share and Python does not see. */
#ifndef ACCEL_CFFI_INTERNAL_H
#define ACCEL_CFFI_INTERNAL_H

#include <accel/accel.h>

/* Counts a job as in flight for the exit hook; ACCEL_CFFI_REFUSED (counting nothing) once the hook
 * refuses jobs. Every success is matched by one accel_cffi_end_job when the job is over. */
accel_status accel_cffi_begin_job(void);
void accel_cffi_end_job(void);

void accel_cffi_fill_options(accel_run_options* options, int32_t priority, uint64_t core_mask, int64_t timeout_us,
                             int32_t no_wait);

/* True on the interpreter's main thread (accel_cffi_set_main_thread). */
int accel_cffi_on_main_thread(void);

#endif /* ACCEL_CFFI_INTERNAL_H */
