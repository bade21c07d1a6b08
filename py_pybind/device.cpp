// device.cpp - CoreDevice: open, info, stats, alloc, import_buffer, load, check, close.
#include <cstring>
#include <string>

#include "core.h"
#include "errors.h"
#include "job.h"
#include "wait.h"

namespace accel_py {

accel_device* CoreDevice::get() const {
    if (!handle) raise_status(ACCEL_ERR_CLOSED, "the device is closed");
    return handle;
}

std::unique_ptr<CoreBuffer> alloc_buffer(accel_device* device, uint64_t nbytes) {
    auto buffer = std::make_unique<CoreBuffer>();
    check(accel_buffer_alloc(device, nbytes, &buffer->handle));
    void* data = nullptr;
    check(accel_buffer_host_ptr(buffer->handle, &data));
    check(accel_buffer_size(buffer->handle, &buffer->nbytes));
    buffer->data = static_cast<uint8_t*>(data);
    return buffer;
}

namespace {

std::unique_ptr<CoreDevice> open_device(const std::string& uri) {
    free_dead_thread_states();
    auto device = std::make_unique<CoreDevice>();
    accel_status status;
    std::string message;
    {
        NoGil nogil;  // opening may load a driver and start threads
        status = accel_device_open(uri.c_str(), &device->handle);
        if (status != ACCEL_OK) message = accel_last_error_message();
        nogil.end();
    }
    if (status != ACCEL_OK) raise_status(status, message);
    return device;
}

py::dict device_info(const CoreDevice& self) {
    accel_device_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    check(accel_device_get_info(self.get(), &info));
    py::dict d;
    d["name"] = utf8(info.name);
    d["backend"] = utf8(info.backend);
    d["cores"] = info.cores;
    d["threads"] = info.threads;
    d["hint"] = info.hint;  // accel_performance_hint: 0 not reported, 1 latency, 2 throughput
    d["max_inflight"] = info.max_inflight;
    d["debug"] = py::bool_(info.debug != 0);
    d["alignment"] = info.alignment;
    d["pool_bytes"] = info.pool_bytes;
    return d;
}

py::dict device_stats(const CoreDevice& self) {
    accel_memory_stats st;
    std::memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    check(accel_device_get_stats(self.get(), &st));
    py::dict d;
    d["bytes_in_use"] = st.bytes_in_use;
    d["peak_bytes_in_use"] = st.peak_bytes_in_use;
    d["live_buffers"] = st.live_buffers;
    d["allocations"] = st.allocations;
    d["bytes_copied"] = st.bytes_copied;
    d["jobs_submitted"] = st.jobs_submitted;
    d["jobs_completed"] = st.jobs_completed;
    return d;
}

std::unique_ptr<CoreBuffer> device_alloc(const CoreDevice& self, uint64_t nbytes) {
    return alloc_buffer(self.get(), nbytes);
}

// Any object with the buffer protocol; the bytes are read during the call only, with the GIL
// released (the export keeps the exporter alive and, for a bytearray, unresizable meanwhile). `subgraph`: one
// runnable subgraph of the file by name (accel_model_load_memory_with_options), None for the file.
std::unique_ptr<CoreModel> device_load(const CoreDevice& self, py::handle data, py::object subgraph) {
    accel_device* device = self.get();
    BufferExport bytes(data, PyBUF_SIMPLE);
    auto model = std::make_unique<CoreModel>();
    accel_status status;
    std::string message;
    accel_load_options options;
    std::memset(&options, 0, sizeof options);
    options.struct_size = sizeof options;
    std::string name;
    if (!subgraph.is_none()) {
        if (!py::isinstance<py::str>(subgraph))
            throw py::type_error(std::string("load(): subgraph must be a str or None, not ") +
                                 Py_TYPE(subgraph.ptr())->tp_name);
        name = subgraph.cast<std::string>();
        options.subgraph = name.c_str();
    }
    accel_device_retain(device);  // close() from another thread may run while the GIL is released
    {
        NoGil nogil;
        status = accel_model_load_memory_with_options(device, bytes.view.buf, (uint64_t)bytes.view.len, &options,
                                                      &model->handle);
        accel_device_release(device);  // void: leaves the thread's last error alone
        if (status != ACCEL_OK) message = accel_last_error_message();
        nogil.end();
    }
    if (status != ACCEL_OK) raise_status(status, message);
    return model;
}

// Zero copy: the memory of a C-contiguous buffer-protocol object as a device buffer
// (accel_buffer_import). The CoreBuffer holds the export (so the object, and a bytearray stays
// unresizable) until the buffer goes; a read-only exporter makes a read-only CoreBuffer.
std::unique_ptr<CoreBuffer> device_import(const CoreDevice& self, py::handle obj) {
    accel_device* device = self.get();
    auto source = std::make_unique<BufferExport>(obj, PyBUF_FULL_RO);
    const Py_buffer& v = source->view;
    if (!PyBuffer_IsContiguous(&v, 'C'))
        throw py::value_error(std::string("import_buffer(): the ") + Py_TYPE(obj.ptr())->tp_name +
                              "'s memory is not C-contiguous");
    auto buffer = std::make_unique<CoreBuffer>();
    check(accel_buffer_import(device, v.buf, (uint64_t)v.len, &buffer->handle));
    void* data = nullptr;
    check(accel_buffer_host_ptr(buffer->handle, &data));
    check(accel_buffer_size(buffer->handle, &buffer->nbytes));
    buffer->data = static_cast<uint8_t*>(data);
    buffer->readonly = v.readonly != 0;
    buffer->source = std::move(source);
    return buffer;
}

void device_close(CoreDevice& self) {
    accel_device* device = self.handle;
    self.handle = nullptr;
    accel_device_release(device);
}

}  // namespace

void bind_device(py::module_& m) {
    py::class_<CoreDevice>(m, "CoreDevice", "An open device (one accel_device reference).")
        .def(py::init(&open_device), py::arg("uri"), "Opens a device by URI (accel_device_open).")
        .def("info", &device_info, "name, backend, cores, threads, hint, max_inflight, debug, alignment, pool_bytes")
        .def("stats", &device_stats,
             "bytes_in_use, peak_bytes_in_use, live_buffers, allocations, bytes_copied, jobs_submitted, "
             "jobs_completed")
        .def("alloc", &device_alloc, py::arg("nbytes"), "Allocates device memory (accel_buffer_alloc).")
        .def("import_buffer", &device_import, py::arg("obj"),
             "Device memory over a C-contiguous buffer-protocol object's own bytes, no copy (accel_buffer_import).")
        .def("load", &device_load, py::arg("data"), py::arg("subgraph") = py::none(),
             "Loads a model from a buffer's bytes, a subgraph of it by name (accel_model_load_memory_with_options).")
        .def(
            "check", [](const CoreDevice& self) { check(accel_device_check(self.get())); },
            "Checks every live buffer's guard bytes (accel_device_check).")
        .def("close", &device_close, "Drops this object's device reference (idempotent).");
}

}  // namespace accel_py
