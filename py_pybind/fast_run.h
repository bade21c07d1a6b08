// fast_run.h - what CoreModel.run_tensors checks a call against: the model's tensors as the public
// Model sees them (python/accel/runtime/model.py sets them once with set_fast_path).
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <vector>

#include "core.h"

namespace accel_py {

// One input or output. Only dense tensors are ever taken by the fast path.
struct FastSpec {
    py::dtype dtype;                  // compared by identity: NumPy's builtin dtypes are singletons
    std::vector<py::ssize_t> shape;
    py::object layout;                // str or None (any layout)
    uint64_t alloc_bytes = 0;         // a fresh output buffer's size
    bool dense = false;
    uint64_t id = 0;                  // unique in the process: what a CoreTensor that matched remembers
};

struct FastPath {
    py::object device;       // the public Device: a DeviceTensor of another one is not ours
    py::object core_device;  // its CoreDevice, to allocate fresh outputs (and to see it closed)
    std::vector<FastSpec> inputs, outputs;
};

}  // namespace accel_py
