/*
 * accel.h - the stable C ABI of libaccel.
 *
 * One API over AI-accelerator runtimes (the software emulator "emu", Horizon BPU, Vitis AI).
 * A program links libaccel only; backends are drivers loaded at run time (see accel/driver.h).
 *
 * Rules that hold for every declaration below (after ONNX Runtime's C API guidelines):
 *  - C99; only fixed-width integers, size_t, UTF-8 const char* and plain structs cross this header.
 *  - Every fallible call returns accel_status. ACCEL_OK is 0. On failure, out-parameters are left
 *    untouched and accel_last_error_message() on the same thread describes the failure.
 *  - No call aborts, exits or lets an exception escape. Bad input is a status, never a crash.
 *  - Objects are opaque, reference counted handles. *_retain adds a reference; *_release drops one,
 *    accepts NULL and returns nothing. A handle returned through an out-parameter carries one
 *    reference that the caller owns and must release.
 *  - Lifetimes: a model keeps its device alive; a buffer keeps its device alive; a job keeps its
 *    model, its buffers and its device alive until it has finished. So releasing in any order is safe.
 *  - Thread safety: every function may be called from any thread at any time unless its comment says
 *    otherwise. Handles may be shared between threads.
 *  - Processes: a handle belongs to the process that made it. In a child made by fork() every call on
 *    an inherited handle fails with ACCEL_ERR_CLOSED (the device's threads did not cross the fork)
 *    and retaining or releasing it does nothing; the child opens its own devices, which work as anywhere.
 *  - Structs that may grow begin with `struct_size`: the caller sets it to sizeof(the struct it was
 *    compiled with); the library reads or writes only that many bytes. Growth is append-only.
 *  - Enums are passed as fixed-width integers (the enum types below only name the values).
 */
#ifndef ACCEL_ACCEL_H
#define ACCEL_ACCEL_H

#include <stddef.h>
#include <stdint.h>

#include "accel/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------------------------------ */
/* Versioning                                                                                        */
/* ------------------------------------------------------------------------------------------------ */

/* The ABI version this header describes. A major change breaks compatibility; a minor change only
 * appends (new functions, new enum values, new trailing struct fields). */
#define ACCEL_ABI_VERSION_MAJOR 1
#define ACCEL_ABI_VERSION_MINOR 5
#define ACCEL_ABI_VERSION ((uint32_t)((ACCEL_ABI_VERSION_MAJOR << 16) | ACCEL_ABI_VERSION_MINOR))

/* The ABI version of the loaded library, encoded as (major << 16) | minor. A program compiled against
 * this header should check that the major parts agree and that the minor part is >= the one it needs.
 * Never fails; thread safe. */
ACCEL_API uint32_t accel_abi_version(void);

/* The library's release version as "major.minor.patch". Static storage; never NULL; thread safe. */
ACCEL_API const char* accel_version_string(void);

/* ------------------------------------------------------------------------------------------------ */
/* Status and errors                                                                                 */
/* ------------------------------------------------------------------------------------------------ */

typedef int32_t accel_status;
enum accel_status_code {
    ACCEL_OK = 0,
    ACCEL_ERR_INVALID_ARGUMENT = 1, /* NULL where a value is required, bad option, bad index */
    ACCEL_ERR_SHAPE = 2,            /* a tensor's shape or byte size does not match the model */
    ACCEL_ERR_DTYPE = 3,            /* a tensor's element type does not match the model */
    ACCEL_ERR_ALIGNMENT = 4,        /* a pointer or size is not aligned as the device requires */
    ACCEL_ERR_MODEL_FORMAT = 5,     /* a model file is corrupt, truncated or of an unknown version */
    ACCEL_ERR_OUT_OF_MEMORY = 6,    /* device memory (or host memory) exhausted */
    ACCEL_ERR_BUSY = 7,             /* max_inflight jobs already submitted and ACCEL_SUBMIT_NO_WAIT set */
    ACCEL_ERR_TIMEOUT = 8,          /* a job did not finish within its own timeout */
    ACCEL_ERR_UNSUPPORTED = 9,      /* the backend cannot do this (op, dtype, feature) */
    ACCEL_ERR_DEVICE = 10,          /* the device or its runtime failed */
    ACCEL_ERR_NOT_FOUND = 11,       /* no driver for a URI scheme, no such file, no such tensor name */
    ACCEL_ERR_CANCELLED = 12,       /* the job was released before it started */
    ACCEL_ERR_NOT_READY = 13,       /* a wait or poll ended before the job finished */
    ACCEL_ERR_ABI_MISMATCH = 14,    /* a driver was built for an incompatible ABI version */
    ACCEL_ERR_MEMORY_CORRUPTION = 15, /* a write past a buffer's end was detected (debug mode) */
    ACCEL_ERR_CLOSED = 16,          /* the device was closed, or the handle is another process's (fork) */
    ACCEL_ERR_INTERNAL = 17         /* a bug in libaccel or a driver; the message says where */
};

