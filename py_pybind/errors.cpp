// errors.cpp - mapping a C status to the exception classes of accel.errors.
#include "errors.h"

#include <cstring>

namespace accel_py {

py::str utf8(const char* text) {
    if (!text) text = "";
    PyObject* s = PyUnicode_DecodeUTF8(text, (Py_ssize_t)std::strlen(text), "replace");
    if (!s) throw py::error_already_set();
    return py::reinterpret_steal<py::str>(s);
}

namespace {
// A strong reference kept for the life of the process (no decref after the interpreter is gone).
// Taken at import, not on the first error: a first error can come from a daemon thread while the
// interpreter finalizes, and a lazy import there would release and retake the GIL, which CPython
// answers by ending the thread (a forced unwind that must not meet a destructor retaking the GIL).
PyObject* g_from_status = nullptr;
}  // namespace

void init_errors() {
    if (!g_from_status)
        g_from_status = py::object(py::module_::import("accel.errors").attr("from_status")).release().ptr();
}

void raise_status(accel_status status, const char* message) {
    py::object exc = py::reinterpret_borrow<py::object>(g_from_status)(status, utf8(message));
    PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    throw py::error_already_set();
}

void raise_last_error(accel_status status) {
    // Copy first: the import of accel.errors could run code that makes other accel calls.
    std::string message = accel_last_error_message();
    raise_status(status, message);
}

}  // namespace accel_py
