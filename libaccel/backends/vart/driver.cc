// driver.cc - the vart driver's entry point and function table. Every table function runs its
// implementation inside a guard, so that no C++ exception ever crosses the C ABI.
#include <cstdio>
#include <exception>
#include <new>

#include "entry_points.h"
#include "handles.h"

namespace accel_vart {
namespace {

template <typename F>
accel_status guarded(const char* fn, F&& body) {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(ACCEL_ERR_OUT_OF_MEMORY, format("%s: out of host memory", fn));
    } catch (const std::exception& e) {
        return fail(ACCEL_ERR_INTERNAL, format("%s: internal error: %s", fn, e.what()));
    } catch (...) {
        return fail(ACCEL_ERR_INTERNAL, format("%s: internal error", fn));
    }
}

template <typename F>
void guarded_void(const char* fn, F&& body) {
    try {
        body();
    } catch (...) {
        fprintf(stderr, "accel vart: internal error in %s\n", fn);
    }
}

#define G(fn, ...) guarded(fn, [&] { return __VA_ARGS__; })
#define GV(fn, ...) guarded_void(fn, [&] { __VA_ARGS__; })

accel_status device_check(accel_device*) { return ACCEL_OK; }  // no guard bytes on this device

}  // namespace

extern const accel_driver_table kDriverTable = {
    sizeof(accel_driver_table),
    ACCEL_ABI_VERSION,
    "vart",
    "Vitis AI runtime (VART/XIR): DPU subgraphs of .xmodel files",
    [](const char* o, accel_device** out) { return G("accel_device_open", device_open(o, out)); },
    [](accel_device* d) { GV("accel_device_retain", device_retain(d)); },
    [](accel_device* d) { GV("accel_device_release", device_release(d)); },
    [](accel_device* d, accel_device_info* out) { return G("accel_device_get_info", device_get_info(d, out)); },
    [](accel_device* d, accel_memory_stats* out) { return G("accel_device_get_stats", device_get_stats(d, out)); },
    [](accel_device* d) { return G("accel_device_check", device_check(d)); },
    [](accel_device* d, uint64_t size, accel_buffer** out) { return G("accel_buffer_alloc", buffer_alloc(d, size, out)); },
    [](accel_device* d, void* host, uint64_t size, accel_buffer** out) {
        return G("accel_buffer_import", buffer_import(d, host, size, out));
    },
    [](accel_buffer* b) { GV("accel_buffer_retain", buffer_retain(b)); },
    [](accel_buffer* b) { GV("accel_buffer_release", buffer_release(b)); },
    [](accel_buffer* b, void** out) { return G("accel_buffer_host_ptr", buffer_host_ptr(b, out)); },
    [](accel_buffer* b, uint64_t* out) { return G("accel_buffer_size", buffer_size(b, out)); },
    [](accel_buffer* b, accel_sync_direction dir, uint64_t off, uint64_t size) {
        return G("accel_buffer_sync", buffer_sync(b, dir, off, size));
    },
    [](accel_buffer* b, uint64_t off, const void* src, uint64_t size) {
        return G("accel_buffer_write", buffer_write(b, off, src, size));
    },
    [](accel_buffer* b, uint64_t off, const void* src, uint32_t ndim, const int64_t* shape, const int64_t* strides,
       uint32_t elem) { return G("accel_buffer_write_strided", buffer_write_strided(b, off, src, ndim, shape, strides, elem)); },
    [](accel_buffer* b, uint64_t off, void* dst, uint64_t size) {
        return G("accel_buffer_read", buffer_read(b, off, dst, size));
    },
    [](accel_device* d, const char* path, accel_model** out) {
        return G("accel_model_load_file", model_load_file(d, path, out));
    },
    [](accel_device* d, const void* data, uint64_t size, accel_model** out) {
        return G("accel_model_load_memory", model_load_memory(d, data, size, out));
    },
    [](accel_model* m) { GV("accel_model_retain", model_retain(m)); },
    [](accel_model* m) { GV("accel_model_release", model_release(m)); },
    [](accel_model* m, size_t* out) { return G("accel_model_input_count", model_input_count(m, out)); },
    [](accel_model* m, size_t* out) { return G("accel_model_output_count", model_output_count(m, out)); },
    [](accel_model* m, size_t i, accel_tensor_info* out) { return G("accel_model_input_info", model_input_info(m, i, out)); },
    [](accel_model* m, size_t i, accel_tensor_info* out) { return G("accel_model_output_info", model_output_info(m, i, out)); },
    [](accel_model* m, accel_buffer* const* in, size_t nin, accel_buffer* const* out, size_t nout,
       const accel_run_options* o, accel_job** job) {
        return G("accel_job_submit", job_submit(m, in, nin, out, nout, o, job));
    },
    [](accel_job* j, int64_t timeout_us) { return G("accel_job_wait", job_wait(j, timeout_us)); },
    [](accel_job* j, int32_t* done) { return G("accel_job_poll", job_poll(j, done)); },
    [](accel_job* j, accel_job_timing* out) { return G("accel_job_get_timing", job_get_timing(j, out)); },
    [](accel_job* j) { GV("accel_job_retain", job_retain(j)); },
    [](accel_job* j) { GV("accel_job_release", job_release(j)); },
};

}  // namespace accel_vart

extern "C" ACCEL_DRIVER_EXPORT accel_status accel_driver_entry(
    uint32_t loader_abi_version, const accel_host_api* host, const accel_driver_table** out_table) {
    if (!host || !out_table) return ACCEL_ERR_INVALID_ARGUMENT;
    accel_vart::set_host(host);
    if ((loader_abi_version >> 16) != ACCEL_ABI_VERSION_MAJOR)
        return accel_vart::fail(ACCEL_ERR_ABI_MISMATCH, "the loader's ABI major version differs from the driver's");
    *out_table = &accel_vart::kDriverTable;
    return ACCEL_OK;
}