/* A static, human readable name for a status ("ACCEL_ERR_SHAPE"); "ACCEL_ERR_UNKNOWN" for values
 * this version does not know. Never NULL; thread safe. */
ACCEL_API const char* accel_status_name(accel_status status);

/* The message of the last failed call on the calling thread (UTF-8). Owned by the library; valid until
 * the next failing accel_* call on the same thread. "" if no call has failed on this thread.
 * Successful calls do not clear it. Never NULL. */
ACCEL_API const char* accel_last_error_message(void);

/* The status of the last failed call on the calling thread; ACCEL_OK if none failed. */
ACCEL_API accel_status accel_last_error_status(void);

/* ------------------------------------------------------------------------------------------------ */
/* Tensor metadata                                                                                   */
/* ------------------------------------------------------------------------------------------------ */

#define ACCEL_MAX_DIMS 8

typedef int32_t accel_dtype;
enum accel_dtype_code {
    ACCEL_DTYPE_UNKNOWN = 0,
    ACCEL_DTYPE_FLOAT32 = 1,
    ACCEL_DTYPE_FLOAT16 = 2,
    ACCEL_DTYPE_INT8 = 3,
    ACCEL_DTYPE_UINT8 = 4,
    ACCEL_DTYPE_INT16 = 5,
    ACCEL_DTYPE_INT32 = 6,
    ACCEL_DTYPE_INT64 = 7,
    ACCEL_DTYPE_UINT16 = 8,
    ACCEL_DTYPE_UINT32 = 9,
    ACCEL_DTYPE_UINT64 = 10,
    ACCEL_DTYPE_BOOL = 11
};

/* Size in bytes of one element of `dtype`; 0 for unknown values. Never fails; thread safe. */
ACCEL_API size_t accel_dtype_size(accel_dtype dtype);
/* A static lower-case name ("float32"); "unknown" for unknown values. Never NULL; thread safe. */
ACCEL_API const char* accel_dtype_name(accel_dtype dtype);

typedef int32_t accel_layout;
enum accel_layout_code {
    ACCEL_LAYOUT_NONE = 0, /* no image layout (e.g. a 2-D logits tensor) */
    ACCEL_LAYOUT_NCHW = 1,
    ACCEL_LAYOUT_NHWC = 2
};

typedef int32_t accel_quant_type;
enum accel_quant_type_code {
    ACCEL_QUANT_NONE = 0,
    ACCEL_QUANT_PER_TENSOR = 1, /* real = scale[0] * (q - zero_point[0]) */
    ACCEL_QUANT_PER_AXIS = 2,   /* real = scale[i] * (q - zero_point[i]), i the index along `axis` */
    ACCEL_QUANT_SHIFT = 3       /* real = q / 2^shift[i]; count is 1 or the size of `axis` */
};

/* Quantization parameters. Arrays are owned by the model and valid while it lives; unused arrays are
 * NULL. zero_points may be NULL for a symmetric scheme (all zero). */
typedef struct accel_quantization {
    accel_quant_type type;
    int32_t axis;             /* for PER_AXIS and SHIFT with count > 1; else -1 */
    uint32_t count;           /* number of entries in the arrays below */
    uint32_t reserved;
    const float* scales;      /* PER_TENSOR, PER_AXIS */
    const int32_t* zero_points;
    const uint8_t* shifts;    /* SHIFT */
} accel_quantization;

/* ABI 1.2: the pixel format of an image input (a camera frame the model converts itself, as Horizon's
 * toolchain compiles NV12 models). Every image tensor is uint8, layout NHWC, batch 1, its `shape` the
 * rows, columns and bytes per pixel of the buffer as it lies in memory (below, H and W are the image's
 * height and width, `image_height` and `image_width`): the caller hands the frame over as the camera or
 * decoder made it. `strides` may exceed the dense ones (rows padded to the device's alignment). */
