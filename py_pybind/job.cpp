// job.cpp - CoreJob (wait, done, timing, release), the completion-callback trampoline, and the
// interpreter-exit protocol for callbacks still in flight.
#include "job.h"

#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <thread>

#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

#include "core.h"
#include "errors.h"
#include "wait.h"

namespace accel_py {

namespace {
CoreJob* g_live_jobs = nullptr;  // guarded by the GIL
}  // namespace

CoreJob::CoreJob() {
    next_ = g_live_jobs;
    if (next_) next_->prev_ = this;
    g_live_jobs = this;
}

CoreJob::~CoreJob() {
    if (prev_) prev_->next_ = next_;
    else g_live_jobs = next_;
    if (next_) next_->prev_ = prev_;
    accel_job_release(handle);
}

accel_job* CoreJob::get() const {
    if (!handle) raise_status(ACCEL_ERR_CLOSED, "the job is released");
    return handle;
}

void CoreJob::release() {
    accel_job* job = handle;
    handle = nullptr;
    accel_job_release(job);
}

void CoreJob::release_all() {
    for (CoreJob* j = g_live_jobs; j; j = j->next_) j->release();
}

py::tuple timing_tuple(const accel_job_timing& t) {
    PyObject* tuple = PyTuple_New(4);
    if (!tuple) throw py::error_already_set();
    py::tuple result = py::reinterpret_steal<py::tuple>(tuple);
    PyObject* items[4] = {PyLong_FromUnsignedLongLong(t.queued_ns), PyLong_FromUnsignedLongLong(t.started_ns),
                          PyLong_FromUnsignedLongLong(t.finished_ns), PyLong_FromLong(t.core)};
    for (int i = 0; i < 4; i++) {
        if (!items[i]) {
            for (int j = i + 1; j < 4; j++) Py_XDECREF(items[j]);
            throw py::error_already_set();
        }
        PyTuple_SET_ITEM(tuple, i, items[i]);
    }
    return result;
}

// ---- completion callbacks and interpreter exit ----------------------------------------------------

namespace {

// Jobs submitted through this core and not finished yet (for a job with a Python callback: until the
// callback has returned; for CoreModel.run: until its wait has seen the job end).
std::atomic<long> g_inflight{0};
// Trampolines past their "may I call Python?" check and not yet done with the GIL.
std::atomic<long> g_active{0};
// Set when the atexit hook starts: no new submissions (they would outlive the interpreter).
std::atomic<bool> g_refuse_submit{false};
// Set when the atexit hook has waited: from then on callbacks never enter Python.
std::atomic<bool> g_no_python{false};

// ---- one Python thread state per completion thread -------------------------------------------------
// A fresh PyThreadState for every callback (what gil_scoped_acquire does on a foreign thread) costs
// ~10 us: it maps and unmaps a frame stack each time. So a driver thread keeps the state it got for
// its first callback (one extra count makes gil_scoped_acquire leave it alive). When the thread
// ends, its state goes to a list (no GIL there) that the next core call holding the GIL frees.

struct DeadState {
    PyThreadState* state;
    DeadState* next;
};
std::atomic<DeadState*> g_dead_states{nullptr};  // never destroyed: threads may end after exit

struct KeptState {
    PyThreadState* state = nullptr;
    ~KeptState() {  // the thread ends: no GIL, perhaps no interpreter any more
        if (!state || g_no_python.load()) return;  // after exit the interpreter frees it itself
        auto* node = new (std::nothrow) DeadState{state, g_dead_states.load()};
        if (!node) return;
        while (!g_dead_states.compare_exchange_weak(node->next, node)) {
        }
    }
};
thread_local KeptState t_kept;

// Takes the GIL on a driver thread, keeping the thread state that gil_scoped_acquire creates there.
// A thread that already had a state of its own (one Python made) is left as it is.
class CallbackGil {
public:
    CallbackGil() : fresh_(!t_kept.state && !PyGILState_GetThisThreadState()) {
        if (fresh_) {
            gil_.inc_ref();  // never back to zero: the state outlives this callback
            t_kept.state = PyThreadState_Get();
        }
    }

private:
    bool fresh_;
    py::gil_scoped_acquire gil_;
};

struct PendingCallback {
    PyObject* callable;  // one reference, dropped with the GIL after the call
};

void call_python(PyObject* callable, accel_status status, const std::string& message, const accel_job_timing& timing) {
    CallbackGil gil;
    try {
        py::handle fn(callable);
        fn(status, utf8(message.c_str()), timing_tuple(timing));
    } catch (py::error_already_set& e) {
        e.discard_as_unraisable(py::reinterpret_borrow<py::object>(callable));
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        PyErr_WriteUnraisable(callable);
    }
    Py_DECREF(callable);
}

// Runs on the driver's completion thread. No C++ exception may leave it (except the forced unwind
// of a thread that CPython ends, which must pass).
void trampoline(accel_job* job, accel_status status, void* user_data) {
    auto* pending = static_cast<PendingCallback*>(user_data);
    g_active.fetch_add(1);
    try {
        // After the atexit hook (or once finalization began) Python may not be entered any more:
        // the callable is then leaked rather than touched without the GIL.
        if (!g_no_python.load() && !interpreter_finalizing()) {
            std::string message;
            if (status != ACCEL_OK) {
                accel_job_wait(job, 0);  // inside the callback: the job's result and message, no wait
                message = accel_last_error_message();
            }
            accel_job_timing timing;
            std::memset(&timing, 0, sizeof timing);
            timing.struct_size = sizeof timing;
            accel_job_get_timing(job, &timing);
            call_python(pending->callable, status, message, timing);
        }
#if defined(__GLIBCXX__)
    } catch (abi::__forced_unwind&) {
        throw;
#endif
    } catch (...) {
    }
    delete pending;
    g_active.fetch_sub(1);
    end_job();
}

void wait_until_zero(const std::atomic<long>& counter, std::chrono::milliseconds limit) {
    auto give_up = std::chrono::steady_clock::now() + limit;
    while (counter.load() > 0 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// atexit (before finalization, while other threads may still take the GIL): refuse new jobs and
// let the jobs in flight finish and their callbacks run (the GIL is released meanwhile); if that
// takes too long, cancel the jobs that have not started (their CoreJob handles are released) and
// wait for the running ones. Then close the door to Python and wait for the trampolines already
// inside. Every wait is bounded, so exit never hangs.
void on_exit() {
    g_refuse_submit.store(true);
    {
        NoGil nogil;
        wait_until_zero(g_inflight, std::chrono::seconds(5));
        nogil.end();
    }
    if (g_inflight.load() > 0) {
        CoreJob::release_all();
        NoGil nogil;
        wait_until_zero(g_inflight, std::chrono::seconds(5));
        nogil.end();
    }
    g_no_python.store(true);
    NoGil nogil;
    wait_until_zero(g_active, std::chrono::seconds(1));
    nogil.end();
}

}  // namespace

void free_dead_thread_states() {
    if (!g_dead_states.load(std::memory_order_relaxed)) return;
    for (DeadState* node = g_dead_states.exchange(nullptr); node;) {
        PyThreadState_Clear(node->state);
        PyThreadState_Delete(node->state);
        DeadState* next = node->next;
        delete node;
        node = next;
    }
}

void begin_job() {
    g_inflight.fetch_add(1);  // before the check, so the hook either sees this job or refuses it
    if (g_refuse_submit.load()) {
        g_inflight.fetch_sub(1);
        raise_status(ACCEL_ERR_CLOSED, "the interpreter is exiting: no new jobs");
    }
}

void end_job() { g_inflight.fetch_sub(1); }

void attach_callback(accel_run_options& options, py::handle callable) {
    free_dead_thread_states();
    begin_job();
    options.callback = &trampoline;
    options.user_data = new PendingCallback{callable.inc_ref().ptr()};
}

void discard_callback(accel_run_options& options) {
    if (auto* pending = static_cast<PendingCallback*>(options.user_data)) {
        Py_DECREF(pending->callable);
        delete pending;
    }
    options.user_data = nullptr;
    options.callback = nullptr;
    end_job();
}

void install_exit_hook(py::module_& m) {
    py::module_::import("atexit").attr("register")(py::cpp_function(&on_exit));
    (void)m;
}

// ---- CoreJob ------------------------------------------------------------------------------------

namespace {

void job_wait(const CoreJob& self, std::optional<double> timeout) {
    int64_t timeout_us = -1;
    double seconds = 0;
    if (timeout) {
        seconds = *timeout;
        if (std::isnan(seconds)) throw py::value_error("timeout is NaN");
        if (seconds <= 0) timeout_us = 0;
        else if (seconds < 1e9) timeout_us = (int64_t)std::ceil(seconds * 1e6);
    }
    accel_job* job = self.get();
    accel_status status;
    std::string message;
    accel_job_retain(job);  // release() from another thread may run while the GIL is released
    {
        NoGil nogil;
        status = wait_job(nogil, job, timeout_us);
        if (status != ACCEL_OK && status != kWaitInterrupted) message = accel_last_error_message();
        accel_job_release(job);
        nogil.end();
    }
    if (status == kWaitInterrupted) throw py::error_already_set();
    if (status == ACCEL_ERR_NOT_READY) {
        char text[96];
        std::snprintf(text, sizeof text, "the job did not finish within %g s", seconds);
        raise_status(status, text);
    }
    if (status != ACCEL_OK) raise_status(status, message);
}

bool job_done(const CoreJob& self) {
    int32_t done = 0;
    check(accel_job_poll(self.get(), &done));
    return done != 0;
}

py::tuple job_timing(const CoreJob& self) {
    accel_job_timing timing;
    std::memset(&timing, 0, sizeof timing);
    timing.struct_size = sizeof timing;
    check(accel_job_get_timing(self.get(), &timing));
    return timing_tuple(timing);
}

}  // namespace

void bind_job(py::module_& m) {
    py::class_<CoreJob>(m, "CoreJob", "A submitted job (one accel_job reference).")
        .def("wait", &job_wait, py::arg("timeout") = py::none(),
             "Waits (GIL released, Ctrl-C aware); raises if the job failed or `timeout` seconds passed.")
        .def("done", &job_done, "True once the job has finished (accel_job_poll).")
        .def("timing", &job_timing, "(queued_ns, started_ns, finished_ns, core)")
        .def("release", &CoreJob::release, "Drops the job reference (idempotent); a job not started is cancelled.");
}

}  // namespace accel_py
