// job.cpp - CoreJob (wait, done, timing, release), the completion hook the run core calls, and the
// interpreter-exit drain over the run core.
#include "job.h"

#include <pybind11/stl.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

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
// The run core (accel_runcore.h) counts the jobs, guards the door to Python and drains at exit; what
// is left here is taking the GIL on the driver's thread and calling the Python callable.

namespace {

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
        if (!state || !accel_runcore_door_open()) return;  // after exit the interpreter frees it itself
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

// Calls the callable with raw C API calls and a CallbackGil on the heap: nothing in this frame has a
// destructor that touches Python. A callback still running when the interpreter finalizes (one that
// never returns, but loops through code that drops and takes the GIL) is ended by CPython inside the
// take (a forced unwind through this frame), and a destructor then would give up the GIL that the
// finalizing thread holds. Its thread state, the callable and the arguments are then left as they are.
void call_python(PyObject* callable, accel_status status, const char* message, const accel_job_timing& t) {
    auto* gil = new CallbackGil;
    PyObject* args = nullptr;
    if (PyObject* text = PyUnicode_DecodeUTF8(message, static_cast<Py_ssize_t>(std::strlen(message)), "replace"))
        args = Py_BuildValue("(iN(KKKi))", static_cast<int>(status), text, (unsigned long long)t.queued_ns,
                             (unsigned long long)t.started_ns, (unsigned long long)t.finished_ns, (int)t.core);
    PyObject* result = args ? PyObject_Call(callable, args, nullptr) : nullptr;
    if (!result) PyErr_WriteUnraisable(callable);
    Py_XDECREF(result);
    Py_XDECREF(args);
    Py_DECREF(callable);
    delete gil;
}

// The run core's completion hook, on the driver's completion thread; user_data is the callable (one
// reference). No C++ exception may leave it (except the forced unwind of a thread that CPython ends,
// which must pass). Once finalization began Python may not be entered any more: the callable is then
// leaked rather than touched without the GIL.
void completion_hook(void* user_data, accel_status status, const accel_job_timing* timing, const char* message) {
    try {
        if (!interpreter_finalizing()) call_python(static_cast<PyObject*>(user_data), status, message, *timing);
#if defined(__GLIBCXX__)
    } catch (abi::__forced_unwind&) {
        throw;
#endif
    } catch (...) {
    }
}

// The drain's first step for this binding: the CoreJob handles go (a job not started is cancelled).
// The drain runs without the GIL and the list is the GIL's.
void release_jobs_at_exit() {
    PyGILState_STATE gil = PyGILState_Ensure();
    CoreJob::release_all();
    PyGILState_Release(gil);
}

// The run core's exit drain (atexit, before finalization, while other threads may still take the
// GIL), the GIL released while it waits.
void on_exit() {
    static const accel_runcore_exit_steps steps = {release_jobs_at_exit, park_threads_at_exit};
    NoGil nogil;
    accel_runcore_exit_drain(&steps);
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

void raise_refused() { raise_status(ACCEL_ERR_CLOSED, "the interpreter is exiting: no new jobs"); }

void install_core_hooks() {
    accel_runcore_set_completion_hook(&completion_hook);
    accel_runcore_set_main_thread(
        py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long long>());
    py::module_::import("atexit").attr("register")(py::cpp_function(&on_exit));
}

// ---- CoreJob ------------------------------------------------------------------------------------

namespace {

void job_wait(const CoreJob& self, std::optional<double> timeout) {
    int64_t deadline = ACCEL_RUNCORE_FOREVER;
    double seconds = 0;
    if (timeout) {
        seconds = *timeout;
        if (std::isnan(seconds)) throw py::value_error("timeout is NaN");
        deadline = accel_runcore_deadline(seconds);
    }
    accel_job* job = self.get();
    accel_status status;
    std::string message;
    accel_job_retain(job);  // release() from another thread may run while the GIL is released
    {
        NoGil nogil;
        status = slices(nogil, accel_runcore_wait(job, deadline), [&] { return accel_runcore_wait(job, deadline); });
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

// [(started_ns, finished_ns)] per node of a job submitted with ACCEL_SUBMIT_PROFILE_NODES.
py::list job_node_times(const CoreJob& self) {
    size_t count = 0;
    check(accel_job_get_node_times(self.get(), nullptr, 0, &count));
    std::vector<accel_node_time> times(count);
    if (count) check(accel_job_get_node_times(self.get(), times.data(), count, &count));
    py::list out;
    for (const accel_node_time& t : times) out.append(py::make_tuple(t.started_ns, t.finished_ns));
    return out;
}

}  // namespace

void bind_job(py::module_& m) {
    py::class_<CoreJob>(m, "CoreJob", "A submitted job (one accel_job reference).")
        .def("wait", &job_wait, py::arg("timeout") = py::none(),
             "Waits (GIL released, Ctrl-C aware); raises if the job failed or `timeout` seconds passed.")
        .def("done", &job_done, "True once the job has finished (accel_job_poll).")
        .def("timing", &job_timing, "(queued_ns, started_ns, finished_ns, core)")
        .def("node_times", &job_node_times, "[(started_ns, finished_ns)] per node (ACCEL_SUBMIT_PROFILE_NODES)")
        .def("release", &CoreJob::release, "Drops the job reference (idempotent); a job not started is cancelled.");
}

}  // namespace accel_py