typedef int32_t accel_image_format;
enum accel_image_format_code {
    ACCEL_IMAGE_NONE = 0,     /* not an image: a plain tensor (every output; inputs unless below) */
    ACCEL_IMAGE_NV12 = 1,     /* NV12 in one buffer, shape (1, H * 3/2, W, 1): the Y plane (H rows of W),
                                 then the UV plane (H/2 rows of W/2 interleaved U, V pairs, U first) at
                                 plane_offset[1]; plane_count 2 */
    ACCEL_IMAGE_NV12_Y = 2,   /* the Y plane of an NV12 frame given as its own tensor, shape (1, H, W, 1); the
                                 model's next input is its UV plane */
    ACCEL_IMAGE_NV12_UV = 3,  /* the UV plane of an NV12 frame as its own tensor, shape (1, H/2, W/2, 2); the
                                 model's previous input is its Y plane */
    ACCEL_IMAGE_Y = 4,        /* grey: the luma plane alone, shape (1, H, W, 1) */
    ACCEL_IMAGE_YUV444 = 5,   /* Y, U, V packed per pixel, shape (1, H, W, 3) */
    ACCEL_IMAGE_RGB = 6,      /* shape (1, H, W, 3), R first */
    ACCEL_IMAGE_BGR = 7       /* shape (1, H, W, 3), B first (OpenCV's order) */
};

/* Everything a caller needs to feed or read a model tensor. Filled by accel_model_input_info and
 * accel_model_output_info; `name` and the quantization arrays are owned by the model. */
typedef struct accel_tensor_info {
    uint32_t struct_size;     /* set by the caller: sizeof(accel_tensor_info) */
    accel_dtype dtype;
    accel_layout layout;
    uint32_t ndim;            /* 0 ..ACCEL_MAX_DIMS */
    const char* name;         /* UTF-8, never NULL */
    int64_t shape[ACCEL_MAX_DIMS];   /* valid shape: the logical element counts */
    int64_t strides[ACCEL_MAX_DIMS]; /* byte strides of the device buffer; may exceed the dense ones
                                        (padded layouts on real devices) */
    uint64_t byte_size;       /* bytes the device buffer must hold, padding included */
    accel_quantization quant;
    /* Since ABI 1.2. A driver built against 1.1 does not write these: zero the struct before the call,
     * and 0 then reads as "not an image". A caller compiled against 1.0 or 1.1 passes its smaller
     * struct_size and gets the fields above only. */
    accel_image_format image_format; /* ACCEL_IMAGE_NONE for plain tensors */
    uint32_t plane_count;     /* planes inside this buffer: 2 for NV12, 1 for other images, 0 for none */
    uint64_t plane_offset[2]; /* byte offset of each plane from the start of the buffer (padding included) */
    uint32_t image_width;     /* W and H of the image in pixels; 0 for none */
    uint32_t image_height;
    uint32_t width_align;     /* the device takes images whose W (and H) is a multiple of these: 2 for NV12 */
    uint32_t height_align;    /* (4:2:0), 1 for the others; 0 for none. Row padding a device needs (X3/X5 pad
                                 NV12 and Y rows to 16 bytes) is in `strides`, not here */
} accel_tensor_info;

/* ------------------------------------------------------------------------------------------------ */
/* Handles                                                                                            */
/* ------------------------------------------------------------------------------------------------ */

typedef struct accel_device accel_device; /* an opened device */
typedef struct accel_buffer accel_buffer; /* a block of device memory with a host-visible pointer */
typedef struct accel_model accel_model;   /* a model loaded on a device */
typedef struct accel_job accel_job;       /* one submitted inference */

/* ------------------------------------------------------------------------------------------------ */
/* Drivers                                                                                           */
/* ------------------------------------------------------------------------------------------------ */

/* Drivers are shared libraries named libaccel_driver_<scheme>.so. They are searched for on first use
 * in the directories of the environment variable ACCEL_DRIVER_PATH (':'-separated; a directory or a
 * driver file) if it is set, else in the folder "accel-drivers" next to libaccel itself.
 * A driver whose ABI major version differs from libaccel's is not usable: opening its scheme fails with
 * ACCEL_ERR_ABI_MISMATCH and a message naming the file and both versions. */

/* Number of usable drivers found. Thread safe. */
ACCEL_API accel_status accel_driver_count(size_t* out_count);

/* The URI scheme of usable driver `index` (0 <= index < count), e.g. "emu". The string is static for
 * the life of the process. Thread safe. */
ACCEL_API accel_status accel_driver_name(size_t index, const char** out_name);

/* ------------------------------------------------------------------------------------------------ */
/* Devices                                                                                            */
/* ------------------------------------------------------------------------------------------------ */

/* Opens a device by URI: "<scheme>[:<options>]", e.g. "emu", "emu:cores=2,pool=256M",
 * "bpu:0", "vart:0". Options are driver specific; an unknown option is ACCEL_ERR_INVALID_ARGUMENT.
 * An unknown scheme is ACCEL_ERR_NOT_FOUND. On success *out_device holds one reference (caller owns).
 * Emulator options: cores=N (default 1), threads=N (host threads per core, 1..256; default: the CPUs this
 * process may use divided by cores, at least 1), pool=BYTES[K|M|G] (default 256M),
 * max_inflight=N (default 16), spin=MICROSECONDS (how long idle threads and waiters poll before
 * they sleep; default 50),
 * debug=0|1 (guard bytes; default from ACCEL_EMU_DEBUG). */
