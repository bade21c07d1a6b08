// model.cpp - CoreModel: tensor metadata, run (submit + sliced wait, GIL released) and submit with a
// completion callback.
#include <atomic>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__GLIBCXX__)
#include <cxxabi.h>
#endif

#include "core.h"
#include "errors.h"
#include "fast_run.h"
#include "job.h"
#include "run.h"
#include "wait.h"

namespace accel_py {

CoreModel::CoreModel() = default;
CoreModel::~CoreModel() { accel_model_release(handle); }

accel_model* CoreModel::get() const {
    if (!handle) raise_status(ACCEL_ERR_CLOSED, "the model is released");
    return handle;
}

namespace {

// ---- metadata -----------------------------------------------------------------------------------

py::tuple int_tuple(const int64_t* values, uint32_t n) {
    py::tuple t(n);
    for (uint32_t i = 0; i < n; i++) t[i] = py::int_((long long)values[i]);
    return t;
}

py::object quant_tuple(const accel_quantization& q) {
    if (q.type == ACCEL_QUANT_NONE) return py::none();
    py::tuple scales(q.scales ? q.count : 0);
    if (q.scales)
        for (uint32_t i = 0; i < q.count; i++) scales[i] = py::float_(q.scales[i]);
    py::object zero_points = py::none();
    if (q.zero_points) {
        py::tuple z(q.count);
        for (uint32_t i = 0; i < q.count; i++) z[i] = py::int_(q.zero_points[i]);
        zero_points = std::move(z);
    }
    py::object shifts = py::none();
    if (q.shifts) {
        py::tuple s(q.count);
        for (uint32_t i = 0; i < q.count; i++) s[i] = py::int_(q.shifts[i]);
        shifts = std::move(s);
    }
    return py::make_tuple(q.type, q.axis, scales, zero_points, shifts);
}

// None for a plain tensor, else (format, plane_offsets, width, height, width_align, height_align) (ABI 1.2).
py::object image_tuple(const accel_tensor_info& t) {
    if (t.image_format == ACCEL_IMAGE_NONE) return py::none();
    const uint32_t planes = t.plane_count <= 2 ? t.plane_count : 2;
    py::tuple offsets(planes);
    for (uint32_t i = 0; i < planes; i++) offsets[i] = py::int_((unsigned long long)t.plane_offset[i]);
    return py::make_tuple(t.image_format, offsets, t.image_width, t.image_height, t.width_align, t.height_align);
}

// (name, shape, dtype, layout, strides, byte_size, quant, image) for every input or output.
py::list tensor_infos(const CoreModel& self, bool outputs) {
    accel_model* model = self.get();
    size_t count = 0;
    check(outputs ? accel_model_output_count(model, &count) : accel_model_input_count(model, &count));
    py::list infos;
    for (size_t i = 0; i < count; i++) {
        accel_tensor_info t;
        std::memset(&t, 0, sizeof t);
        t.struct_size = sizeof t;
        check(outputs ? accel_model_output_info(model, i, &t) : accel_model_input_info(model, i, &t));
        uint32_t ndim = t.ndim <= ACCEL_MAX_DIMS ? t.ndim : ACCEL_MAX_DIMS;
        infos.append(py::make_tuple(utf8(t.name), int_tuple(t.shape, ndim), t.dtype, t.layout,
                                    int_tuple(t.strides, ndim), t.byte_size, quant_tuple(t.quant), image_tuple(t)));
    }
    return infos;
}

// ---- submission ---------------------------------------------------------------------------------

// The accel_buffer handles of a sequence of CoreBuffers. The CoreBuffers are held (one reference
// each) so they stay alive while the GIL is released, even if the caller's list changes meanwhile.
// Destroy with the GIL held. Outputs (`written`) may not be read-only memory.
class BufferArgs {
public:
    BufferArgs(py::handle sequence, const char* what, bool written = false) {
        PyObject* seq = sequence.ptr();
        py::object converted;
        if (!PyList_CheckExact(seq) && !PyTuple_CheckExact(seq)) {
            converted = py::reinterpret_steal<py::object>(PySequence_Tuple(seq));
            if (!converted) throw py::error_already_set();
            seq = converted.ptr();
        }
        const size_t n = (size_t)PySequence_Fast_GET_SIZE(seq);
        PyObject** items = PySequence_Fast_ITEMS(seq);
        if (n > kInline) {
            large_handles_.resize(n);
            large_objects_.resize(n);
        }
        accel_buffer** handles = data_for(n);
        PyObject** objects = n > kInline ? large_objects_.data() : inline_objects_;
        for (size_t i = 0; i < n; i++) {
            const CoreBuffer& buffer = core_buffer_of(items[i], what, (Py_ssize_t)i);
            if (written && buffer.readonly)
                raise_status(ACCEL_ERR_INVALID_ARGUMENT, std::string(what) + "[" + std::to_string(i) +
                                                             "] is read-only memory (imported from a read-only "
                                                             "object such as bytes): the device cannot write into it");
            imported_ = imported_ || buffer.source != nullptr;
            handles[i] = buffer.handle;
            objects[i] = items[i];
            Py_INCREF(items[i]);
            count_ = i + 1;  // the destructor drops exactly the references taken
        }
    }
    ~BufferArgs() {
        PyObject** objects = count_ > kInline ? large_objects_.data() : inline_objects_;
        for (size_t i = 0; i < count_; i++) Py_DECREF(objects[i]);
    }
    BufferArgs(const BufferArgs&) = delete;
    BufferArgs& operator=(const BufferArgs&) = delete;

