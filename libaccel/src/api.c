/* api.c - the public entry points: argument checks that every backend shares, then dispatch to the
 * driver that owns the handle (its table pointer is the first member of every handle). */
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define DRIVER_OF(handle) (((const accel_object_header*)(const void*)(handle))->driver)

/* Calls a driver function and makes sure a failure always leaves a message. */
#define CALL_DRIVER(fn_name, expr)                                                     \
    do {                                                                               \
        accel_error_begin_call();                                                      \
        accel_status status_ = (expr);                                                 \
        if (status_ != ACCEL_OK && !accel_error_was_set())                             \
            accel_fail(status_, "%s failed: %s", fn_name, accel_status_name(status_)); \
        return status_;                                                                \
    } while (0)

#define REQUIRE(cond, fn_name, what)                                                         \
    do {                                                                                     \
        if (!(cond)) return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "%s: %s", fn_name, what); \
    } while (0)

/* ---- devices ---- */

/* The driver of `uri`'s scheme, and in *options what follows the scheme's colon; NULL with *status set (the
 * message recorded, naming `fn`) for a URI with no scheme or a scheme no driver serves. */
static const accel_driver_table* driver_of_uri(const char* uri, const char* fn, const char** options,
                                               accel_status* status) {
    size_t scheme_len = 0;
    *status = accel_uri_scheme(uri, fn, &scheme_len, options);
    if (*status != ACCEL_OK) return NULL;
    return accel_find_driver(uri, scheme_len, status);
}

ACCEL_API accel_status accel_device_open(const char* uri, accel_device** out_device) {
    REQUIRE(uri, "accel_device_open", "uri is NULL");
    REQUIRE(out_device, "accel_device_open", "out_device is NULL");
    const char* options = NULL;
    accel_status status = ACCEL_OK;
    const accel_driver_table* driver = driver_of_uri(uri, "accel_device_open", &options, &status);
    if (!driver) return status;
    CALL_DRIVER("accel_device_open", driver->device_open(options, out_device));
}

ACCEL_API accel_status accel_device_describe(const char* uri, accel_device_description* out) {
    REQUIRE(uri, "accel_device_describe", "uri is NULL");
    REQUIRE(out, "accel_device_describe", "out is NULL");
    REQUIRE(out->struct_size >= sizeof(uint32_t), "accel_device_describe", "out->struct_size is not set");
    const char* options = NULL;
    accel_status status = ACCEL_OK;
    const accel_driver_table* driver = driver_of_uri(uri, "accel_device_describe", &options, &status);
    if (!driver) return status;
    /* Filled whole here and copied out as far as the caller's struct goes, so that a driver of another
     * minor version never writes past it. */
    accel_device_description answer;
    memset(&answer, 0, sizeof answer);
    answer.struct_size = sizeof answer;
    answer.model_format = answer.file_suffixes = answer.first_device = "";
    if (ACCEL_DRIVER_HAS(driver, device_describe)) {
        accel_error_begin_call();
        status = driver->device_describe(options, &answer);
        if (status != ACCEL_OK) {
            if (!accel_error_was_set())
                accel_fail(status, "accel_device_describe failed: %s", accel_status_name(status));
            return status;
        }
    }
    answer.flags &= ~(uint32_t)ACCEL_DEVICE_NODE_TIMES;
    if (ACCEL_DRIVER_HAS(driver, model_get_node_count)) answer.flags |= ACCEL_DEVICE_NODE_TIMES;
    answer.flags &= ~(uint32_t)ACCEL_DEVICE_LOADS_SUBGRAPH;
    if (ACCEL_DRIVER_HAS(driver, model_load_memory_with_options)) answer.flags |= ACCEL_DEVICE_LOADS_SUBGRAPH;
    uint32_t size = out->struct_size < sizeof answer ? out->struct_size : (uint32_t)sizeof answer;
    answer.struct_size = out->struct_size;
    memcpy(out, &answer, size);
    return ACCEL_OK;
}

ACCEL_API void accel_device_retain(accel_device* device) {
    if (device) DRIVER_OF(device)->device_retain(device);
}

ACCEL_API void accel_device_release(accel_device* device) {
    if (device) DRIVER_OF(device)->device_release(device);
}

ACCEL_API accel_status accel_device_get_info(accel_device* device, accel_device_info* out_info) {
    REQUIRE(device, "accel_device_get_info", "device is NULL");
    REQUIRE(out_info, "accel_device_get_info", "out_info is NULL");
    REQUIRE(out_info->struct_size >= sizeof(uint32_t), "accel_device_get_info", "out_info->struct_size is not set");
    CALL_DRIVER("accel_device_get_info", DRIVER_OF(device)->device_get_info(device, out_info));
}

