// runtime.h - what the bpu driver needs from a Horizon runtime generation, and nothing of its types.
//
// The ABI side of the driver (handles, entry points, jobs, timing, stats, the in-flight limit) is
// generic; everything a runtime generation does its own way sits behind these classes:
//   - runtime_dnn.cc: X3/X5 libdnn (hbSys* memory, hbDNNInitializeFrom*, hbDNNInfer, task callbacks);
//   - runtime_ucp.cc: S100 hbDNNInferV2 + hbUCP* (hbUCPMallocCached, hbUCPSubmitTask, ...).
// A driver library is built with exactly one of them (CMake: ACCEL_BPU_API); it defines make_runtime()
// and kRuntimeDescription. What both share by the vendor's names is in hb_model.inc and hb_tensor.inc.
//
// Rules for an implementation: no exception leaves it except std::bad_alloc; every failure is a Status
// whose message names the vendor call, its code and the vendor's description, e.g.
// "hbDNNInfer: -6000009 (task number exceeds limit)".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "accel/accel.h"

namespace accel_bpu {

struct Status {
    accel_status code = ACCEL_OK;
    std::string message;
    bool ok() const { return code == ACCEL_OK; }
};

// A vendor call's failure: "<call>: <code> (<description>)".
inline Status vendor_failure(accel_status mapped, const char* call, int32_t code, const char* description) {
    return Status{mapped,
                  std::string(call) + ": " + std::to_string(code) + " (" + (description ? description : "?") + ")"};
}

// One tensor of a model as the ABI describes it; the runtime fills it from its own properties.
// The driver points accel_tensor_info's arrays into it (the model owns it).
struct TensorDesc {
    std::string name;
    accel_dtype dtype = ACCEL_DTYPE_UNKNOWN;
    accel_layout layout = ACCEL_LAYOUT_NONE;
    uint32_t ndim = 0;
    int64_t shape[ACCEL_MAX_DIMS] = {0};    // valid shape
    int64_t strides[ACCEL_MAX_DIMS] = {0};  // bytes, of the (padded) device buffer
    uint64_t byte_size = 0;                 // padding included
    accel_quant_type quant = ACCEL_QUANT_NONE;
    int32_t quant_axis = -1;
    std::vector<float> scales;
    std::vector<int32_t> zero_points;  // empty: symmetric
    std::vector<uint8_t> shifts;
    // An image input (ABI 1.2): its pixel format, the planes inside this buffer and their byte offsets,
    // the image's size and the alignment the device asks of it (all 0 / NONE for plain tensors).
    accel_image_format image_format = ACCEL_IMAGE_NONE;
    uint32_t plane_count = 0;
    uint64_t plane_offset[2] = {0, 0};
    uint32_t image_width = 0, image_height = 0;
    uint32_t width_align = 0, height_align = 0;
    // S100: bit i set when the model left stride i to the caller (-1); the driver filled it.
    uint32_t dynamic_strides = 0;
};

// A block of device memory the runtime allocated: a host mapping that needs explicit cache maintenance.
class Memory {
public:
    virtual ~Memory() = default;  // frees the block
    virtual void* host() const = 0;
    virtual uint64_t size() const = 0;  // usable bytes from host()
    // Cache maintenance of the whole block: to_device = CLEAN (the CPU wrote), else INVALIDATE.
    virtual Status flush(bool to_device) = 0;
};

// How a task is scheduled, in the ABI's terms (the runtime maps them onto its own).
struct Schedule {
    int32_t priority = 0;   // 0..255, higher first; the top may preempt (libdnn 255, hbUCP 254 and 255)
    uint64_t cores = 0;     // bit i: BPU core i of the board; 0: any core
};

// The runtime reports a task's end here, on a thread of its own, exactly once per started task (or
// not at all if the task is ended first by Task::end).
using TaskDoneFn = void (*)(void* context, const Status& status);

// One inference. start() at most once; end() releases it, and the driver calls it only for a task that
// reported its end through the done callback (or one that never started): a runtime's release may
// return before a running task stops (X5 libdnn's hbDNNReleaseTask "will return immediately, and all
// operations will run in the background"), so a task the driver gives up on (timeout, cancel) is left
// to run, with its memory, until it reports its end (job.cc: abandoned jobs). end() is never called
// from the done callback itself.
class Task {
public:
    virtual ~Task() = default;
    // Starts the task: the tensors are `inputs`/`outputs` (one Memory each, in model order, each at least
    // the tensor's byte_size). ACCEL_ERR_BUSY means the runtime's own task limit was reached.
    virtual Status start(const std::vector<Memory*>& inputs, const std::vector<Memory*>& outputs,
                         const Schedule& schedule) = 0;
    virtual void end() = 0;
};

class Model {
public:
    virtual ~Model() = default;  // unloads
    virtual const std::vector<TensorDesc>& inputs() const = 0;
    virtual const std::vector<TensorDesc>& outputs() const = 0;
    virtual std::unique_ptr<Task> new_task(TaskDoneFn done, void* context) = 0;
};

class Runtime {
public:
    virtual ~Runtime() = default;
    virtual const char* device_name() const = 0;   // e.g. "Horizon BPU (libdnn 1.24.5)"
    virtual uint32_t core_count() const = 0;       // BPU cores a task may be pinned to
    virtual uint32_t task_limit() const = 0;       // tasks in flight at once (process wide)
    virtual Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Memory>* out) = 0;
    // `model_name` empty: the first model of the file. Errors: NOT_FOUND (no such file / model name),
    // MODEL_FORMAT, UNSUPPORTED (a tensor type the ABI cannot describe, named).
    virtual Status load_file(const std::string& path, const std::string& model_name, std::unique_ptr<Model>* out) = 0;
    virtual Status load_memory(const void* data, uint64_t size, std::unique_ptr<Model>* out) = 0;
};

// The runtime generation this driver was built for, and the driver's description naming it.
std::unique_ptr<Runtime> make_runtime();
extern const char kRuntimeDescription[];

}  // namespace accel_bpu