ACCEL_API accel_status accel_device_open(const char* uri, accel_device** out_device);
ACCEL_API void accel_device_retain(accel_device* device);
/* Drops a reference. The device is destroyed when its last reference (including those held by
 * models, buffers and jobs) goes. */
ACCEL_API void accel_device_release(accel_device* device);

typedef struct accel_device_info {
    uint32_t struct_size;     /* set by the caller */
    uint32_t cores;           /* compute cores (emulator worker threads) */
    uint32_t max_inflight;    /* jobs submitted and not yet finished, at most */
    uint32_t debug;           /* 1 if guard bytes are checked */
    uint64_t alignment;       /* byte alignment of every buffer's host pointer */
    uint64_t pool_bytes;      /* device memory pool size; 0 if unbounded */
    const char* name;         /* e.g. "accel emulator"; static for the device's life */
    const char* backend;      /* the driver's scheme, e.g. "emu" */
    /* Since ABI 1.1. A driver built against 1.0 does not write these: zero the struct before the call,
     * and 0 then reads as "not reported". */
    uint32_t threads;         /* host threads one job runs on per core (emulator); 0: not applicable */
    /* Since ABI 1.5 (the 1.1 struct's reserved member, which drivers wrote as 0): the performance hint the
     * device was opened with (accel_performance_hint; the emulator's hint= option), 0 where not reported. */
    uint32_t hint;
} accel_device_info;

/* accel_device_info.hint: what the device's cores and threads were chosen for, as OpenVINO's
 * ov::hint::performance_mode. */
typedef uint32_t accel_performance_hint;
enum accel_performance_hint_code {
    ACCEL_HINT_NONE = 0,       /* not reported (a driver built before ABI 1.5, or one without hints) */
    ACCEL_HINT_LATENCY = 1,    /* one job at a time on every CPU */
    ACCEL_HINT_THROUGHPUT = 2  /* one job per CPU, several in flight */
};

/* Fills *out_info (up to out_info->struct_size bytes). Strings are owned by the device. */
ACCEL_API accel_status accel_device_get_info(accel_device* device, accel_device_info* out_info);

typedef struct accel_memory_stats {
    uint32_t struct_size;     /* set by the caller */
    uint32_t reserved;
    uint64_t bytes_in_use;    /* device memory held by buffers, model weights and workspaces */
    uint64_t peak_bytes_in_use;
    uint64_t live_buffers;    /* buffers allocated by the caller and not yet destroyed */
    uint64_t allocations;     /* pool allocations since open (buffers, weights, workspaces) */
    uint64_t bytes_copied;    /* bytes copied by the runtime on the caller's behalf (accel_buffer_write*,
                                 accel_buffer_read) */
    uint64_t jobs_submitted;
    uint64_t jobs_completed;  /* finished in any state: ok, failed, timed out, cancelled */
} accel_memory_stats;

/* Fills *out_stats (up to out_stats->struct_size bytes). */
ACCEL_API accel_status accel_device_get_stats(accel_device* device, accel_memory_stats* out_stats);

/* Checks the integrity of every live buffer of the device (in debug mode: its guard bytes), and reports
 * any corruption found earlier when a buffer was freed. ACCEL_ERR_MEMORY_CORRUPTION names the buffer.
 * Outside debug mode it only reports nothing and returns ACCEL_OK. */
ACCEL_API accel_status accel_device_check(accel_device* device);

/* ------------------------------------------------------------------------------------------------ */
/* Buffers (device memory)                                                                            */
/* ------------------------------------------------------------------------------------------------ */

/* Allocates `size` bytes of device memory (size > 0). The host pointer is aligned to
 * accel_device_info.alignment and the usable size is rounded up to it. Contents are unspecified.
 * ACCEL_ERR_OUT_OF_MEMORY when the pool cannot satisfy the request. *out_buffer: one reference. */
ACCEL_API accel_status accel_buffer_alloc(accel_device* device, uint64_t size, accel_buffer** out_buffer);

/* Wraps caller memory as a device buffer without copying, where the backend can use host memory
 * (the emulator can). `host_ptr` must be aligned to the device alignment (else ACCEL_ERR_ALIGNMENT);
 * the caller keeps the memory valid until the buffer and every job using it are gone.
 * ACCEL_ERR_UNSUPPORTED where the backend cannot import. */
ACCEL_API accel_status accel_buffer_import(accel_device* device, void* host_ptr, uint64_t size,
                                           accel_buffer** out_buffer);

