// job.h - completion callbacks and the interpreter-exit drain, over the run core.
#pragma once

#include <accel/accel.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace accel_py {

// What a run or a submission the run core refused (the interpreter is exiting) raises: ClosedError.
[[noreturn]] void raise_refused();

// Frees the Python thread states of driver threads that ran callbacks and have ended. GIL held.
void free_dead_thread_states();

// The job's timing as (queued_ns, started_ns, finished_ns, core). GIL held.
py::tuple timing_tuple(const accel_job_timing& timing);

// Sets up the run core (accel_runcore.h) for this module: its completion hook (which calls the
// callable given to accel_runcore_submit as user_data, with the GIL, then drops it), the main
// thread, and the atexit hook that drains it: new jobs refused, the jobs in flight finished and their
// callbacks run before the interpreter finalizes, every later callback a no-op.
void install_core_hooks();

}  // namespace accel_py
