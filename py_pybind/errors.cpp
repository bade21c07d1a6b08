// errors.cpp - mapping a C status to the exception classes of accel.errors.
#include "errors.h"

#include <pybind11/gil_safe_call_once.h>

#include <cstring>

namespace accel_py {

py::str utf8(const char* text) {
    if (!text) text = "";
    PyObject* s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)std::strlen(text), "replace");
    if (!s) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(s);
}

void raise_status(accel_status status, const char* message) {
    // Stored once and never destroyed (no decref after the interpreter is gone).
    PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> from_status;
    py::object factory =
        from_status.call_once_and_store_result([] { return py::module_::import("accel.errors").attr("from_status"); })
            .get_stored();
    py::object exc = factory(status, utf8(message));
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
}

void raise_last_error(accel_status status) {
    // Copy first: the import of accel.errors could run code that makes other accel calls.
    std::string message = accel_last_error_message();
    raise_status(status, message);
}

}  // namespace accel_py
