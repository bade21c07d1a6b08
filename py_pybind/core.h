// core.h - the core's objects (one reference-owning wrapper per libaccel handle) and the binder of
// each source file. The contract they implement is python/accel/CORE_API.md.
#pragma once

#include <accel/accel.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>

namespace py = pybind11;

namespace accel_py {

// Every wrapper owns exactly one reference to its handle and is neither copyable nor movable, so
// pybind11 holds it by pointer and the reference goes with the Python object.
struct NonCopyable {
    NonCopyable() = default;
    NonCopyable(const NonCopyable&) = delete;
    NonCopyable& operator=(const NonCopyable&) = delete;
};

// CoreDevice: one device reference; close() drops it early.
struct CoreDevice : NonCopyable {
    accel_device* handle = nullptr;
    ~CoreDevice() { accel_device_release(handle); }
    accel_device* get() const;  // the handle, or raises from_status(ACCEL_ERR_CLOSED) after close()
};

// A buffer-protocol export of a Python object, released (with the GIL held) when it goes.
struct BufferExport : NonCopyable {
    Py_buffer view;
    BufferExport(py::handle obj, int flags) {
        if (PyObject_GetBuffer(obj.ptr(), &view, flags) != 0) throw py::error_already_set();
    }
    ~BufferExport() { PyBuffer_Release(&view); }
};

// CoreBuffer: one buffer reference (the buffer holds the device). Never released before the object
// dies: views of its memory keep the object alive through the buffer protocol.
struct CoreBuffer : NonCopyable {
    accel_buffer* handle = nullptr;
    uint8_t* data = nullptr;  // host pointer, valid while the buffer lives
    uint64_t nbytes = 0;      // usable size
    bool readonly = false;    // imported from a read-only exporter (bytes...): nothing may write into it
    // CoreDevice.import_buffer's: the export of the Python object whose memory the buffer is. A member,
    // so it is released after the destructor's accel_buffer_release (the memory outlives the handle);
    // jobs that still use the buffer hold the CoreBuffer itself (model.cpp).
    std::unique_ptr<BufferExport> source;
    ~CoreBuffer() { accel_buffer_release(handle); }
};

struct FastPath;  // fast_run.h

// CoreModel: one model reference; release() drops it early.
struct CoreModel : NonCopyable {
    accel_model* handle = nullptr;
    std::unique_ptr<FastPath> fast;  // what run_tensors checks against, once set_fast_path has run
    CoreModel();
    ~CoreModel();
    accel_model* get() const;  // the handle, or raises from_status(ACCEL_ERR_CLOSED) after release()
};

// CoreJob: one job reference; release() drops it early (cancelling a job that has not started).
// Live CoreJobs form a list (guarded by the GIL: they are made, released and destroyed with it held)
// so that interpreter exit can cancel the jobs that have not started.
struct CoreJob : NonCopyable {
    accel_job* handle = nullptr;
    CoreJob();
    ~CoreJob();
    accel_job* get() const;  // the handle, or raises from_status(ACCEL_ERR_CLOSED) after release()
    void release();          // drops the handle (idempotent)
    static void release_all();

private:
    CoreJob* prev_ = nullptr;
    CoreJob* next_ = nullptr;
};

// The CoreBuffer behind a Python object, or a TypeError naming `what` (and `index` when >= 0,
// e.g. "inputs[2]").
CoreBuffer& core_buffer_of(py::handle obj, const char* what, Py_ssize_t index = -1);

// A new CoreBuffer of at least `nbytes` on `device` (accel_buffer_alloc); raises on failure.
std::unique_ptr<CoreBuffer> alloc_buffer(accel_device* device, uint64_t nbytes);

// Copies into device memory above this size run with the GIL released.
constexpr Py_ssize_t kNoGilCopyBytes = 64 * 1024;

void bind_device(py::module_& m);
void bind_buffer(py::module_& m);
void bind_tensor(py::module_& m);
void bind_model(py::module_& m);
void bind_fast_run(py::class_<CoreModel>& cls);
void bind_job(py::module_& m);
void bind_uri(py::module_& m);  // uri.cpp

}  // namespace accel_py
