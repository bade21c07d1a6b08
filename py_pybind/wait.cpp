// wait.cpp - the GIL region of the waits behind CoreModel.run/submit and CoreJob.wait.
#include "wait.h"

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

namespace {
// A Dekker handshake between the threads taking the GIL and the exit hook (both sides sequentially
// consistent): a thread announces itself in g_taking before it reads g_parking, the hook sets
// g_parking before it reads g_taking, so either the hook waits for the thread or the thread parks.
std::atomic<int> g_taking{0};
std::atomic<bool> g_parking{false};

[[noreturn]] void park() {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(24));  // until the process exits
}
}  // namespace

void NoGil::acquire(PyThreadState* state) {
    if (accel_runcore_on_main_thread()) {  // the thread that finalizes is never ended by CPython
        PyEval_RestoreThread(state);
        return;
    }
    g_taking.fetch_add(1);
    if (g_parking.load() || interpreter_finalizing()) {
        g_taking.fetch_sub(1);
        park();
    }
    PyEval_RestoreThread(state);
    g_taking.fetch_sub(1);
}

void park_threads_at_exit(int64_t limit_us) {
    g_parking.store(true);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(limit_us);
    while (g_taking.load() > 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
}

bool NoGil::check_signals() {
    PyThreadState* state = state_;
    state_ = nullptr;  // if CPython ends this thread while it takes the GIL, no destructor retries
    acquire(state);
    int failed = PyErr_CheckSignals();
    state_ = PyEval_SaveThread();
    return failed == 0;
}

}  // namespace accel_py