ACCEL_API accel_status accel_device_get_stats(accel_device* device, accel_memory_stats* out_stats) {
    REQUIRE(device, "accel_device_get_stats", "device is NULL");
    REQUIRE(out_stats, "accel_device_get_stats", "out_stats is NULL");
    REQUIRE(out_stats->struct_size >= sizeof(uint32_t), "accel_device_get_stats", "out_stats->struct_size is not set");
    CALL_DRIVER("accel_device_get_stats", DRIVER_OF(device)->device_get_stats(device, out_stats));
}

ACCEL_API accel_status accel_device_check(accel_device* device) {
    REQUIRE(device, "accel_device_check", "device is NULL");
    CALL_DRIVER("accel_device_check", DRIVER_OF(device)->device_check(device));
}

/* ---- buffers ---- */

ACCEL_API accel_status accel_buffer_alloc(accel_device* device, uint64_t size, accel_buffer** out_buffer) {
    REQUIRE(device, "accel_buffer_alloc", "device is NULL");
    REQUIRE(out_buffer, "accel_buffer_alloc", "out_buffer is NULL");
    REQUIRE(size > 0, "accel_buffer_alloc", "size is 0");
    CALL_DRIVER("accel_buffer_alloc", DRIVER_OF(device)->buffer_alloc(device, size, out_buffer));
}

ACCEL_API accel_status accel_buffer_import(accel_device* device, void* host_ptr, uint64_t size,
                                           accel_buffer** out_buffer) {
    REQUIRE(device, "accel_buffer_import", "device is NULL");
    REQUIRE(host_ptr, "accel_buffer_import", "host_ptr is NULL");
    REQUIRE(out_buffer, "accel_buffer_import", "out_buffer is NULL");
    REQUIRE(size > 0, "accel_buffer_import", "size is 0");
    CALL_DRIVER("accel_buffer_import", DRIVER_OF(device)->buffer_import(device, host_ptr, size, out_buffer));
}

ACCEL_API void accel_buffer_retain(accel_buffer* buffer) {
    if (buffer) DRIVER_OF(buffer)->buffer_retain(buffer);
}

ACCEL_API void accel_buffer_release(accel_buffer* buffer) {
    if (buffer) DRIVER_OF(buffer)->buffer_release(buffer);
}

ACCEL_API accel_status accel_buffer_host_ptr(accel_buffer* buffer, void** out_ptr) {
    REQUIRE(buffer, "accel_buffer_host_ptr", "buffer is NULL");
    REQUIRE(out_ptr, "accel_buffer_host_ptr", "out_ptr is NULL");
    CALL_DRIVER("accel_buffer_host_ptr", DRIVER_OF(buffer)->buffer_host_ptr(buffer, out_ptr));
}

ACCEL_API accel_status accel_buffer_size(accel_buffer* buffer, uint64_t* out_size) {
    REQUIRE(buffer, "accel_buffer_size", "buffer is NULL");
    REQUIRE(out_size, "accel_buffer_size", "out_size is NULL");
    CALL_DRIVER("accel_buffer_size", DRIVER_OF(buffer)->buffer_size(buffer, out_size));
}

ACCEL_API accel_status accel_buffer_sync(accel_buffer* buffer, accel_sync_direction direction, uint64_t offset,
                                         uint64_t size) {
    REQUIRE(buffer, "accel_buffer_sync", "buffer is NULL");
    if (direction != ACCEL_SYNC_TO_DEVICE && direction != ACCEL_SYNC_TO_HOST)
        return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_buffer_sync: unknown direction %d", (int)direction);
    CALL_DRIVER("accel_buffer_sync", DRIVER_OF(buffer)->buffer_sync(buffer, direction, offset, size));
}

ACCEL_API accel_status accel_buffer_write(accel_buffer* buffer, uint64_t offset, const void* src, uint64_t size) {
    REQUIRE(buffer, "accel_buffer_write", "buffer is NULL");
    REQUIRE(src || size == 0, "accel_buffer_write", "src is NULL");
    CALL_DRIVER("accel_buffer_write", DRIVER_OF(buffer)->buffer_write(buffer, offset, src, size));
}

/* Whether dimension `outer` (stride `outer_stride`) steps over exactly `n` of the next one's steps, so
 * that the two are one dimension of `n` times its extent (never true where the product overflows). */
static int contiguous(int64_t outer_stride, int64_t stride, int64_t n) {
    if (stride > INT64_MAX / n || stride < INT64_MIN / n) return 0;
    return outer_stride == stride * n;
}

