// tensor.cpp - CoreTensor: the tensor base of the core, a dense C-order view of a CoreBuffer exported
// zero-copy through the buffer protocol (which only C can give a class before Python 3.12). Its checks
// are the ones memory safety needs (a dtype the buffer protocol can name, a shape within the buffer);
// accel.DeviceTensor (python/accel/runtime/device_tensor.py) makes the same checks first, with its
// words, and writes the API (shape, dtype, numpy(), DLPack, repr) once for both cores.
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

std::unique_ptr<CoreTensor> make_tensor(py::object buffer, py::object shape, py::object dtype, py::object layout,
                                        py::object device) {
    auto t = std::make_unique<CoreTensor>();
    t->core = &core_buffer_of(buffer, "buffer");
    t->buffer = std::move(buffer);
    t->dtype = py::dtype::from_args(dtype);
    t->format = format_of(t->dtype);
    if (t->format.empty())
        throw py::type_error("CoreTensor: unsupported dtype " + std::string(py::str(t->dtype)) +
                             " (float32, float16, int8..int64, uint8..uint64 or bool, native byte order)");
    if (!layout.is_none() && !PyUnicode_Check(layout.ptr()))
        throw py::type_error("CoreTensor: layout must be a str or None");
    t->layout = std::move(layout);
    t->device = std::move(device);

    py::tuple dims = py::reinterpret_steal<py::tuple>(PySequence_Tuple(shape.ptr()));
    if (!dims) throw py::error_already_set();
    if (dims.size() > 64) throw py::value_error("CoreTensor: more than 64 dimensions");
    const py::ssize_t itemsize = t->dtype.itemsize();
    uint64_t elements = 1;
    bool overflow = false;
    for (py::handle d : dims) {
        if (!PyLong_Check(d.ptr()) && !PyIndex_Check(d.ptr()))
            throw py::type_error("CoreTensor: shape must be a tuple of ints");
        Py_ssize_t n = PyNumber_AsSsize_t(d.ptr(), PyExc_OverflowError);
        if (n == -1 && PyErr_Occurred()) throw py::error_already_set();
        if (n < 0) throw py::value_error("CoreTensor: negative dimension in shape " + std::string(py::repr(dims)));
        if (n != 0 && elements > UINT64_MAX / (uint64_t)n) overflow = true;
        elements *= (uint64_t)n;
        t->shape.push_back(n);
    }
    if (overflow || elements > (uint64_t)PY_SSIZE_T_MAX / (uint64_t)itemsize ||
        elements * (uint64_t)itemsize > t->core->nbytes)
        throw py::value_error("CoreTensor: shape " + std::string(py::repr(dims)) + " of " +
                              std::string(py::str(t->dtype)) + " needs more than the buffer's " +
                              std::to_string(t->core->nbytes) + " bytes");
    t->strides.assign(t->shape.size(), itemsize);
    for (size_t i = t->shape.size(); i-- > 1;)
        t->strides[i - 1] = t->strides[i] * std::max<py::ssize_t>(t->shape[i], 1);
    t->shape_tuple = py::tuple(dims.size());
    for (size_t i = 0; i < t->shape.size(); i++) t->shape_tuple[i] = py::int_(t->shape[i]);
    return t;
}

}  // namespace

py::array numpy_view(py::handle self) {
    const CoreTensor& t = *core_tensor_of(self.ptr());
    py::array view(t.dtype, t.shape, t.strides, t.core->data, self);
    if (t.core->readonly) view.attr("setflags")(py::arg("write") = false);  // imported from bytes...
    return view;
}

CoreTensor* core_tensor_of(PyObject* obj) {
    static PyTypeObject* const type = reinterpret_cast<PyTypeObject*>(py::type::of<CoreTensor>().ptr());
    // Not the bare base, which has no numpy() and which Model.run refuses: the cffi core's fast path declines it too.
    if (Py_TYPE(obj) == type || !PyObject_TypeCheck(obj, type)) return nullptr;
    // CoreTensor is the only pybind11 class in the MRO of its subclasses: their instances have pybind11's
    // simple layout, one value and holder, read without a lookup by type.
    auto v_h = reinterpret_cast<py::detail::instance*>(obj)->get_value_and_holder();
    if (!v_h.holder_constructed()) return nullptr;  // made by __new__ alone
    return v_h.value_ptr<CoreTensor>();
}

void bind_tensor(py::module_& m) {
    py::class_<CoreTensor>(m, "CoreTensor", py::buffer_protocol(),
                           "The core's tensor base (a dense, C-order view of a CoreBuffer); accel.DeviceTensor "
                           "subclasses it.")
        .def(py::init(&make_tensor), py::arg("buffer"), py::arg("shape"), py::arg("dtype"), py::arg("layout"),
             py::arg("device"))
        .def_buffer([](CoreTensor& t) {
            return py::buffer_info(t.core->data, t.dtype.itemsize(), t.format, (py::ssize_t)t.shape.size(), t.shape,
                                   t.strides, t.core->readonly);
        })
        .def_property_readonly("_buffer", [](const CoreTensor& t) { return t.buffer; })
        .def_property_readonly("_shape", [](const CoreTensor& t) { return t.shape_tuple; })
        .def_property_readonly("_dtype", [](const CoreTensor& t) { return t.dtype; })
        .def_property_readonly("_layout", [](const CoreTensor& t) { return t.layout; })
        .def_property_readonly("_device", [](const CoreTensor& t) { return t.device; });
}

}  // namespace accel_py
