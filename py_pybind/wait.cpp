// wait.cpp - the signal-aware waits behind CoreModel.run/submit and CoreJob.wait: sliced job waits and
// slot waits that run the signal handlers at least every 20 ms on the main thread.
#include "wait.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace accel_py {

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing() != 0;
#else
    return _Py_IsFinalizing() != 0;
#endif
}

void NoGil::acquire(PyThreadState* state) {
    if (interpreter_finalizing())
        for (;;) std::this_thread::sleep_for(std::chrono::hours(24));  // parked until the process exits
    PyEval_RestoreThread(state);
}

bool NoGil::check_signals() {
    PyThreadState* state = state_;
    state_ = nullptr;  // if CPython ends this thread while it takes the GIL, no destructor retries
    acquire(state);
    int failed = PyErr_CheckSignals();
    state_ = PyEval_SaveThread();
    return failed == 0;
}

namespace {
std::atomic<unsigned long> g_signal_thread{0};
}  // namespace

void set_signal_thread(unsigned long thread_ident) { g_signal_thread.store(thread_ident); }

accel_status wait_job(NoGil& nogil, accel_job* job, int64_t timeout_us) {
    using Clock = std::chrono::steady_clock;
    const bool forever = timeout_us < 0 || timeout_us > 1000000000000000LL;  // > 10^15 us: never ends
    if (forever && PyThread_get_thread_ident() != g_signal_thread.load(std::memory_order_relaxed))
        return accel_job_wait(job, -1);
    const Clock::time_point deadline =
        forever ? Clock::time_point::max() : Clock::now() + std::chrono::microseconds(timeout_us);
    for (;;) {
        int64_t slice = kWaitSliceUs;
        if (!forever) {
            auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
            slice = std::max<int64_t>(0, std::min<int64_t>(left, kWaitSliceUs));
        }
        accel_status status = accel_job_wait(job, slice);
        if (status != ACCEL_ERR_NOT_READY) return status;  // the job's own result
        if (!forever && Clock::now() >= deadline) return ACCEL_ERR_NOT_READY;
        if (!nogil.check_signals()) return kWaitInterrupted;
    }
}

accel_status submit_job(NoGil& nogil, accel_model* model, accel_buffer* const* inputs, size_t input_count,
                        accel_buffer* const* outputs, size_t output_count, const accel_run_options& options,
                        accel_job** out_job) {
    using Clock = std::chrono::steady_clock;
    const bool caller_no_wait = (options.flags & ACCEL_SUBMIT_NO_WAIT) != 0;
    if (caller_no_wait || PyThread_get_thread_ident() != g_signal_thread.load(std::memory_order_relaxed))
        return accel_job_submit(model, inputs, input_count, outputs, output_count, &options, out_job);
    accel_run_options polling = options;
    polling.flags |= ACCEL_SUBMIT_NO_WAIT;
    auto sleep = std::chrono::microseconds(20);
    auto next_check = Clock::now() + std::chrono::microseconds(kWaitSliceUs);
    for (;;) {
        accel_status status = accel_job_submit(model, inputs, input_count, outputs, output_count, &polling, out_job);
        if (status != ACCEL_ERR_BUSY) return status;
        std::this_thread::sleep_for(sleep);
        sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
        if (Clock::now() >= next_check) {
            if (!nogil.check_signals()) return kWaitInterrupted;
            next_check = Clock::now() + std::chrono::microseconds(kWaitSliceUs);
        }
    }
}

}  // namespace accel_py