ACCEL_API accel_status accel_buffer_write_strided(accel_buffer* buffer, uint64_t offset, const void* src, uint32_t ndim,
                                                  const int64_t* shape, const int64_t* src_strides,
                                                  uint32_t element_size) {
    REQUIRE(buffer, "accel_buffer_write_strided", "buffer is NULL");
    REQUIRE(src, "accel_buffer_write_strided", "src is NULL");
    REQUIRE(ndim == 0 || (shape && src_strides), "accel_buffer_write_strided", "shape or src_strides is NULL");
    REQUIRE(element_size > 0, "accel_buffer_write_strided", "element_size is 0");
    /* The array at heart: unit dimensions dropped, each dimension merged into the one before it when
     * the two are contiguous with each other; a zero-size array copies nothing. Drivers see at most
     * ACCEL_MAX_DIMS dimensions. */
    int64_t merged_shape[ACCEL_MAX_DIMS];
    int64_t merged_strides[ACCEL_MAX_DIMS];
    uint32_t merged = 0; /* may pass ACCEL_MAX_DIMS, for the refusal's message; only the first are kept */
    int64_t last_stride = 0; /* of the last merged dimension */
    int empty = 0;
    for (uint32_t i = 0; i < ndim; i++) {
        const int64_t n = shape[i];
        if (n < 0)
            return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_buffer_write_strided: dimension %u is %lld", i,
                              (long long)n);
        if (n == 0) empty = 1;
        if (n <= 1 || empty) continue;
        const int joins = merged > 0 && contiguous(last_stride, src_strides[i], n) &&
                          (merged > ACCEL_MAX_DIMS || merged_shape[merged - 1] <= INT64_MAX / n);
        if (!joins) merged++;
        if (merged <= ACCEL_MAX_DIMS) {
            merged_shape[merged - 1] = joins ? merged_shape[merged - 1] * n : n;
            merged_strides[merged - 1] = src_strides[i];
        }
        last_stride = src_strides[i];
    }
    if (empty) return ACCEL_OK;
    if (merged > ACCEL_MAX_DIMS)
        return accel_fail(ACCEL_ERR_INVALID_ARGUMENT,
                          "accel_buffer_write_strided: the array has %u dimensions, %u once unit ones are dropped and "
                          "contiguous ones merged; at most %d are supported",
                          ndim, merged, ACCEL_MAX_DIMS);
    CALL_DRIVER("accel_buffer_write_strided",
                DRIVER_OF(buffer)->buffer_write_strided(buffer, offset, src, merged, merged_shape, merged_strides,
                                                        element_size));
}

ACCEL_API accel_status accel_buffer_read(accel_buffer* buffer, uint64_t offset, void* dst, uint64_t size) {
    REQUIRE(buffer, "accel_buffer_read", "buffer is NULL");
    REQUIRE(dst || size == 0, "accel_buffer_read", "dst is NULL");
    CALL_DRIVER("accel_buffer_read", DRIVER_OF(buffer)->buffer_read(buffer, offset, dst, size));
}

/* ---- models ---- */

ACCEL_API accel_status accel_model_load_file(accel_device* device, const char* path, accel_model** out_model) {
    REQUIRE(device, "accel_model_load_file", "device is NULL");
    REQUIRE(path, "accel_model_load_file", "path is NULL");
    REQUIRE(out_model, "accel_model_load_file", "out_model is NULL");
    CALL_DRIVER("accel_model_load_file", DRIVER_OF(device)->model_load_file(device, path, out_model));
}

ACCEL_API accel_status accel_model_load_memory(accel_device* device, const void* data, uint64_t size,
                                               accel_model** out_model) {
    REQUIRE(device, "accel_model_load_memory", "device is NULL");
    REQUIRE(data, "accel_model_load_memory", "data is NULL");
    REQUIRE(out_model, "accel_model_load_memory", "out_model is NULL");
    CALL_DRIVER("accel_model_load_memory", DRIVER_OF(device)->model_load_memory(device, data, size, out_model));
}

