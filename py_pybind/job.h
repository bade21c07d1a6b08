// job.h - completion callbacks: the trampoline the driver calls on its completion thread, and the
// interpreter-exit protocol that keeps it from touching a finalizing interpreter.
#pragma once

#include <accel/accel.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace accel_py {

// Every job the core submits is counted from its submission until it has finished (for a job with
// a Python callback: until the callback has returned), so that the atexit hook can let them finish.
// begin_job (GIL held, right before accel_job_submit) raises ClosedError once the interpreter is
// exiting; end_job counts the end (any thread).
void begin_job();
void end_job();

// Points options.callback/user_data at the trampoline that calls `callable(status, message, timing)`
// exactly once, on the driver's completion thread with the GIL held, then drops it and calls
// end_job. Includes begin_job. GIL held; if the submission then fails, call discard_callback.
void attach_callback(accel_run_options& options, py::handle callable);
void discard_callback(accel_run_options& options);

// Frees the Python thread states of driver threads that ran callbacks and have ended. GIL held.
void free_dead_thread_states();

// The job's timing as (queued_ns, started_ns, finished_ns, core). GIL held.
py::tuple timing_tuple(const accel_job_timing& timing);

// Registers the atexit hook: it refuses new jobs, lets the jobs in flight finish and their callbacks
// run before the interpreter finalizes, then makes every later callback a no-op.
void install_exit_hook(py::module_& m);

}  // namespace accel_py