    accel_buffer** data() { return data_for(count_); }
    size_t size() const { return count_; }
    // Whether any is memory imported from a Python object: a job must then hold the CoreBuffers.
    bool imported() const { return imported_; }
    py::tuple held() const {
        PyObject* const* objects = count_ > kInline ? large_objects_.data() : inline_objects_;
        py::tuple t(count_);
        for (size_t i = 0; i < count_; i++) t[i] = py::reinterpret_borrow<py::object>(objects[i]);
        return t;
    }

private:
    static constexpr size_t kInline = 8;
    accel_buffer** data_for(size_t n) { return n > kInline ? large_handles_.data() : inline_handles_; }
    size_t count_ = 0;
    bool imported_ = false;
    accel_buffer* inline_handles_[kInline] = {};
    PyObject* inline_objects_[kInline] = {};
    std::vector<accel_buffer*> large_handles_;
    std::vector<PyObject*> large_objects_;
};

}  // namespace

void run_blocking(accel_model* model, accel_buffer* const* inputs, size_t input_count, accel_buffer* const* outputs,
                  size_t output_count, int32_t priority, uint64_t core_mask, int64_t timeout_us,
                  accel_job_timing* timing) {
    static std::atomic<uint64_t> tokens{0};
    const uint64_t token = ++tokens;
    accel_status status;
    std::string message;
    accel_model_retain(model);  // release() from another thread may run while the GIL is released
    {
        NoGil nogil;
        status = accel_runcore_run(model, inputs, input_count, outputs, output_count, priority, core_mask, timeout_us,
                                   timing, nullptr, token);
        status = slices(nogil, status, [&] { return accel_runcore_finish(token); });
        // Interrupted: the run ends here (a job not started is cancelled, a running one frees itself).
        if (status == kWaitInterrupted) accel_runcore_abandon(token);
        else if (status != ACCEL_OK && status != ACCEL_RUNCORE_REFUSED) message = accel_last_error_message();
        accel_model_release(model);  // void: the last error stays
        nogil.end();
    }
    if (status == kWaitInterrupted) throw py::error_already_set();
    if (status == ACCEL_RUNCORE_REFUSED) raise_refused();
    if (status != ACCEL_OK) raise_status(status, message);
}

namespace {

std::unique_ptr<CoreJob> model_submit(const CoreModel& self, py::handle inputs, py::handle outputs, py::handle callback,
                                      int32_t priority, uint64_t core_mask, int64_t timeout_us, uint32_t flags);

py::tuple model_run(const CoreModel& self, py::handle inputs, py::handle outputs, int32_t priority, uint64_t core_mask,
                    int64_t timeout_us) {
    accel_model* model = self.get();
    BufferArgs in(inputs, "inputs");
    BufferArgs out(outputs, "outputs", true);
    if (in.imported() || out.imported()) {
        // Memory imported from Python objects: a run the run core abandons (Ctrl-C) could still be
        // reading or writing it once they are gone. A submission holds them until its completion
        // (model_submit), and this waits for it; the job goes with `job` (cancelled if not started).
        py::object job = py::cast(
            model_submit(self, inputs, outputs, py::cpp_function([](py::args) {}), priority, core_mask, timeout_us, 0));
        job.attr("wait")();
        return job.attr("timing")();
    }
    accel_job_timing timing;
    std::memset(&timing, 0, sizeof timing);
    timing.struct_size = sizeof timing;
    run_blocking(model, in.data(), in.size(), out.data(), out.size(), priority, core_mask, timeout_us, &timing);
    return timing_tuple(timing);
}

// ---- CoreModel.run as a METH_FASTCALL method: the hot path skips pybind11's generic dispatcher
// (about 0.25 us a call); arguments and errors behave as pybind11's would (TypeError for wrong types).

constexpr const char* kRunArgNames[5] = {"inputs", "outputs", "priority", "core_mask", "timeout_us"};

template <class T>
T int_arg(PyObject* value, int index) {
    if (PyFloat_Check(value) || !PyIndex_Check(value))
        throw py::type_error(std::string("run(): ") + kRunArgNames[index] + " must be an int, not " +
                             Py_TYPE(value)->tp_name);
    py::object number = py::reinterpret_steal<py::object>(PyNumber_Index(value));
    if (!number) throw py::error_already_set();
    if (std::is_signed<T>::value) {
        long long v = PyLong_AsLongLong(number.ptr());
        if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
        if (v < (long long)std::numeric_limits<T>::min() || v > (long long)std::numeric_limits<T>::max())
            throw py::value_error(std::string("run(): ") + kRunArgNames[index] + " is out of range");
        return (T)v;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(number.ptr());
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        throw py::value_error(std::string("run(): ") + kRunArgNames[index] + " is out of range");
    }
    return (T)v;
}

PyObject* run_fastcall(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    try {
        PyObject* values[5] = {};
        if (nargs > 5) throw py::type_error("run() takes at most 5 arguments (" + std::to_string(nargs) + " given)");
        for (Py_ssize_t i = 0; i < nargs; i++) values[i] = args[i];
        const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (Py_ssize_t k = 0; k < nkw; k++) {
            PyObject* name = PyTuple_GET_ITEM(kwnames, k);
            int index = -1;
            for (int i = 0; i < 5 && index < 0; i++)
                if (PyUnicode_CompareWithASCIIString(name, kRunArgNames[i]) == 0) index = i;
            if (index < 0)
                throw py::type_error("run() got an unexpected keyword argument '" + py::cast<std::string>(name) + "'");
            if (values[index])
                throw py::type_error(std::string("run() got multiple values for argument '") + kRunArgNames[index] +
                                     "'");
            values[index] = args[nargs + k];
        }
        if (!values[0] || !values[1])
            throw py::type_error(std::string("run() missing required argument '") + kRunArgNames[values[0] ? 1 : 0] +
                                 "'");
        const CoreModel& model = py::cast<const CoreModel&>(py::handle(self));
        int32_t priority = values[2] ? int_arg<int32_t>(values[2], 2) : 0;
        uint64_t core_mask = values[3] ? int_arg<uint64_t>(values[3], 3) : 0;
        int64_t timeout_us = values[4] ? int_arg<int64_t>(values[4], 4) : 0;
        return model_run(model, values[0], values[1], priority, core_mask, timeout_us).release().ptr();
    } catch (py::error_already_set& e) {
        e.restore();
#if defined(__GLIBCXX__)
    } catch (abi::__forced_unwind&) {
        throw;
#endif
    } catch (py::builtin_exception& e) {  // type_error, value_error, cast_error...
        e.set_error();
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "CoreModel.run: unknown C++ exception");
    }
    return nullptr;
}

PyMethodDef g_run_def = {
    "run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(&run_fastcall)),
    METH_FASTCALL | METH_KEYWORDS,
    "run($self, /, inputs, outputs, priority=0, core_mask=0, timeout_us=0)\n--\n\n"
    "Submit, wait (GIL released, Ctrl-C aware), release; returns (queued_ns, started_ns, finished_ns, core)."};

std::unique_ptr<CoreJob> model_submit(const CoreModel& self, py::handle inputs, py::handle outputs, py::handle callback,
                                      int32_t priority, uint64_t core_mask, int64_t timeout_us, uint32_t flags) {
    accel_model* model = self.get();
    if (!PyCallable_Check(callback.ptr())) throw py::type_error("callback must be callable");
    BufferArgs in(inputs, "inputs");
    BufferArgs out(outputs, "outputs", true);
    auto job = std::make_unique<CoreJob>();
    free_dead_thread_states();
    py::object call = py::reinterpret_borrow<py::object>(callback);
    if (in.imported() || out.imported()) {
        // The job reads (writes) the memory of Python objects: the completion holds their CoreBuffers
        // (which hold the objects) until the job is over.
        py::tuple held = py::make_tuple(in.held(), out.held());
        call = py::cpp_function([callback = call, held](py::args args) {
            (void)held;  // held, not used: dropped with this function after the call
            return callback(*args);
        });
    }
    PyObject* callable = call.inc_ref().ptr();  // the completion hook's, dropped there
    accel_status status;
    std::string message;
    accel_model_retain(model);
    {
        NoGil nogil;  // submission blocks (Ctrl-C aware) while max_inflight jobs are in flight
        auto submit = [&] {
            return accel_runcore_submit(model, in.data(), in.size(), out.data(), out.size(), priority, core_mask,
                                        timeout_us, flags, callable, &job->handle);
        };
        status = slices(nogil, submit(), submit);
        accel_model_release(model);
        if (status != ACCEL_OK && status != kWaitInterrupted && status != ACCEL_RUNCORE_REFUSED)
            message = accel_last_error_message();
        nogil.end();
    }
    if (status != ACCEL_OK) {
        Py_DECREF(callable);  // no completion will come
        if (status == kWaitInterrupted) throw py::error_already_set();
        if (status == ACCEL_RUNCORE_REFUSED) raise_refused();
        raise_status(status, message);
    }
    return job;
}

// (name, op_type) per node, as the device runs them (accel_model_get_node_info).
py::list model_nodes(const CoreModel& self) {
    accel_model* model = self.get();
    size_t count = 0;
    check(accel_model_get_node_count(model, &count));
    py::list nodes;
    for (size_t i = 0; i < count; i++) {
        accel_node_info info;
        std::memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        check(accel_model_get_node_info(model, i, &info));
        nodes.append(py::make_tuple(utf8(info.name), utf8(info.op_type)));
    }
    return nodes;
}

void model_release(CoreModel& self) {
    accel_model* model = self.handle;
    self.handle = nullptr;
    accel_model_release(model);
}

}  // namespace

