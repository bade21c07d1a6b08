/* accel_runcore.h - the run machinery of the Python front-ends, written once: plain C over the public
 * ABI with no Python API, compiled into both extension modules (accel._pybind and accel._cffi, each
 * with its own copy of the state below), so that pybind11 and cffi submit, count, wait and drain
 * alike and keep only what their binding must do (the GIL, object wrappers, the buffer protocol).
 *
 * The main thread is the only one that runs Python's signal handlers, so a call there never blocks
 * for longer than ACCEL_RUNCORE_SLICE_US: it answers ACCEL_RUNCORE_SLICE_OVER instead, the binding
 * runs the handlers (a KeyboardInterrupt may come out of them) and calls again. Other threads block
 * in libaccel once: a timed wait costs more in the kernel, and they could not run the handlers anyway.
 *
 * The state is process-wide per module: the jobs in flight, the completion callbacks still to return,
 * the exit drain's two flags (refuse new jobs, the door to Python closed) and the main thread's id.
 * Every function may be called from any thread unless said otherwise. */
#ifndef ACCEL_RUNCORE_H
#define ACCEL_RUNCORE_H

#include <stddef.h>
#include <stdint.h>

#include <accel/accel.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest a call on the main thread goes without coming back to the binding (microseconds). */
#define ACCEL_RUNCORE_SLICE_US 20000

/* Answers that are not accel_status values. */
#define ACCEL_RUNCORE_REFUSED (-1)    /* the exit drain refuses new jobs (accel_runcore_exit_drain) */
#define ACCEL_RUNCORE_SLICE_OVER (-2) /* the main thread's slice ended first: run the handlers, call again */

/* A deadline (accel_runcore_wait) that never comes. */
#define ACCEL_RUNCORE_FOREVER (-1)

/* Records the interpreter's main thread: `thread_ident` is Python's threading.main_thread().ident,
 * which CPython and PyPy make from pthread_self() on POSIX systems. Called once, at module import.
 * In a fork()ed child the counts start again from zero (the parent's jobs are not the child's). */
void accel_runcore_set_main_thread(uint64_t thread_ident);

/* True on the interpreter's main thread (the one recorded above). */
int accel_runcore_on_main_thread(void);

/* ---- completions ---------------------------------------------------------------------------------- */

/* What the binding does when a job submitted with accel_runcore_submit ends: called exactly once per
 * job, on the driver's completion thread, with the job's result, its timing and its message ("" on
 * success), unless the door to Python is closed by then (the binding's user_data is then dropped
 * untouched). The hook must not unwind into the core, except for the forced unwind of a thread that
 * the interpreter ends, which must pass. */
typedef void (*accel_runcore_completion_hook)(void* user_data, accel_status status, const accel_job_timing* timing,
                                              const char* message);

/* Sets the hook, once, at module import (before any submission). */
void accel_runcore_set_completion_hook(accel_runcore_completion_hook hook);

/* Submits a job whose completion calls the hook with `user_data`; `flags` may hold
 * ACCEL_SUBMIT_PROFILE_NODES (the job then records its node times, accel_job_get_node_times; other bits
 * are ignored: the core chooses ACCEL_SUBMIT_NO_WAIT itself). Counted as in flight, and as a
 * callback pending, until the hook has returned (or, when this fails, not at all: the caller then
 * drops user_data itself). On the main thread a job that finds no free in-flight slot is retried
 * (ACCEL_SUBMIT_NO_WAIT, sleeps of 20 us growing to 1 ms) for at most one slice, then SLICE_OVER is
 * answered (nothing submitted); elsewhere it blocks in libaccel. ACCEL_RUNCORE_REFUSED once the exit
 * drain refuses jobs. The caller holds the model and the buffers during the call. */
accel_status accel_runcore_submit(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                                  accel_buffer* const* outputs, size_t output_count, int32_t priority,
                                  uint64_t core_mask, int64_t timeout_us, uint32_t flags, void* user_data,
                                  accel_job** out_job);

/* ---- synchronous runs ----------------------------------------------------------------------------- */

/* Runs a job (no callback) and waits for it, counted as in flight meanwhile. Off the main thread: one
 * blocking submission and one untimed wait. On the main thread the run waits at most a slice for a
 * slot and its job; if it is not over by then it answers SLICE_OVER and stays *pending* under `token`,
 * for accel_runcore_finish or accel_runcore_abandon. The run lives here, not in the binding, so an
 * exception between two slices (a KeyboardInterrupt) loses nothing: the binding abandons its token,
 * pending or not. Tokens tell apart the runs of one thread (one nested in a signal handler between two
 * slices of another). When the job ends: *timing (may be NULL) is filled, the job released, and its
 * result returned (the message is the thread's accel_last_error_message()). `owned_input` (may be
 * NULL) is a buffer the run owns and releases at its end, whatever happens. ACCEL_RUNCORE_REFUSED once
 * the exit drain refuses jobs. The caller holds the model and the buffers until the run is over. */