ACCEL_API accel_status accel_model_load_memory_with_options(accel_device* device, const void* data, uint64_t size,
                                                            const accel_load_options* options,
                                                            accel_model** out_model) {
    static const char fn[] = "accel_model_load_memory_with_options";
    REQUIRE(device, fn, "device is NULL");
    REQUIRE(data, fn, "data is NULL");
    REQUIRE(out_model, fn, "out_model is NULL");
    /* The caller's options, whole: zero past its struct_size (an older caller's). */
    accel_load_options opts;
    memset(&opts, 0, sizeof opts);
    if (options) {
        REQUIRE(options->struct_size >= offsetof(accel_load_options, reserved) + sizeof(uint32_t), fn,
                "options->struct_size is not set");
        memcpy(&opts, options, options->struct_size < sizeof opts ? options->struct_size : sizeof opts);
        REQUIRE(opts.reserved == 0, fn, "options->reserved is not 0");
    }
    opts.struct_size = sizeof opts;
    const accel_driver_table* driver = DRIVER_OF(device);
    if (!opts.subgraph) CALL_DRIVER(fn, driver->model_load_memory(device, data, size, out_model));
    if (!ACCEL_DRIVER_HAS(driver, model_load_memory_with_options))
        return accel_fail(ACCEL_ERR_UNSUPPORTED,
                          "%s: backend '%s' loads a model file as it is: it cannot choose subgraph '%.200s' of it", fn,
                          driver->scheme, opts.subgraph);
    CALL_DRIVER(fn, driver->model_load_memory_with_options(device, data, size, &opts, out_model));
}

ACCEL_API void accel_model_retain(accel_model* model) {
    if (model) DRIVER_OF(model)->model_retain(model);
}

ACCEL_API void accel_model_release(accel_model* model) {
    if (model) DRIVER_OF(model)->model_release(model);
}

ACCEL_API accel_status accel_model_input_count(accel_model* model, size_t* out_count) {
    REQUIRE(model, "accel_model_input_count", "model is NULL");
    REQUIRE(out_count, "accel_model_input_count", "out_count is NULL");
    CALL_DRIVER("accel_model_input_count", DRIVER_OF(model)->model_input_count(model, out_count));
}

ACCEL_API accel_status accel_model_output_count(accel_model* model, size_t* out_count) {
    REQUIRE(model, "accel_model_output_count", "model is NULL");
    REQUIRE(out_count, "accel_model_output_count", "out_count is NULL");
    CALL_DRIVER("accel_model_output_count", DRIVER_OF(model)->model_output_count(model, out_count));
}

ACCEL_API accel_status accel_model_input_info(accel_model* model, size_t index, accel_tensor_info* out_info) {
    REQUIRE(model, "accel_model_input_info", "model is NULL");
    REQUIRE(out_info, "accel_model_input_info", "out_info is NULL");
    REQUIRE(out_info->struct_size >= sizeof(uint32_t), "accel_model_input_info", "out_info->struct_size is not set");
    CALL_DRIVER("accel_model_input_info", DRIVER_OF(model)->model_input_info(model, index, out_info));
}

ACCEL_API accel_status accel_model_output_info(accel_model* model, size_t index, accel_tensor_info* out_info) {
    REQUIRE(model, "accel_model_output_info", "model is NULL");
    REQUIRE(out_info, "accel_model_output_info", "out_info is NULL");
    REQUIRE(out_info->struct_size >= sizeof(uint32_t), "accel_model_output_info", "out_info->struct_size is not set");
    CALL_DRIVER("accel_model_output_info", DRIVER_OF(model)->model_output_info(model, index, out_info));
}

/* ---- jobs ---- */

static const accel_run_options default_options = {sizeof(accel_run_options), 0, 0, 0, 0, 0, NULL, NULL};

ACCEL_API accel_status accel_job_submit(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                                        accel_buffer* const* outputs, size_t output_count,
                                        const accel_run_options* options, accel_job** out_job) {
    REQUIRE(model, "accel_job_submit", "model is NULL");
    REQUIRE(inputs || input_count == 0, "accel_job_submit", "inputs is NULL");
    REQUIRE(outputs || output_count == 0, "accel_job_submit", "outputs is NULL");
    if (options && options->struct_size < sizeof(uint32_t))
        return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_job_submit: options->struct_size is not set");
    const accel_run_options* opts = options ? options : &default_options;
    /* Fire and forget is only safe when someone hears about the end: the callback. */
    if (!out_job) {
        size_t callback_end = offsetof(accel_run_options, callback) + sizeof(accel_job_callback);
        if (opts->struct_size < callback_end || !opts->callback)
            return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_job_submit: out_job is NULL and no callback is set");
    }
    const accel_driver_table* driver = DRIVER_OF(model);
    /* A driver that cannot time nodes runs the job without them: it never sees a flag it may refuse. */
    accel_run_options without_profile;
    const size_t flags_end = offsetof(accel_run_options, flags) + sizeof(uint32_t);
    if (opts->struct_size >= flags_end && (opts->flags & ACCEL_SUBMIT_PROFILE_NODES) &&
        !ACCEL_DRIVER_HAS(driver, job_get_node_times)) {
        memset(&without_profile, 0, sizeof without_profile);
        memcpy(&without_profile, opts,
               opts->struct_size < sizeof without_profile ? opts->struct_size : sizeof without_profile);
        without_profile.flags &= ~(uint32_t)ACCEL_SUBMIT_PROFILE_NODES;
        opts = &without_profile;
    }
    CALL_DRIVER("accel_job_submit",
                driver->job_submit(model, inputs, input_count, outputs, output_count, opts, out_job));
}