ACCEL_API void accel_buffer_retain(accel_buffer* buffer);
/* Drops a reference; the memory returns to the pool when the last reference (including those held
 * by running jobs) goes. */
ACCEL_API void accel_buffer_release(accel_buffer* buffer);

/* The host-visible pointer (valid while the buffer lives) and the usable size in bytes. */
ACCEL_API accel_status accel_buffer_host_ptr(accel_buffer* buffer, void** out_ptr);
ACCEL_API accel_status accel_buffer_size(accel_buffer* buffer, uint64_t* out_size);

typedef int32_t accel_sync_direction;
enum accel_sync_direction_code {
    ACCEL_SYNC_TO_DEVICE = 1, /* clean the CPU cache after the host wrote, before the device reads */
    ACCEL_SYNC_TO_HOST = 2    /* invalidate the CPU cache after the device wrote, before the host reads */
};

/* Makes [offset, offset+size) coherent in the given direction. size 0 means "to the end". Required on
 * boards with non-coherent caches; cheap where memory is coherent. accel_buffer_write/read and
 * accel_job_submit's inputs/outputs do this themselves. */
ACCEL_API accel_status accel_buffer_sync(accel_buffer* buffer, accel_sync_direction direction, uint64_t offset,
                                         uint64_t size);

/* Copies host memory into the buffer at `offset` (counted in bytes_copied). */
ACCEL_API accel_status accel_buffer_write(accel_buffer* buffer, uint64_t offset, const void* src, uint64_t size);

/* Copies an N-dimensional strided host array into the buffer, densely (C order) from `offset`:
 * `shape` has `ndim` entries, `src_strides` are byte strides (may be negative or zero),
 * `element_size` bytes per element. Exactly one copy, counted in bytes_copied. Any `ndim` is
 * accepted whose array is at most ACCEL_MAX_DIMS-dimensional at heart: dimensions of extent 1 are
 * dropped and a dimension contiguous with the one before it (that one's stride is its extent times
 * its stride) is merged into it, so a NumPy array of up to 64 dimensions, or a slice of one, copies
 * as its merged form; ACCEL_ERR_INVALID_ARGUMENT, naming both dimension counts, if more than
 * ACCEL_MAX_DIMS remain, or for a negative extent (naming the dimension). An array with an extent
 * of 0 copies nothing and succeeds. */
ACCEL_API accel_status accel_buffer_write_strided(accel_buffer* buffer, uint64_t offset, const void* src, uint32_t ndim,
                                                  const int64_t* shape, const int64_t* src_strides,
                                                  uint32_t element_size);

/* Copies from the buffer at `offset` into host memory (counted in bytes_copied). */
ACCEL_API accel_status accel_buffer_read(accel_buffer* buffer, uint64_t offset, void* dst, uint64_t size);

/* ------------------------------------------------------------------------------------------------ */
/* Models                                                                                             */
/* ------------------------------------------------------------------------------------------------ */

/* Loads a model file in the backend's format (the emulator: .accm, see emulator/FORMAT.md). Weights
 * are copied into device memory: changing or deleting the file afterwards changes nothing.
 * ACCEL_ERR_NOT_FOUND if the file cannot be opened; ACCEL_ERR_MODEL_FORMAT if it is not a valid model.
 * *out_model: one reference; the model holds a reference to the device. */
ACCEL_API accel_status accel_model_load_file(accel_device* device, const char* path, accel_model** out_model);

/* Same, from memory. The bytes are only read during the call. */
ACCEL_API accel_status accel_model_load_memory(accel_device* device, const void* data, uint64_t size,
                                               accel_model** out_model);

/* ABI 1.4: how a model is loaded. Zero it, set struct_size to sizeof(accel_load_options), then what you need;
 * members past a caller's struct_size are taken as zero. */
typedef struct accel_load_options {
    uint32_t struct_size;
    uint32_t reserved;    /* 0 */
    /* The one of a file's runnable subgraphs to load, by name (a Vitis AI .xmodel's DPU subgraphs: VART makes one
     * runner per subgraph); NULL loads the file's only one. Read during the call. A device that cannot choose
     * (no ACCEL_DEVICE_LOADS_SUBGRAPH) refuses a name with ACCEL_ERR_UNSUPPORTED; a name the file has not is
     * ACCEL_ERR_INVALID_ARGUMENT, the message listing the ones it has. */
    const char* subgraph;
} accel_load_options;

/* ABI 1.4: accel_model_load_memory with `options` (NULL: the defaults, which is accel_model_load_memory).
 * ACCEL_ERR_INVALID_ARGUMENT for a struct_size below 8 or a reserved member not 0. */
ACCEL_API accel_status accel_model_load_memory_with_options(accel_device* device, const void* data, uint64_t size,
                                                            const accel_load_options* options, accel_model** out_model);

