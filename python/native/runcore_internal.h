/* runcore_internal.h - what the run core's files share and the bindings do not see. */
#ifndef ACCEL_RUNCORE_INTERNAL_H
#define ACCEL_RUNCORE_INTERNAL_H

#include "accel_runcore.h"

/* ---- runcore_state.c ---- */

/* Counts a job as in flight for the exit drain: ACCEL_OK, or ACCEL_RUNCORE_REFUSED (counting
 * nothing) once the drain refuses jobs. Every ACCEL_OK is matched by one runcore_end_job when the
 * job is over (for a job with a callback: once its hook has returned). */
accel_status runcore_begin_job(void);
void runcore_end_job(void);

/* A job with a callback counted from its submission until its hook has returned. */
void runcore_callback_begin(void);
void runcore_callback_end(void);

/* A completion enters the binding only through these: enter answers whether the door is open (and
 * counts the completion as inside either way); leave is called once per enter. */
int runcore_hook_enter(void);
void runcore_hook_leave(void);

/* The exit drain's flags and counts (runcore_exit.c): refuse new jobs; close the door; the jobs in
 * flight not inside their hook (so still on the device); the completions inside the binding. */
void runcore_refuse_jobs(void);
void runcore_close_door(void);
int64_t runcore_jobs_on_device(void);
int64_t runcore_hooks_running(void);

/* ---- runcore_exit.c ---- */

/* Poll every millisecond until the count is zero or `limit_us` passed; 1 if it came to zero. */
int runcore_wait_device_idle(int64_t limit_us);
int runcore_wait_hooks_done(int64_t limit_us);

/* ---- runcore_wait.c ---- */

int64_t runcore_now_us(void); /* CLOCK_MONOTONIC */
void runcore_sleep_us(long us);

/* The options of a job; `no_wait` sets ACCEL_SUBMIT_NO_WAIT. */
void runcore_fill_options(accel_run_options* options, int32_t priority, uint64_t core_mask, int64_t timeout_us,
                          int no_wait);

/* accel_job_submit; with ACCEL_SUBMIT_NO_WAIT in `options`, retried while no in-flight slot is free
 * (sleeps of 20 us growing to 1 ms) until `deadline_us`: ACCEL_ERR_BUSY if none came free by then. */
accel_status runcore_submit_until(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                                  accel_buffer* const* outputs, size_t output_count, const accel_run_options* options,
                                  accel_job** out_job, int64_t deadline_us);

/* The job's timing into *timing (NULL: nothing), zeroed first so that a driver that fills less
 * leaves zeros; a success leaves the thread's last error (the job's message) in place. */
void runcore_get_timing(accel_job* job, accel_job_timing* timing);

#endif /* ACCEL_RUNCORE_INTERNAL_H */
