/*
 * driver.h - the interface between libaccel (the loader) and a backend driver.
 *
 * A driver is a shared library named libaccel_driver_<scheme>.so exporting one C function,
 * accel_driver_entry (ACCEL_DRIVER_ENTRY_SYMBOL), which returns a versioned table of functions.
 * Programs never call drivers directly: they link libaccel, which finds drivers at run time (see
 * accel_driver_count in accel.h), checks the table's ABI version and dispatches every call.
 *
 * Dispatch is ICD style: every handle a driver hands out (device, buffer, model, job) is a struct of
 * the driver's own whose first member is an accel_object_header pointing at the driver's table, so
 * the loader can route a call from the handle alone, with no lookup.
 *
 * Error reporting: on every failure a driver calls host->set_error(status, message) on the failing
 * thread and returns the same status. A driver never lets a C++ exception, abort or exit escape.
 *
 * Every table function has the contract of the public function of the same name in accel.h; the
 * loader has already checked that handles and out-pointers are not NULL.
 */
#ifndef ACCEL_DRIVER_H
#define ACCEL_DRIVER_H

#include <stddef.h>

#include "accel/accel.h"

#ifdef __cplusplus
extern "C" {
#endif

struct accel_driver_table;

/* The first member of every handle a driver returns. */
typedef struct accel_object_header { const struct accel_driver_table* driver; } accel_object_header;

/* What the loader offers a driver. Valid for the life of the process. */
typedef struct accel_host_api {
    uint32_t struct_size;
    uint32_t abi_version; /* the loader's ACCEL_ABI_VERSION */
    /* Records the failure of the current call on the calling thread. `message` is copied. */
    void (*set_error)(accel_status status, const char* message);
} accel_host_api;

typedef struct accel_driver_table {
    uint32_t struct_size;    /* sizeof(accel_driver_table) as the driver was compiled */
    uint32_t abi_version;    /* ACCEL_ABI_VERSION the driver was compiled with */
    const char* scheme;      /* URI scheme, e.g. "emu"; static */
    const char* description; /* static */

    /* `options` is the part of the URI after "<scheme>:" ("" if none); never NULL. */
    accel_status (*device_open)(const char* options, accel_device** out_device);
    void (*device_retain)(accel_device* device);
    void (*device_release)(accel_device* device);
    accel_status (*device_get_info)(accel_device* device, accel_device_info* out_info);
    accel_status (*device_get_stats)(accel_device* device, accel_memory_stats* out_stats);
    accel_status (*device_check)(accel_device* device);

    accel_status (*buffer_alloc)(accel_device* device, uint64_t size, accel_buffer** out_buffer);
    accel_status (*buffer_import)(accel_device* device, void* host_ptr, uint64_t size, accel_buffer** out_buffer);
    void (*buffer_retain)(accel_buffer* buffer);
    void (*buffer_release)(accel_buffer* buffer);
    accel_status (*buffer_host_ptr)(accel_buffer* buffer, void** out_ptr);
    accel_status (*buffer_size)(accel_buffer* buffer, uint64_t* out_size);
    accel_status (*buffer_sync)(accel_buffer* buffer, accel_sync_direction direction, uint64_t offset, uint64_t size);
    accel_status (*buffer_write)(accel_buffer* buffer, uint64_t offset, const void* src, uint64_t size);
    accel_status (*buffer_write_strided)(accel_buffer* buffer, uint64_t offset, const void* src, uint32_t ndim,
                                         const int64_t* shape, const int64_t* src_strides, uint32_t element_size);
    accel_status (*buffer_read)(accel_buffer* buffer, uint64_t offset, void* dst, uint64_t size);

    accel_status (*model_load_file)(accel_device* device, const char* path, accel_model** out_model);
    accel_status (*model_load_memory)(accel_device* device, const void* data, uint64_t size, accel_model** out_model);
    void (*model_retain)(accel_model* model);
    void (*model_release)(accel_model* model);
    accel_status (*model_input_count)(accel_model* model, size_t* out_count);
    accel_status (*model_output_count)(accel_model* model, size_t* out_count);
    accel_status (*model_input_info)(accel_model* model, size_t index, accel_tensor_info* out_info);
    accel_status (*model_output_info)(accel_model* model, size_t index, accel_tensor_info* out_info);

    /* `options` is never NULL here: the loader passes defaults; struct_size is the caller's. */
    accel_status (*job_submit)(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                               accel_buffer* const* outputs, size_t output_count, const accel_run_options* options,
                               accel_job** out_job);
    accel_status (*job_wait)(accel_job* job, int64_t timeout_us);
    accel_status (*job_poll)(accel_job* job, int32_t* out_done);
    accel_status (*job_get_timing)(accel_job* job, accel_job_timing* out_timing);
    void (*job_retain)(accel_job* job);
    void (*job_release)(accel_job* job);

    /* ABI 1.1, optional: per-node profiling. NULL (or beyond a 1.0 driver's struct_size) where the
     * driver cannot time nodes: the loader then answers ACCEL_ERR_UNSUPPORTED for them and submits
     * jobs with ACCEL_SUBMIT_PROFILE_NODES cleared, so such a driver never sees the flag. */
    accel_status (*model_get_node_count)(accel_model* model, size_t* out_count);
    accel_status (*model_get_node_info)(accel_model* model, size_t index, accel_node_info* out_info);
    accel_status (*job_get_node_times)(accel_job* job, accel_node_time* times, size_t capacity, size_t* out_count);

    /* ABI 1.3, optional: what a device opened with `options` (as device_open takes them) would load and how
     * it computes; `out` is zeroed, its struct_size says how much of it the driver may write. The driver leaves
     * ACCEL_DEVICE_NODE_TIMES to the loader, which sets it from the three members above. NULL: the
     * loader answers with the flags alone. */
    accel_status (*device_describe)(const char* options, accel_device_description* out);

    /* ABI 1.4, optional: accel_model_load_memory_with_options for a driver that loads one subgraph of a file by
     * name; `options` is never NULL here: the loader passes a whole accel_load_options, zero past the caller's
     * struct_size, with a subgraph set (a load without one goes to model_load_memory). NULL: the loader refuses a
     * subgraph with ACCEL_ERR_UNSUPPORTED. */
    accel_status (*model_load_memory_with_options)(accel_device* device, const void* data, uint64_t size,
                                                   const accel_load_options* options, accel_model** out_model);
} accel_driver_table;

/* The table grows only by appending members (a minor version). A loader accepts any table of its
 * major version at least this large, the size of version 1.0's table, and treats members beyond a
 * driver's struct_size as absent: a driver built for an older minor keeps loading. */
#define ACCEL_DRIVER_TABLE_SIZE_1_0 (offsetof(accel_driver_table, job_release) + sizeof(void (*)(void)))

/* Whether `table` has the optional member `member` (set, and within the driver's struct_size). */
#define ACCEL_DRIVER_HAS(table, member) \
    ((table)->struct_size >= offsetof(accel_driver_table, member) + sizeof((table)->member) && (table)->member != NULL)

#define ACCEL_DRIVER_ENTRY_SYMBOL "accel_driver_entry"

/* The one function a driver exports. `loader_abi_version` is the loader's ACCEL_ABI_VERSION; a driver
 * that cannot serve it returns ACCEL_ERR_ABI_MISMATCH. On success *out_table points at a static table. */
typedef accel_status (*accel_driver_entry_fn)(uint32_t loader_abi_version, const accel_host_api* host,
                                              const accel_driver_table** out_table);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACCEL_DRIVER_H */