void bind_model(py::module_& m) {
    py::class_<CoreModel> cls(m, "CoreModel", "A loaded model (one accel_model reference).");
    PyObject* run = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), &g_run_def);
    if (!run || PyObject_SetAttrString(cls.ptr(), "run", run) != 0) {
        Py_XDECREF(run);
        throw py::error_already_set();
    }
    Py_DECREF(run);
    bind_fast_run(cls);
    cls.def(
           "inputs", [](const CoreModel& self) { return tensor_infos(self, false); },
           "[(name, shape, dtype, layout, strides, byte_size, quant, image)] of the inputs")
        .def(
            "outputs", [](const CoreModel& self) { return tensor_infos(self, true); },
            "[(name, shape, dtype, layout, strides, byte_size, quant, image)] of the outputs")
        .def("submit", &model_submit, py::arg("inputs"), py::arg("outputs"), py::arg("callback"),
             py::arg("priority") = 0, py::arg("core_mask") = 0, py::arg("timeout_us") = 0, py::arg("flags") = 0,
             "Submits with callback(status, message, timing), called once on the completion thread.")
        .def("nodes", &model_nodes, "[(name, op_type)] of the nodes as the device runs them")
        .def("release", &model_release, "Drops the model reference now (idempotent).");
}

}  // namespace accel_py
