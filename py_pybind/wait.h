// wait.h - waiting for a job with the GIL released, without becoming deaf to Ctrl-C.
#pragma once

#include <Python.h>
#include <accel/accel.h>

namespace accel_py {

// A region with the GIL released (raw CPython calls: no pybind11 bookkeeping on the hot path, and
// the wait loop can take the GIL back briefly). Construct it with the GIL held and call end() to
// take the GIL back; the destructor does so only on an exception path. Nothing inside the region
// may touch Python objects.
//
// Taking the GIL back once the interpreter is finalizing (a daemon thread still waiting at exit)
// would end the thread inside CPython (pthread_exit, a forced unwind that must not cross a
// destructor); such a thread is parked for good instead, as Python 3.14 itself does.
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

// Records the calling thread as the one that runs signal handlers (the main thread; called from the
// module's init, which asks the threading module which thread that is).
void set_signal_thread(unsigned long thread_ident);

// Longest a wait goes without checking for signals.
constexpr int64_t kWaitSliceUs = 20000;

// Returned by wait_job when a signal handler raised; the Python error is set.
constexpr accel_status kWaitInterrupted = -1;

// Waits for `job` inside `nogil`: accel_job_wait in slices of at most kWaitSliceUs, running the
// signal handlers between slices. timeout_us < 0 waits forever. Only the main thread runs signal
// handlers, so another thread waiting forever makes one untimed wait (a timed wait costs about a
// microsecond more in the kernel). Returns the job's own result (its
// message is the thread's accel_last_error_message()), ACCEL_ERR_NOT_READY if `timeout_us` passed
// first, or kWaitInterrupted.
accel_status wait_job(NoGil& nogil, accel_job* job, int64_t timeout_us);

// accel_job_submit inside `nogil`, interruptible by Ctrl-C: a submission that must wait for an
// in-flight slot (max_inflight reached) blocks in libaccel on other threads, but on the main thread
// it polls with ACCEL_SUBMIT_NO_WAIT (sleeps of 20 us growing to 1 ms) and runs the signal handlers
// every 20 ms. Returns accel_job_submit's status or kWaitInterrupted.
accel_status submit_job(NoGil& nogil, accel_model* model, accel_buffer* const* inputs, size_t input_count,
                        accel_buffer* const* outputs, size_t output_count, const accel_run_options& options,
                        accel_job** out_job);

}  // namespace accel_py
