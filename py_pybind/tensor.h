// tensor.h - DeviceTensor, the core's public tensor class: a dense C-order view of a CoreBuffer.
#pragma once

#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "core.h"

namespace accel_py {

struct DeviceTensor : NonCopyable {
    py::object buffer;  // the CoreBuffer: keeps the device memory alive
    CoreBuffer* core = nullptr;
    std::vector<py::ssize_t> shape;
    std::vector<py::ssize_t> strides;  // C order, bytes
    py::tuple shape_tuple;
    py::dtype dtype;
    std::string format;  // buffer-protocol format of the dtype
    py::object layout;   // str or None
    py::object device;   // as given (the public Device)
    py::ssize_t size = 1;
    py::ssize_t nbytes = 0;
};

// The zero-copy NumPy view of the DeviceTensor `self`; its .base is the tensor, which keeps the
// buffer alive.
py::array numpy_view(py::handle self);

}  // namespace accel_py
