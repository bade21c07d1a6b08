// buffer.cpp - CoreBuffer: device memory as a 1-D uint8 buffer-protocol object, and write(array).
#include <cinttypes>
#include <cstdio>
#include <string>

#include "core.h"
#include "errors.h"
#include "wait.h"

namespace accel_py {

CoreBuffer& core_buffer_of(py::handle obj, const char* what, Py_ssize_t index) {
    py::detail::make_caster<CoreBuffer> caster;
    if (!caster.load(obj, /*convert=*/false)) {
        std::string message = what;
        if (index >= 0) message += "[" + std::to_string(index) + "]";
        message += std::string(" must be a CoreBuffer, not ") + Py_TYPE(obj.ptr())->tp_name;
        throw py::type_error(message);
    }
    return py::detail::cast_op<CoreBuffer&>(caster);
}

namespace {

// Exactly one copy of any strided array (negative, zero, non-contiguous strides; read-only
// exporters too) into the buffer, densely in C order, through accel_buffer_write_strided.
void buffer_write(CoreBuffer& self, py::handle array) {
    if (self.readonly)
        raise_status(ACCEL_ERR_INVALID_ARGUMENT,
                     "write(): the buffer is read-only memory (imported from a read-only object such as bytes)");
    BufferExport src(array, PyBUF_STRIDED_RO);
    const Py_buffer& v = src.view;
    if (v.len < 0 || (uint64_t)v.len > self.nbytes) {
        char message[160];
        std::snprintf(message, sizeof message, "the array holds %zd bytes, the buffer only %" PRIu64, v.len,
                      self.nbytes);
        throw py::value_error(message);
    }
    if (v.len == 0) return;

    // As the exporter gives them (PyBUF_STRIDED_RO: strides always there); libaccel merges what it can
    // and words a refusal, as for the cffi core.
    int64_t shape[PyBUF_MAX_NDIM];
    int64_t strides[PyBUF_MAX_NDIM];
    if (v.ndim > PyBUF_MAX_NDIM) throw py::value_error("the array has more dimensions than Python buffers allow");
    const uint32_t ndim = (uint32_t)v.ndim;
    for (uint32_t i = 0; i < ndim; i++) {
        shape[i] = v.shape[i];
        strides[i] = v.strides[i];
    }

    accel_status status;
    if (v.len > kNoGilCopyBytes) {
        std::string message;
        {
            NoGil nogil;
            status = accel_buffer_write_strided(self.handle, 0, v.buf, ndim, shape, strides, (uint32_t)v.itemsize);
            if (status != ACCEL_OK) message = accel_last_error_message();
            nogil.end();
        }
        if (status != ACCEL_OK) raise_status(status, message);
    } else {
        check(accel_buffer_write_strided(self.handle, 0, v.buf, ndim, shape, strides, (uint32_t)v.itemsize));
    }
}

}  // namespace

void bind_buffer(py::module_& m) {
    py::class_<CoreBuffer>(m, "CoreBuffer", py::buffer_protocol(),
                           "Device memory (one accel_buffer reference); a writable 1-D uint8 buffer.")
        .def_buffer([](CoreBuffer& self) {
            return py::buffer_info(self.data, 1, "B", 1, {(py::ssize_t)self.nbytes}, {(py::ssize_t)1}, self.readonly);
        })
        .def_property_readonly(
            "nbytes", [](const CoreBuffer& self) { return self.nbytes; },
            "usable size in bytes (rounded up to the device alignment)")
        .def_property_readonly(
            "address", [](const CoreBuffer& self) { return (uintptr_t)self.data; }, "host pointer")
        .def_property_readonly(
            "memory", [](py::object self) { return self; },
            "The bytes as a buffer-protocol object (1-D; writable unless readonly) that keeps this buffer alive.")
        .def_property_readonly(
            "readonly", [](const CoreBuffer& self) { return self.readonly; },
            "True for memory imported from a read-only object (bytes...): views are read-only, no job writes it")
        .def_property_readonly(
            "imported", [](const CoreBuffer& self) { return self.source != nullptr; },
            "True for memory imported from a Python object (CoreDevice.import_buffer)")
        .def("write", &buffer_write, py::arg("array"),
             "One copy of any strided array's bytes, C order, from offset 0 (accel_buffer_write_strided).")
        .def("__repr__", [](const CoreBuffer& self) {
            char text[96];
            std::snprintf(text, sizeof text, "CoreBuffer(nbytes=%" PRIu64 ", address=0x%" PRIxPTR ")", self.nbytes,
                          (uintptr_t)self.data);
            return std::string(text);
        });
}

}  // namespace accel_py
