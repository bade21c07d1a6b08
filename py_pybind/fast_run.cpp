// fast_run.cpp - CoreModel.run_tensors: the common case of Model.run (DeviceTensors that match the
// model exactly; outputs given as DeviceTensors or left to be allocated) checked and run without
// going through Python. It answers None for anything else, and Model.run then takes its Python path,
// which handles every other case and words every error: errors are written in one place.
#include "fast_run.h"

#include <string>

#include "accel_runcore.h"
#include "errors.h"
#include "run.h"
#include "tensor.h"
#include "wait.h"

namespace accel_py {

namespace {

// Whether CoreTensor `t` matches `spec` on `fast`'s device (CORE_API.md, tensor_matches). A tensor never
// changes, so the match is remembered on it by the spec's id (never reused, unlike an address) when the fast
// path can take it, that is unless its memory is imported (CoreModel.run holds that for the job's life).
bool tensor_matches_spec(CoreTensor& t, const FastSpec& spec, const FastPath& fast) {
    if (!spec.dense) return false;
    if (t.checked == spec.id) return true;
    if (t.dtype.ptr() != spec.dtype.ptr() || t.shape != spec.shape || t.device.ptr() != fast.device.ptr()) return false;
    if (!spec.layout.is_none() && !t.layout.is_none() && PyUnicode_Compare(t.layout.ptr(), spec.layout.ptr()) != 0)
        return false;
    if (!t.core->source) t.checked = spec.id;
    return true;
}

// The tensor behind `obj` (a CoreTensor: accel.DeviceTensor) if the fast path takes it as `spec`: it matches,
// and its memory is not imported.
CoreTensor* matching_tensor(PyObject* obj, const FastSpec& spec, const FastPath& fast) {
    CoreTensor* t = core_tensor_of(obj);
    if (!t) return nullptr;
    if (t->checked == spec.id) return t;
    return tensor_matches_spec(*t, spec, fast) && t->checked == spec.id ? t : nullptr;
}

constexpr size_t kMaxTensors = 16;  // beyond this the Python path is not the bottleneck

// Everything a run holds while the GIL is released: the tensors are referenced, so that another
// thread changing the caller's lists cannot free a buffer under the job.
struct Held {
    accel_buffer* in[kMaxTensors];
    accel_buffer* out[kMaxTensors];
    py::object keep[2 * kMaxTensors];
    size_t kept = 0;
};

// A NumPy array the fast path copies in: exactly an ndarray (no subclass), of the spec's very dtype
// object and shape, C-contiguous. Anything else is left to the Python path.
bool matching_array(PyObject* obj, const FastSpec& spec) {
    static PyTypeObject* ndarray_type =
        reinterpret_cast<PyTypeObject*>(py::module_::import("numpy").attr("ndarray").ptr());
    if (Py_TYPE(obj) != ndarray_type || !spec.dense) return false;
    py::array a = py::reinterpret_borrow<py::array>(obj);
    if (a.dtype().ptr() != spec.dtype.ptr() || (size_t)a.ndim() != spec.shape.size()) return false;
    for (size_t i = 0; i < spec.shape.size(); i++)
        if (a.shape((py::ssize_t)i) != spec.shape[i]) return false;
    return (a.flags() & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) != 0;
}

// One copy of a matching array into a fresh buffer of the spec's size; returns its handle and holds
// the buffer. Large copies release the GIL.
accel_buffer* copy_in(PyObject* obj, const FastSpec& spec, accel_device* device, Held& held) {
    py::array a = py::reinterpret_borrow<py::array>(obj);
    std::unique_ptr<CoreBuffer> buffer = alloc_buffer(device, spec.alloc_bytes);
    const uint64_t nbytes = (uint64_t)a.nbytes();
    accel_status status;
    std::string message;
    if (nbytes > (uint64_t)kNoGilCopyBytes) {
        NoGil nogil;
        status = accel_buffer_write(buffer->handle, 0, a.data(), nbytes);
        if (status != ACCEL_OK) message = accel_last_error_message();
        nogil.end();
    } else {
        status = accel_buffer_write(buffer->handle, 0, a.data(), nbytes);
        if (status != ACCEL_OK) message = accel_last_error_message();
    }
    if (status != ACCEL_OK) raise_status(status, message);
    accel_buffer* handle = buffer->handle;
    held.keep[held.kept++] = py::cast(std::move(buffer));
    return handle;
}

// Takes the tensors of `arg` (a list or tuple; or one bare tensor if `inputs`) if each matches its
// spec: DeviceTensors, and for inputs NumPy arrays too (copied into fresh buffers). Their handles go
// to `handles` and what owns them is held. False (nothing copied) if any does not match.
bool take_tensors(PyObject* arg, bool inputs, const std::vector<FastSpec>& specs, const FastPath& fast,
                  accel_device* device, accel_buffer** handles, Held& held) {
    PyObject* const* items = &arg;
    size_t count = 1;
    if (PyList_CheckExact(arg) || PyTuple_CheckExact(arg)) {
        items = PySequence_Fast_ITEMS(arg);
        count = (size_t)PySequence_Fast_GET_SIZE(arg);
    } else if (!inputs) {
        return false;
    }
    if (count != specs.size()) return false;
    for (size_t i = 0; i < count; i++)
        if (!matching_tensor(items[i], specs[i], fast) && !(inputs && matching_array(items[i], specs[i]))) return false;
    // Every item matches: only now is anything allocated or copied.
    for (size_t i = 0; i < count; i++) {
        if (CoreTensor* t = matching_tensor(items[i], specs[i], fast)) {
            handles[i] = t->core->handle;
            held.keep[held.kept++] = py::reinterpret_borrow<py::object>(items[i]);
        } else {
            handles[i] = copy_in(items[i], specs[i], device, held);
        }
    }
    return true;
}

py::object run_tensors(CoreModel& self, py::handle inputs, py::handle outputs, py::handle priority_obj) {
    const FastPath* fast = self.fast.get();
    if (!fast || !self.handle) return py::none();
    const CoreDevice& device = fast->core_device.cast<const CoreDevice&>();
    if (!device.handle) return py::none();
    if (!PyLong_CheckExact(priority_obj.ptr())) return py::none();
    long priority = PyLong_AsLong(priority_obj.ptr());
    if (priority < 0 || priority > 255) {
        PyErr_Clear();
        return py::none();
    }
    const size_t n_in = fast->inputs.size(), n_out = fast->outputs.size();
    if (n_in > kMaxTensors || n_out > kMaxTensors) return py::none();

    Held held;
    if (!take_tensors(inputs.ptr(), true, fast->inputs, *fast, device.handle, held.in, held)) return py::none();
    py::list results(n_out);
    if (outputs.is_none()) {
        for (size_t i = 0; i < n_out; i++) {
            const FastSpec& spec = fast->outputs[i];
            if (!spec.dense) return py::none();
            std::unique_ptr<CoreBuffer> buffer = alloc_buffer(device.handle, spec.alloc_bytes);
            held.out[i] = buffer->handle;
            uint8_t* data = buffer->data;
            py::object owner = py::cast(std::move(buffer));  // the array below keeps it alive
            results[i] = py::array(spec.dtype, spec.shape, {}, data, owner);
        }
    } else {
        const size_t first_output = held.kept;
        if (!take_tensors(outputs.ptr(), false, fast->outputs, *fast, device.handle, held.out, held) ||
            accel_runcore_outputs_alias(held.in, n_in, held.out, n_out))
            return py::none();
        for (size_t i = 0; i < n_out; i++) results[i] = numpy_view(held.keep[first_output + i]);
    }
    run_blocking(self.handle, held.in, n_in, held.out, n_out, (int32_t)priority, 0, 0, nullptr);
    return std::move(results);
}

FastSpec fast_spec(py::handle spec) {
    // (dtype, shape, layout, alloc_bytes, dense), made by accel.runtime.model.Model.
    py::tuple t = py::reinterpret_borrow<py::tuple>(spec);
    FastSpec s;
    s.dtype = py::reinterpret_borrow<py::dtype>(t[0]);
    for (py::handle d : py::reinterpret_borrow<py::tuple>(t[1])) s.shape.push_back(d.cast<py::ssize_t>());
    s.layout = t[2];
    s.alloc_bytes = t[3].cast<uint64_t>();
    s.dense = t[4].cast<bool>();
    static uint64_t last_id = 0;  // the GIL is held
    s.id = ++last_id;
    return s;
}

void set_fast_path(CoreModel& self, py::object device, py::object core_device, py::sequence inputs,
                   py::sequence outputs) {
    core_device.cast<const CoreDevice&>();  // a TypeError now rather than a bad cast later
    auto fast = std::make_unique<FastPath>();
    fast->device = std::move(device);
    fast->core_device = std::move(core_device);
    for (py::handle s : inputs) fast->inputs.push_back(fast_spec(s));
    for (py::handle s : outputs) fast->outputs.push_back(fast_spec(s));
    self.fast = std::move(fast);
}

bool tensor_matches(CoreModel& self, py::handle tensor, size_t index, bool output) {
    const FastPath* fast = self.fast.get();
    CoreTensor* t = core_tensor_of(tensor.ptr());
    if (!fast || !t) return false;
    const std::vector<FastSpec>& specs = output ? fast->outputs : fast->inputs;
    if (index >= specs.size())
        throw py::index_error("tensor_matches: no " + std::string(output ? "output " : "input ") +
                              std::to_string(index));
    return tensor_matches_spec(*t, specs[index], *fast);
}

}  // namespace

void bind_fast_run(py::class_<CoreModel>& cls) {
    cls.def("set_fast_path", &set_fast_path, py::arg("device"), py::arg("core_device"), py::arg("inputs"),
            py::arg("outputs"),
            "Enables run_tensors: the public Device, its CoreDevice and one (dtype, shape, layout, "
            "alloc_bytes, dense) tuple per input and output.")
        .def("run_tensors", &run_tensors, py::arg("inputs"), py::arg("outputs"), py::arg("priority"),
             "Model.run's fast path: runs and returns the output arrays, or None (nothing done) if the "
             "call is not one it takes.")
        .def("tensor_matches", &tensor_matches, py::arg("tensor"), py::arg("index"), py::arg("output"),
             "Whether accel.DeviceTensor `tensor` matches the fast path's spec of input (or output) `index`; "
             "remembered on the tensor.");
}

}  // namespace accel_py
