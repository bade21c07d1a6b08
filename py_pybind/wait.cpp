// wait.cpp - the GIL region of the waits behind CoreModel.run/submit and CoreJob.wait.
#include "wait.h"

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

}  // namespace accel_py