ACCEL_API void accel_model_retain(accel_model* model);
ACCEL_API void accel_model_release(accel_model* model);

ACCEL_API accel_status accel_model_input_count(accel_model* model, size_t* out_count);
ACCEL_API accel_status accel_model_output_count(accel_model* model, size_t* out_count);

/* Fills *out_info (up to out_info->struct_size bytes) for input/output `index`. Pointers inside are
 * owned by the model and valid while it lives. */
ACCEL_API accel_status accel_model_input_info(accel_model* model, size_t index, accel_tensor_info* out_info);
ACCEL_API accel_status accel_model_output_info(accel_model* model, size_t index, accel_tensor_info* out_info);

/* ------------------------------------------------------------------------------------------------ */
/* Inference                                                                                          */
/* ------------------------------------------------------------------------------------------------ */

/* Called exactly once per submitted job, when it finishes in any state (ok, failed, timed out,
 * cancelled), on a thread of the driver (never inside accel_job_submit). `status` is the job's result.
 * The job handle is valid during the call; retain it to keep it longer. Keep callbacks short: they run
 * in completion order on one thread per device, and the job keeps its in-flight slot until its
 * callback returns. A callback may call any accel_* function; inside it accel_job_wait(job, 0) gives
 * the result and message. It must not wait with a timeout for another job of the same device that has a
 * callback: that callback runs after this one returns, on this thread (poll such jobs instead). Threads blocked in
 * accel_job_wait wake after the callback has returned and the job has dropped its references to the model, buffers and
 * device. */
typedef void (*accel_job_callback)(accel_job* job, accel_status status, void* user_data);

enum accel_submit_flags {
    ACCEL_SUBMIT_NO_WAIT = 1, /* return ACCEL_ERR_BUSY instead of blocking when max_inflight is reached */
    /* ABI 1.1: record when each node of the model starts and ends (accel_job_get_node_times). A driver
     * that cannot time nodes runs the job as if the flag were not set (its node times are then
     * ACCEL_ERR_UNSUPPORTED). Without the flag a job pays nothing for the feature. */
    ACCEL_SUBMIT_PROFILE_NODES = 2
};

typedef struct accel_run_options {
    uint32_t struct_size;     /* set by the caller */
    int32_t priority;         /* 0 (lowest) .. 255 (highest); default 0. Higher runs first. */
    uint64_t core_mask;       /* bit i allows core i; 0 means any core */
    int64_t timeout_us;       /* job timeout from submission; 0, negative or > 10^15 means none. A job
                                 that is not finished by then ends with ACCEL_ERR_TIMEOUT (a running
                                 job stops between two operations) */
    uint32_t flags;           /* accel_submit_flags */
    uint32_t reserved;
    accel_job_callback callback; /* optional */
    void* user_data;          /* passed to callback */
} accel_run_options;

/* Submits one inference. inputs[i] feeds model input i and outputs[i] receives model output i; each
 * buffer must be at least the tensor's byte_size. `options` may be NULL for defaults. Blocks while
 * max_inflight jobs are in flight, unless ACCEL_SUBMIT_NO_WAIT (then ACCEL_ERR_BUSY); inside a
 * completion callback, where blocking could never end, it returns ACCEL_ERR_BUSY instead of blocking.
 * An output may not share memory with an input or another output of the same job: the bytes of their
 * tensors are compared, whatever the handles (two imports of one caller array overlap), and any overlap
 * is ACCEL_ERR_INVALID_ARGUMENT; a buffer smaller than its tensor's byte_size is ACCEL_ERR_SHAPE. A priority
 * outside 0..255, a flag accel_submit_flags does not define and a core_mask that selects none of the device's
 * cores are ACCEL_ERR_INVALID_ARGUMENT.
 * On success *out_job holds one reference owned by the caller. Releasing a job that has not started
 * cancels it (its callback sees ACCEL_ERR_CANCELLED); releasing a running job lets it finish.
 * The job retains the model, the buffers and the device until it finishes. `out_job` may be NULL
 * when a callback is given: the job then runs and is cleaned up on its own (fire and forget). */
ACCEL_API accel_status accel_job_submit(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                                        accel_buffer* const* outputs, size_t output_count,
                                        const accel_run_options* options, accel_job** out_job);

/* Waits for the job to finish, up to timeout_us microseconds (negative, or more than 10^15: forever;
 * 0: just poll). Once it returns the job's result, the job holds no model, buffer or device any more.
 * Returns the job's own result once it has finished (ACCEL_OK, ACCEL_ERR_TIMEOUT, ...), or
 * ACCEL_ERR_NOT_READY if the wait ended first. Safe from several threads at once. */