ACCEL_API accel_status accel_job_wait(accel_job* job, int64_t timeout_us) {
    REQUIRE(job, "accel_job_wait", "job is NULL");
    CALL_DRIVER("accel_job_wait", DRIVER_OF(job)->job_wait(job, timeout_us));
}

ACCEL_API accel_status accel_job_poll(accel_job* job, int32_t* out_done) {
    REQUIRE(job, "accel_job_poll", "job is NULL");
    REQUIRE(out_done, "accel_job_poll", "out_done is NULL");
    CALL_DRIVER("accel_job_poll", DRIVER_OF(job)->job_poll(job, out_done));
}

ACCEL_API accel_status accel_job_get_timing(accel_job* job, accel_job_timing* out_timing) {
    REQUIRE(job, "accel_job_get_timing", "job is NULL");
    REQUIRE(out_timing, "accel_job_get_timing", "out_timing is NULL");
    REQUIRE(out_timing->struct_size >= sizeof(uint32_t), "accel_job_get_timing", "out_timing->struct_size is not set");
    CALL_DRIVER("accel_job_get_timing", DRIVER_OF(job)->job_get_timing(job, out_timing));
}

ACCEL_API void accel_job_retain(accel_job* job) {
    if (job) DRIVER_OF(job)->job_retain(job);
}

ACCEL_API void accel_job_release(accel_job* job) {
    if (job) DRIVER_OF(job)->job_release(job);
}

/* ---- per-node profiling (ABI 1.1; optional in drivers) ---- */

#define REQUIRE_ENTRY(handle, member, fn_name)                                                                   \
    do {                                                                                                         \
        if (!ACCEL_DRIVER_HAS(DRIVER_OF(handle), member))                                                        \
            return accel_fail(ACCEL_ERR_UNSUPPORTED, "%s: the '%s' driver cannot time a model's nodes", fn_name, \
                              DRIVER_OF(handle)->scheme);                                                        \
    } while (0)

ACCEL_API accel_status accel_model_get_node_count(accel_model* model, size_t* out_count) {
    REQUIRE(model, "accel_model_get_node_count", "model is NULL");
    REQUIRE(out_count, "accel_model_get_node_count", "out_count is NULL");
    REQUIRE_ENTRY(model, model_get_node_count, "accel_model_get_node_count");
    CALL_DRIVER("accel_model_get_node_count", DRIVER_OF(model)->model_get_node_count(model, out_count));
}

ACCEL_API accel_status accel_model_get_node_info(accel_model* model, size_t index, accel_node_info* out_info) {
    REQUIRE(model, "accel_model_get_node_info", "model is NULL");
    REQUIRE(out_info, "accel_model_get_node_info", "out_info is NULL");
    REQUIRE(out_info->struct_size >= sizeof(uint32_t), "accel_model_get_node_info", "out_info->struct_size is not set");
    REQUIRE_ENTRY(model, model_get_node_info, "accel_model_get_node_info");
    CALL_DRIVER("accel_model_get_node_info", DRIVER_OF(model)->model_get_node_info(model, index, out_info));
}

ACCEL_API accel_status accel_job_get_node_times(accel_job* job, accel_node_time* times, size_t capacity,
                                                size_t* out_count) {
    REQUIRE(job, "accel_job_get_node_times", "job is NULL");
    REQUIRE(times || capacity == 0, "accel_job_get_node_times", "times is NULL and capacity is not 0");
    REQUIRE(out_count, "accel_job_get_node_times", "out_count is NULL");
    REQUIRE_ENTRY(job, job_get_node_times, "accel_job_get_node_times");
    CALL_DRIVER("accel_job_get_node_times", DRIVER_OF(job)->job_get_node_times(job, times, capacity, out_count));
}

ACCEL_API accel_status accel_run(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                                 accel_buffer* const* outputs, size_t output_count, const accel_run_options* options) {
    accel_job* job = NULL;
    accel_status status = accel_job_submit(model, inputs, input_count, outputs, output_count, options, &job);
    if (status != ACCEL_OK) return status;
    status = accel_job_wait(job, -1);
    accel_job_release(job);
    return status;
}
