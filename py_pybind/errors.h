// errors.h - every failing libaccel call becomes accel.errors.from_status(status, message).
#pragma once

#include <accel/accel.h>
#include <pybind11/pybind11.h>

#include <string>

namespace py = pybind11;

namespace accel_py {

// Imports accel.errors and keeps its from_status for raise_status; called once, from the module's init.
void init_errors();

// Sets the Python error to accel.errors.from_status(status, message) and throws
// py::error_already_set. The GIL must be held.
[[noreturn]] void raise_status(accel_status status, const char* message);
[[noreturn]] inline void raise_status(accel_status status, const std::string& message) {
    raise_status(status, message.c_str());
}

// The same with the calling thread's accel_last_error_message(): call it right after the failure.
[[noreturn]] void raise_last_error(accel_status status);

// Raises through from_status when `status` is a failure.
inline void check(accel_status status) {
    if (status != ACCEL_OK) raise_last_error(status);
}

// A Python str from UTF-8 bytes; invalid sequences become U+FFFD instead of raising.
py::str utf8(const char* text);

}  // namespace accel_py