ACCEL_API accel_status accel_job_wait(accel_job* job, int64_t timeout_us);

/* Non-blocking: *out_done = 1 if the job has finished (then accel_job_wait(job, 0) gives its result). */
ACCEL_API accel_status accel_job_poll(accel_job* job, int32_t* out_done);

typedef struct accel_job_timing {
    uint32_t struct_size;     /* set by the caller */
    int32_t core;             /* core that ran it; -1 if it never ran */
    uint64_t queued_ns;       /* CLOCK_MONOTONIC nanoseconds at submission */
    uint64_t started_ns;      /* 0 if it never started */
    uint64_t finished_ns;     /* 0 if not finished */
} accel_job_timing;

/* Fills *out_timing (up to out_timing->struct_size bytes) with the job's timing so far. Callable at any
 * time while the handle is valid (a reference held, or inside the job's callback, where finished_ns is
 * already set); thread safe. What has not happened yet reads 0 (started_ns, finished_ns) or -1 (core):
 * a job that never started (cancelled, or timed out while queued) keeps started_ns 0 and core -1. */
ACCEL_API accel_status accel_job_get_timing(accel_job* job, accel_job_timing* out_timing);

/* Adds a reference to the job, owned by the caller (one more accel_job_release). A job is cancelled only
 * when the last reference a caller holds goes, so a retained job keeps running; inside a completion
 * callback, retaining keeps the handle valid after the callback returns. Accepts NULL; thread safe. */
ACCEL_API void accel_job_retain(accel_job* job);
/* Drops a reference; the handle must not be used after its last one. When the last reference a caller
 * holds goes before the job has started, the job is cancelled (its callback sees ACCEL_ERR_CANCELLED);
 * a running job finishes, and drops its model, buffers and device when it does. Never waits for the
 * job. Accepts NULL; thread safe, also inside a completion callback. */
ACCEL_API void accel_job_release(accel_job* job);

/* Synchronous inference: submit, wait forever, release. Returns the job's result. */
ACCEL_API accel_status accel_run(accel_model* model, accel_buffer* const* inputs, size_t input_count,
                                 accel_buffer* const* outputs, size_t output_count, const accel_run_options* options);

/* ------------------------------------------------------------------------------------------------ */
/* Per-node profiling (ABI 1.1)                                                                      */
/* ------------------------------------------------------------------------------------------------ */

/* A node of a model as the device runs it. Where a compiler fused several source nodes into one (the
 * emulator's Conv+bias+activation, say), that one node is listed: `name` is the source name of the
 * first node it was made of, `op_type` names what runs ("Conv+Relu"). */
typedef struct accel_node_info {
    uint32_t struct_size;     /* set by the caller: sizeof(accel_node_info) */
    uint32_t reserved;
    const char* name;         /* UTF-8, never NULL (may be "" for an unnamed node) */
    const char* op_type;      /* UTF-8, never NULL, e.g. "Conv+Relu", "MaxPool", "Sigmoid" */
} accel_node_info;

/* One node's run within a job: nanoseconds on the clock of accel_job_timing (CLOCK_MONOTONIC). A node
 * that did not run (the job timed out, failed or was cancelled first) reads 0 for both. The layout is
 * fixed: it will not grow. */
typedef struct accel_node_time {
    uint64_t started_ns;
    uint64_t finished_ns;
} accel_node_time;

/* The number of nodes the device runs for the model, in the order it runs them. ACCEL_ERR_UNSUPPORTED
 * where the driver cannot list them (drivers built for ABI 1.0, and drivers that cannot time nodes).
 * Thread safe. */
ACCEL_API accel_status accel_model_get_node_count(accel_model* model, size_t* out_count);

/* Fills *out_info (up to out_info->struct_size bytes) for node `index` (0 <= index < count; else
 * ACCEL_ERR_INVALID_ARGUMENT). The strings are owned by the model and valid while it lives.
 * ACCEL_ERR_UNSUPPORTED as for accel_model_get_node_count. Thread safe. */
ACCEL_API accel_status accel_model_get_node_info(accel_model* model, size_t index, accel_node_info* out_info);

/* The node times of a job submitted with ACCEL_SUBMIT_PROFILE_NODES: entry i is node i of
 * accel_model_get_node_info. *out_count is set to the node count; the first min(capacity, count)
 * entries of `times` (caller owned; may be NULL when capacity is 0) are written, so capacity 0 asks
 * for the count alone. ACCEL_ERR_UNSUPPORTED if the job was submitted without the flag or its driver
 * cannot time nodes; ACCEL_ERR_NOT_READY until the job has finished (callable inside its completion
 * callback). Callable while the handle is valid; thread safe. */
