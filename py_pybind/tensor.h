// tensor.h - CoreTensor, the core's tensor base: a dense C-order view of a CoreBuffer, with the buffer
// protocol. accel.DeviceTensor (python/accel/runtime/device_tensor.py) subclasses it and writes the API.
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core.h"

namespace accel_py {

struct CoreTensor : NonCopyable {
    py::object buffer;  // the CoreBuffer: keeps the device memory alive
    CoreBuffer* core = nullptr;
    std::vector<py::ssize_t> shape;
    std::vector<py::ssize_t> strides;  // C order, bytes
    py::tuple shape_tuple;
    py::dtype dtype;
    std::string format;  // buffer-protocol format of the dtype
    py::object layout;   // str or None
    py::object device;   // as given (the public Device)
    uint64_t checked = 0;  // the FastSpec::id this tensor last matched (a tensor never changes)
};

// The CoreTensor inside `obj` (an instance of a Python subclass of CoreTensor: accel.DeviceTensor), or
// nullptr for anything else (the bare base too): a type check and a pointer read, for the fast path.
CoreTensor* core_tensor_of(PyObject* obj);

// The zero-copy NumPy view of the CoreTensor `self`; its .base is the tensor, which keeps the
// buffer alive.
py::array numpy_view(py::handle self);

}  // namespace accel_py
