// entry_points.h - the vart driver's implementations of the driver table's functions (driver.cc wraps
// each so that no exception crosses the ABI). Contracts: those of accel.h.
#pragma once

#include "accel/driver.h"

namespace accel_vart {

extern const accel_driver_table kDriverTable;
constexpr uint64_t kAlignment = 64;

accel_status device_open(const char* options, accel_device** out);
accel_status device_get_info(accel_device* d, accel_device_info* out);
accel_status device_get_stats(accel_device* d, accel_memory_stats* out);

accel_status buffer_alloc(accel_device* d, uint64_t size, accel_buffer** out);
accel_status buffer_import(accel_device* d, void* host, uint64_t size, accel_buffer** out);
accel_status buffer_host_ptr(accel_buffer* b, void** out);
accel_status buffer_size(accel_buffer* b, uint64_t* out);
accel_status buffer_sync(accel_buffer* b, accel_sync_direction direction, uint64_t offset, uint64_t size);
accel_status buffer_write(accel_buffer* b, uint64_t offset, const void* src, uint64_t size);
accel_status buffer_write_strided(accel_buffer* b, uint64_t offset, const void* src, uint32_t ndim,
                                  const int64_t* shape, const int64_t* strides, uint32_t element_size);
accel_status buffer_read(accel_buffer* b, uint64_t offset, void* dst, uint64_t size);

accel_status model_load_file(accel_device* d, const char* path, accel_model** out);
accel_status model_load_memory(accel_device* d, const void* data, uint64_t size, accel_model** out);
accel_status model_input_count(accel_model* m, size_t* out);
accel_status model_output_count(accel_model* m, size_t* out);
accel_status model_input_info(accel_model* m, size_t index, accel_tensor_info* out);
accel_status model_output_info(accel_model* m, size_t index, accel_tensor_info* out);

accel_status job_submit(accel_model* m, accel_buffer* const* inputs, size_t nin, accel_buffer* const* outputs,
                        size_t nout, const accel_run_options* options, accel_job** out);
accel_status job_wait(accel_job* j, int64_t timeout_us);
accel_status job_poll(accel_job* j, int32_t* out_done);
accel_status job_get_timing(accel_job* j, accel_job_timing* out);
void job_retain(accel_job* j);
void job_release(accel_job* j);

}  // namespace accel_vart
