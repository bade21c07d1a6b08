// tensor.cpp - DeviceTensor: a dense C-order tensor viewing a CoreBuffer, exported zero-copy through
// the buffer protocol, as a NumPy array (numpy()) and through DLPack (delegated to that array).
#include <pybind11/numpy.h>

#include <algorithm>
#include <string>
#include <vector>

#include "errors.h"
#include "tensor.h"

namespace accel_py {

namespace {

// The buffer-protocol format of an accel dtype, "" for anything else.
const char* format_of(const py::dtype& dt) {
    if (!py::bool_(dt.attr("isnative"))) return "";
    switch (dt.kind()) {
        case 'f': return dt.itemsize() == 4 ? "f" : dt.itemsize() == 2 ? "e" : "";
        case 'i':
            switch (dt.itemsize()) {
                case 1: return "b";
                case 2: return "h";
                case 4: return "i";
                case 8: return "q";
            }
            return "";
        case 'u':
            switch (dt.itemsize()) {
                case 1: return "B";
                case 2: return "H";
                case 4: return "I";
                case 8: return "Q";
            }
            return "";
        case 'b': return dt.itemsize() == 1 ? "?" : "";
    }
    return "";
}

std::unique_ptr<DeviceTensor> make_tensor(py::object buffer, py::object shape, py::object dtype, py::object layout,
                                          py::object device) {
    auto t = std::make_unique<DeviceTensor>();
    t->core = &core_buffer_of(buffer, "buffer");
    t->buffer = std::move(buffer);
    t->dtype = py::dtype::from_args(dtype);
    t->format = format_of(t->dtype);
    if (t->format.empty())
        throw py::type_error("DeviceTensor: unsupported dtype " + std::string(py::str(t->dtype)) +
                             " (float32, float16, int8..int64, uint8..uint64 or bool, native byte order)");
    if (!layout.is_none() && !PyUnicode_Check(layout.ptr()))
        throw py::type_error("DeviceTensor: layout must be a str or None");
    t->layout = std::move(layout);
    t->device = std::move(device);

    py::tuple dims = py::reinterpret_steal<py::tuple>(PySequence_Tuple(shape.ptr()));
    if (!dims) throw py::error_already_set();
    if (dims.size() > 64) throw py::value_error("DeviceTensor: more than 64 dimensions");
    const py::ssize_t itemsize = t->dtype.itemsize();
    uint64_t elements = 1;
    bool overflow = false;
    for (py::handle d : dims) {
        if (!PyLong_Check(d.ptr()) && !PyIndex_Check(d.ptr()))
            throw py::type_error("DeviceTensor: shape must be a tuple of ints");
        Py_ssize_t n = PyNumber_AsSsize_t(d.ptr(), PyExc_OverflowError);
        if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
        if (n < 0) throw py::value_error("DeviceTensor: negative dimension in shape " + std::string(py::repr(dims)));
        if (n != 0 && elements > UINT64_MAX / (uint64_t)n) overflow = true;
        elements *= (uint64_t)n;
        t->shape.push_back(n);
    }
    if (overflow || elements > (uint64_t)PY_SSIZE_T_MAX / (uint64_t)itemsize ||
        elements * (uint64_t)itemsize > t->core->nbytes)
        throw py::value_error("DeviceTensor: shape " + std::string(py::repr(dims)) + " of " +
                              std::string(py::str(t->dtype)) + " needs more than the buffer's " +
                              std::to_string(t->core->nbytes) + " bytes");
    t->size = (py::ssize_t)elements;
    t->nbytes = t->size * itemsize;
    t->strides.assign(t->shape.size(), itemsize);
    for (size_t i = t->shape.size(); i-- > 1;)
        t->strides[i - 1] = t->strides[i] * std::max<py::ssize_t>(t->shape[i], 1);
    t->shape_tuple = py::tuple(dims.size());
    for (size_t i = 0; i < t->shape.size(); i++) t->shape_tuple[i] = py::int_(t->shape[i]);
    return t;
}

py::object dlpack(py::handle self, py::object stream, py::object max_version, py::object dl_device, py::object copy) {
    if (!copy.is_none() && PyObject_IsTrue(copy.ptr()) == 1) {
        PyErr_SetString(PyExc_BufferError, "a DeviceTensor is never copied silently: __dlpack__(copy=True) refused");
        throw py::error_already_set();
    }
    py::object export_ = numpy_view(self).attr("__dlpack__");
    py::dict kwargs;
    kwargs["stream"] = stream;
    if (!max_version.is_none()) kwargs["max_version"] = max_version;
    if (!dl_device.is_none()) kwargs["dl_device"] = dl_device;
    if (!copy.is_none()) kwargs["copy"] = copy;
    try {
        return export_(**kwargs);
    } catch (py::error_already_set& e) {
        // NumPy before 2.1 knows only `stream`: it then gives the legacy (unversioned) capsule, which
        // the DLPack protocol allows; a device other than the CPU is still refused.
        if (!e.matches(PyExc_TypeError) || kwargs.size() == 1) throw;
        if (!dl_device.is_none() && !dl_device.equal(py::make_tuple(1, 0))) throw;
        return export_(py::arg("stream") = stream);
    }
}

std::string tensor_repr(const DeviceTensor& t) {
    std::string device;
    if (PyUnicode_Check(t.device.ptr())) {
        device = py::repr(t.device);
    } else if (py::hasattr(t.device, "uri")) {
        device = py::repr(t.device.attr("uri"));
    } else {
        device = py::repr(t.device);
    }
    std::string layout = t.layout.is_none() ? "None" : std::string(py::str(t.layout));
    return "DeviceTensor(shape=" + std::string(py::repr(t.shape_tuple)) + ", dtype=" + std::string(py::str(t.dtype)) +
           ", layout=" + layout + ", device=" + device + ")";
}

}  // namespace

py::array numpy_view(py::handle self) {
    const DeviceTensor& t = self.cast<const DeviceTensor&>();
    py::array view(t.dtype, t.shape, t.strides, t.core->data, self);
    if (t.core->readonly) view.attr("setflags")(py::arg("write") = false);  // imported from bytes...
    return view;
}

void bind_tensor(py::module_& m) {
    py::class_<DeviceTensor>(m, "DeviceTensor", py::buffer_protocol(),
                             "A dense, C-order tensor in device memory (a view of a CoreBuffer).")
        .def(py::init(&make_tensor), py::arg("buffer"), py::arg("shape"), py::arg("dtype"), py::arg("layout"),
             py::arg("device"))
        .def_buffer([](DeviceTensor& t) {
            return py::buffer_info(t.core->data, t.dtype.itemsize(), t.format, (py::ssize_t)t.shape.size(), t.shape,
                                   t.strides, t.core->readonly);
        })
        .def_property_readonly(
            "shape", [](const DeviceTensor& t) { return t.shape_tuple; }, "The shape, a tuple of ints.")
        .def_property_readonly(
            "dtype", [](const DeviceTensor& t) { return t.dtype; }, "The element type, a numpy.dtype.")
        .def_property_readonly(
            "layout", [](const DeviceTensor& t) { return t.layout; }, "The image layout (\"NCHW\", \"NHWC\") or None.")
        .def_property_readonly(
            "nbytes", [](const DeviceTensor& t) { return t.nbytes; }, "Size in bytes: prod(shape) * dtype.itemsize.")
        .def_property_readonly(
            "ndim", [](const DeviceTensor& t) { return t.shape.size(); }, "Number of dimensions.")
        .def_property_readonly(
            "size", [](const DeviceTensor& t) { return t.size; }, "Number of elements.")
        .def_property_readonly(
            "device", [](const DeviceTensor& t) { return t.device; },
            "The device the tensor belongs to, as given when it was made.")
        .def_property_readonly(
            "buffer", [](const DeviceTensor& t) { return t.buffer; }, "The CoreBuffer holding the tensor's memory.")
        .def("numpy", &numpy_view, "The zero-copy NumPy view (np.asarray(t)).")
        .def("__dlpack__", &dlpack, py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
             py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
             "DLPack export of the NumPy view; the capsule keeps the tensor alive. copy=True is refused.")
        .def(
            "__dlpack_device__", [](py::handle) { return py::make_tuple(1, 0); }, "(kDLCPU, 0)")
        .def("__repr__", &tensor_repr);
}

}  // namespace accel_py