accel_status accel_runcore_run(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                               accel_buffer* const* outputs, size_t output_count, int32_t priority, uint64_t core_mask,
                               int64_t timeout_us, accel_job_timing* timing, accel_buffer* owned_input, uint64_t token);

/* One more slice of the run pending under `token` (on the thread that started it): as
 * accel_runcore_run, SLICE_OVER while it is not over. ACCEL_ERR_INTERNAL for an unknown token. */
accel_status accel_runcore_finish(uint64_t token);

/* Ends the run pending under `token` on this thread, if any: a job not started is cancelled, one
 * running finishes on its own and frees what it holds. */
void accel_runcore_abandon(uint64_t token);

/* ---- the fast paths' match ------------------------------------------------------------------------ */

/* 1 if an output is the buffer of an input or of another output, else 0: both bindings' fast paths
 * (CoreModel.run_tensors) then decline the call, and the Python path refuses it, naming both. They take
 * device-allocated buffers only, which share memory only by being one buffer. A NULL input (a buffer
 * the caller makes fresh for it) is none of the outputs. */
int accel_runcore_outputs_alias(accel_buffer* const* inputs, size_t input_count, accel_buffer* const* outputs,
                                size_t output_count);

/* ---- waiting for a job ---------------------------------------------------------------------------- */

/* The deadline of a wait of `timeout_s` seconds from now, for accel_runcore_wait: now for 0 or less
 * (one poll), ACCEL_RUNCORE_FOREVER from 1e9 s (some 30 years) up, else now plus the timeout rounded
 * up to a microsecond. The caller refuses NaN. */
int64_t accel_runcore_deadline(double timeout_s);

/* Waits for `job` until `deadline` (ACCEL_RUNCORE_FOREVER or from accel_runcore_deadline): its result
 * when it ends (the message is the thread's accel_last_error_message()), ACCEL_ERR_NOT_READY once the
 * deadline passed first, and on the main thread SLICE_OVER when a slice ended before either. */
accel_status accel_runcore_wait(accel_job* job, int64_t deadline);

/* ---- counts and the exit drain -------------------------------------------------------------------- */

/* Jobs submitted with accel_runcore_submit whose hook has not returned (accel.futures.inflight()). */
int64_t accel_runcore_callbacks_pending(void);

/* Whether completions still enter the binding (the exit drain has not closed the door yet). */
int accel_runcore_door_open(void);

/* What the exit drain asks of the binding. Each step is called on the thread that runs the drain,
 * which holds no lock of the core (and not the GIL: a step that touches Python takes it). */
typedef struct accel_runcore_exit_steps {
    /* Drops the binding's job handles (a job not started is cancelled), when the jobs in flight take
     * longer than the first wait. May be NULL. */
    void (*release_jobs)(void);
    /* The binding's last step, once no completion enters it any more (`limit_us` its bound): the
     * pybind11 core parks the threads still coming back to take the GIL. May be NULL. */
    void (*last_step)(int64_t limit_us);
} accel_runcore_exit_steps;

/* The interpreter-exit drain (CORE_API.md "Interpreter exit"), written once for both bindings and
 * called from each one's atexit hook (before finalization, the GIL released), in this order: refuse
 * new jobs; wait (up to ACCEL_RUNCORE_DRAIN_US) until no job is left on the device, that is until
 * every job in flight has ended or is inside its completion hook; if some are not, release the
 * binding's job handles and wait as long again; close the door, so that later completions skip the
 * hook; wait (up to ACCEL_RUNCORE_HOOKS_US) until no hook is running; the binding's last step.
 * A hook that never returns (a callback that blocks forever) is waited for as a hook, not as a job,
 * and the waits for jobs stop once none has ended for ACCEL_RUNCORE_HOOKS_US while a hook runs (the
 * jobs behind it on the driver's completion thread cannot end before it returns): such a hook costs
 * the exit about three times ACCEL_RUNCORE_HOOKS_US. Every wait is bounded, so exit never hangs
 * here. Returns 1 if everything ended in time, 0 if the drain gave up on a job or a hook. Called
 * once, on the interpreter's main thread. */
#define ACCEL_RUNCORE_DRAIN_US 5000000
#define ACCEL_RUNCORE_HOOKS_US 1000000
int accel_runcore_exit_drain(const accel_runcore_exit_steps* steps);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_RUNCORE_H */
