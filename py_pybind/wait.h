// wait.h - waiting with the GIL released, without becoming deaf to Ctrl-C: the GIL region, and the
// loop that runs the signal handlers between two slices of the run core.
#pragma once

#include <Python.h>
#include <accel/accel.h>

#include "accel_runcore.h"

namespace accel_py {

// A region with the GIL released (raw CPython calls: no pybind11 bookkeeping on the hot path, and
// the wait loop can take the GIL back briefly). Construct it with the GIL held and call end() to
// take the GIL back; the destructor does so only on an exception path. Nothing inside the region
// may touch Python objects.
//
// Taking the GIL back once the interpreter is finalizing (a daemon thread still waiting at exit)
// would end the thread inside CPython (pthread_exit, a forced unwind whose cleanups would drop
// Python references without the GIL); such a thread is parked for good instead, as Python 3.14
// itself does. A check of Py_IsFinalizing alone leaves a window (finalization may start between
// the check and the take), so the exit hook closes it with park_threads_at_exit.
class NoGil {
public:
    NoGil() : state_(PyEval_SaveThread()) {}
    ~NoGil() {
        if (state_) acquire(state_);
    }
    NoGil(const NoGil&) = delete;
    NoGil& operator=(const NoGil&) = delete;

    // Takes the GIL back (idempotent).
    void end() {
        PyThreadState* state = state_;
        state_ = nullptr;
        if (state) acquire(state);
    }

    // Takes the GIL, runs the pending signal handlers (PyErr_CheckSignals) and drops the GIL again.
    // False when a handler raised (KeyboardInterrupt...): the Python error is then set.
    bool check_signals();

private:
    static void acquire(PyThreadState* state);
    PyThreadState* state_;
};

// True once the interpreter has started finalizing: no thread but the main one may enter it.
bool interpreter_finalizing();

// From the interpreter-exit hook, with the GIL released, as its last step: from now on a thread other
// than the main one that comes back to take the GIL is parked for good; waits (up to `limit_us`) for
// those already on their way to it, so none is left between its check and the take when the
// interpreter starts finalizing.
void park_threads_at_exit(int64_t limit_us);

// Returned by slices() when a signal handler raised; the Python error is set. Not an accel_status
// value, nor one of the run core's answers.
constexpr accel_status kWaitInterrupted = -3;

// Completes a call of the run core (accel_runcore.h) inside `nogil`: while it answers
// ACCEL_RUNCORE_SLICE_OVER (the main thread's slice ended first), runs the signal handlers and calls
// `again`. Returns the first other answer, or kWaitInterrupted.
template <class Again>
accel_status slices(NoGil& nogil, accel_status status, Again again) {
    while (status == ACCEL_RUNCORE_SLICE_OVER) {
        if (!nogil.check_signals()) return kWaitInterrupted;
        status = again();
    }
    return status;
}

}  // namespace accel_py