ACCEL_API accel_status accel_job_get_node_times(accel_job* job, accel_node_time* times, size_t capacity,
                                                size_t* out_count);

/* ------------------------------------------------------------------------------------------------ */
/* Device URIs and what a device loads (ABI 1.3)                                                    */
/* ------------------------------------------------------------------------------------------------ */

/* One item of a device URI as byte offsets into the URI string: nothing is copied or allocated, the
 * caller reads `key_length` bytes at uri + key_offset. */
typedef struct accel_uri_item {
    uint64_t key_offset;
    uint64_t key_length;
    uint64_t value_offset;    /* the bytes after the item's first '='; 0 and 0 without one */
    uint64_t value_length;
    int32_t has_value;        /* 1 if the item has an '=' (even with nothing after it) */
    int32_t reserved;         /* 0 */
} accel_uri_item;

/* Splits a device URI "<scheme>[:<options>]" as accel_device_open does (the one parser of URIs): item 0
 * is the scheme (a key, no value); the others are the comma-separated items of the options in order,
 * each split at its first '=' ("cores=2": key "cores", value "2"; "0": key "0" and no value). Empty
 * items are kept ("a,,b" gives three); "emu:" has no options. Options are not checked here: the driver
 * checks them when it opens the device. *out_count is set to the item count; the first
 * min(capacity, count) entries of `items` (caller owned; may be NULL when capacity is 0) are written,
 * so capacity 0 asks for the count alone. ACCEL_ERR_INVALID_ARGUMENT for a NULL `uri` or `out_count`
 * and for a URI with no scheme ("", ":x"), naming the URI. Thread safe. */
ACCEL_API accel_status accel_uri_parse(const char* uri, accel_uri_item* items, size_t capacity, size_t* out_count);

/* The integer arithmetic a device computes quantized (int8) models with. */
typedef int32_t accel_int8_rules;
enum accel_int8_rules_code {
    ACCEL_INT8_RULES_UNKNOWN = 0, /* the driver does not say */
    ACCEL_INT8_RULES_ORT = 1,     /* ONNX Runtime's QLinear kernels */
    ACCEL_INT8_RULES_DPU = 2,     /* the Vitis AI DPU's (power-of-two scales, round half up) */
    ACCEL_INT8_RULES_BPU = 3      /* Horizon's BPU (per-channel shifts) */
};

enum accel_device_flags {
    ACCEL_DEVICE_NODE_TIMES = 1, /* times each node of a job (ACCEL_SUBMIT_PROFILE_NODES); set by libaccel
                                    from the driver's table */
    ACCEL_DEVICE_HOST_CPUS = 2,  /* computes on the host's CPUs, as many as its URI's options size it for (the
                                    emulator's cores= and threads=); without it the device is hardware of its
                                    own, one per board */
    ACCEL_DEVICE_INT8_OPTION = 4, /* the URI option int8=ort|dpu|bpu chooses its int8 rules */
    ACCEL_DEVICE_LOADS_SUBGRAPH = 8 /* ABI 1.4: loads one subgraph of a file by name (accel_load_options.subgraph);
                                       set by libaccel from the driver's table */
};

/* What a device loads and how it computes. Strings are static (valid for the life of the process). */
typedef struct accel_device_description {
    uint32_t struct_size;        /* set by the caller: sizeof(accel_device_description) */
    uint32_t flags;              /* accel_device_flags */
    accel_int8_rules int8_rules; /* for the URI as given (the emulator's int8= option, else its default) */
    uint32_t image_formats;      /* bit (1u << f) for each accel_image_format f its models' inputs may have */
    const char* model_format;    /* the format accel_model_load_* take: "accm" (the output of accel's
                                    compiler: the emulator, which so takes ONNX through it), "hbm" (Horizon's
                                    packed .bin/.hbm), "xmodel"; "" if the driver does not say */
    const char* file_suffixes;   /* the model files' suffixes, lower case, ','-separated: ".bin,.hbm" */
    const char* first_device;    /* the options of the driver's first device: "" (the emulator), "0" */
} accel_device_description;

/* Fills *out (up to out->struct_size bytes) with what a device opened with `uri` would load and how it
 * computes, without opening one (so it answers on a host without the board). The scheme is found as by
 * accel_device_open (ACCEL_ERR_NOT_FOUND, ACCEL_ERR_ABI_MISMATCH as there); a driver may check the
 * options it reads (the emulator's int8=: ACCEL_ERR_INVALID_ARGUMENT). A driver built for ABI 1.2 or
 * older is described by what libaccel knows of it: its flags, and "" for its formats. Thread safe. */
ACCEL_API accel_status accel_device_describe(const char* uri, accel_device_description* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ACCEL_ACCEL_H */
