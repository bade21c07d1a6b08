// driver.cc - the bpu driver's entry point and function table. Every table function runs inside a
// guard, so that no C++ exception crosses the C ABI.
#include <cstdio>
#include <exception>
#include <new>

#include "entry_points.h"
#include "handles.h"
#include "status.h"

namespace accel_bpu {
namespace {

template <typename Body>
accel_status guard(const char* fn, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(ACCEL_ERR_OUT_OF_MEMORY, std::string(fn) + ": out of host memory");
    } catch (const std::exception& e) {
        return fail(ACCEL_ERR_INTERNAL, std::string(fn) + ": bpu driver bug: " + e.what());
    } catch (...) {
        return fail(ACCEL_ERR_INTERNAL, std::string(fn) + ": bpu driver bug");
    }
}

// retain/release cannot report a failure (none is expected): stderr it is.
template <typename Body>
void guard_void(const char* fn, Body&& body) noexcept {
    try {
        body();
    } catch (...) {
        fprintf(stderr, "accel bpu: internal error in %s\n", fn);
    }
}

#define CALL(fn, ...) guard(fn, [&] { return __VA_ARGS__; })
#define CALL_VOID(fn, ...) guard_void(fn, [&] { __VA_ARGS__; })

}  // namespace

extern const accel_driver_table kDriverTable = {
    sizeof(accel_driver_table),
    ACCEL_ABI_VERSION,
    "bpu",
    kRuntimeDescription,
    [](const char* o, accel_device** out) { return CALL("accel_device_open", device_open(o, out)); },
    [](accel_device* d) { d->refs.fetch_add(1, std::memory_order_relaxed); },
    [](accel_device* d) { CALL_VOID("accel_device_release", device_release(d)); },
    [](accel_device* d, accel_device_info* out) { return CALL("accel_device_get_info", device_get_info(d, out)); },
    [](accel_device* d, accel_memory_stats* out) { return CALL("accel_device_get_stats", device_get_stats(d, out)); },
    [](accel_device*) { return (accel_status)ACCEL_OK; },  // no guard bytes on the BPU: nothing to check
    [](accel_device* d, uint64_t size, accel_buffer** out) { return CALL("accel_buffer_alloc", buffer_alloc(d, size, out)); },
    [](accel_device* d, void* host, uint64_t size, accel_buffer** out) {
        return CALL("accel_buffer_import", buffer_import(d, host, size, out));
    },
    [](accel_buffer* b) { buffer_retain(b); },
    [](accel_buffer* b) { CALL_VOID("accel_buffer_release", buffer_release(b)); },
    [](accel_buffer* b, void** out) { return CALL("accel_buffer_host_ptr", buffer_host_ptr(b, out)); },
    [](accel_buffer* b, uint64_t* out) { return CALL("accel_buffer_size", buffer_size(b, out)); },
    [](accel_buffer* b, accel_sync_direction dir, uint64_t off, uint64_t size) {
        return CALL("accel_buffer_sync", buffer_sync(b, dir, off, size));
    },
    [](accel_buffer* b, uint64_t off, const void* src, uint64_t size) {
        return CALL("accel_buffer_write", buffer_write(b, off, src, size));
    },
    [](accel_buffer* b, uint64_t off, const void* src, uint32_t ndim, const int64_t* shape, const int64_t* strides,
       uint32_t elem) { return CALL("accel_buffer_write_strided", buffer_write_strided(b, off, src, ndim, shape, strides, elem)); },
    [](accel_buffer* b, uint64_t off, void* dst, uint64_t size) {
        return CALL("accel_buffer_read", buffer_read(b, off, dst, size));
    },
    [](accel_device* d, const char* path, accel_model** out) {
        return CALL("accel_model_load_file", model_load_file(d, path, out));
    },
    [](accel_device* d, const void* data, uint64_t size, accel_model** out) {
        return CALL("accel_model_load_memory", model_load_memory(d, data, size, out));
    },
    [](accel_model* m) { model_retain(m); },
    [](accel_model* m) { CALL_VOID("accel_model_release", model_release(m)); },
    [](accel_model* m, size_t* out) { return CALL("accel_model_input_count", model_input_count(m, out)); },
    [](accel_model* m, size_t* out) { return CALL("accel_model_output_count", model_output_count(m, out)); },
    [](accel_model* m, size_t i, accel_tensor_info* out) { return CALL("accel_model_input_info", model_input_info(m, i, out)); },
    [](accel_model* m, size_t i, accel_tensor_info* out) { return CALL("accel_model_output_info", model_output_info(m, i, out)); },
    [](accel_model* m, accel_buffer* const* in, size_t nin, accel_buffer* const* out, size_t nout,
       const accel_run_options* o, accel_job** job) {
        return CALL("accel_job_submit", job_submit(m, in, nin, out, nout, o, job));
    },
    [](accel_job* j, int64_t timeout_us) { return CALL("accel_job_wait", job_wait(j, timeout_us)); },
    [](accel_job* j, int32_t* done) { return CALL("accel_job_poll", job_poll(j, done)); },
    [](accel_job* j, accel_job_timing* out) { return CALL("accel_job_get_timing", job_get_timing(j, out)); },
    [](accel_job* j) { job_retain(j); },
    [](accel_job* j) { CALL_VOID("accel_job_release", job_release(j)); },
};

}  // namespace accel_bpu

extern "C" ACCEL_DRIVER_EXPORT accel_status accel_driver_entry(uint32_t loader_abi_version, const accel_host_api* host,
                                                               const accel_driver_table** out_table) {
    if (!host || !out_table) return ACCEL_ERR_INVALID_ARGUMENT;
    accel_bpu::set_host(host);
    if ((loader_abi_version >> 16) != ACCEL_ABI_VERSION_MAJOR)
        return accel_bpu::fail(ACCEL_ERR_ABI_MISMATCH, "bpu: the loader's ABI major version differs from the driver's");
    *out_table = &accel_bpu::kDriverTable;
    return ACCEL_OK;
}
