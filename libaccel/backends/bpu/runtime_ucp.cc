// runtime_ucp.cc - the S100 generation: hbDNN over hbUCP (hobot/dnn/hb_dnn.h, hobot/hb_ucp*.h). See
// runtime.h for the contract.
//
// Facts this relies on (Horizon's hbUCP 3.x API): memory is hbUCPMallocCached (device 0), flushed whole
// with hbUCPMemFlush and freed with hbUCPFree; the model API is libdnn's (packed files of named models);
// hbDNNInferV2 with a null task makes a task that is not started yet (one hbDNNTensor per input and
// output: one hbUCPSysMem each + the properties, dynamic strides filled in); hbUCPSubmitTask starts it
// with hbUCPSchedParam (priority 0..255, 254 and 255 preempt; backend = core bits); its end is reported
// through hbUCPSetTaskDoneCb; hbUCPReleaseTask releases "a task and its related resources" (3.13.6's
// header says no more: not whether it waits for a running task), so, as with libdnn, the driver
// releases only tasks that have ended (runtime.h, Task); at most 32 tasks exist at once in the process (hbDNNInferV2
// then says HB_DNN_TASK_NUM_EXCEED_LIMIT).
#include <hobot/dnn/hb_dnn.h>
#include <hobot/dnn/hb_dnn_status.h>
#include <hobot/hb_ucp.h>
#include <hobot/hb_ucp_status.h>
#include <hobot/hb_ucp_sys.h>

#include <cstring>
#include <mutex>
#include <new>

#include "runtime.h"
#include "ucp_tensor.h"

namespace accel_bpu {

extern const char kRuntimeDescription[] = "Horizon BPU (RDK S100 hbUCP): bpu:0..3, bpu:any";

namespace {

constexpr uint32_t kTaskLimit = 32;
constexpr uint32_t kCores = 4;  // HB_UCP_BPU_CORE_0..3
const uint64_t kCoreBits[kCores] = {HB_UCP_BPU_CORE_0, HB_UCP_BPU_CORE_1, HB_UCP_BPU_CORE_2, HB_UCP_BPU_CORE_3};

// A vendor status as ours: "<call>: <code> (<description>)". The hbDNN codes are hbUCP's.
Status vendor_status(const char* call, int32_t code) {
    if (code == HB_UCP_SUCCESS) return Status{};
    accel_status mapped;
    switch (code) {
        case HB_UCP_INVALID_ARGUMENT: mapped = ACCEL_ERR_INVALID_ARGUMENT; break;
        case HB_UCP_MODEL_INVALID:
        case HB_UCP_MODEL_INCOMPATIBLE: mapped = ACCEL_ERR_MODEL_FORMAT; break;
        case HB_UCP_FILE_OPEN_FAILED: mapped = ACCEL_ERR_NOT_FOUND; break;
        case HB_UCP_MEM_ALLOC_FAIL: mapped = ACCEL_ERR_OUT_OF_MEMORY; break;
        case HB_UCP_TASK_TIMEOUT: mapped = ACCEL_ERR_TIMEOUT; break;
        case HB_UCP_TASK_NUMBER_EXCEED_LIMIT: mapped = ACCEL_ERR_BUSY; break;
        default: mapped = ACCEL_ERR_DEVICE; break;
    }
    return vendor_failure(mapped, call, code, hbUCPGetErrorDesc(code));
}

using Block = hbUCPSysMem;
using PackedHandle = hbDNNPackedHandle_t;
using TaskHandle = hbUCPTaskHandle_t;
constexpr auto free_block = hbUCPFree;
constexpr auto release_task = hbUCPReleaseTask;
constexpr const char* kTaskCall = "hbUCPSubmitTask (task)";

Status flush_block(Block* block, bool to_device) {
    return vendor_status("hbUCPMemFlush",
                         hbUCPMemFlush(block, to_device ? HB_SYS_MEM_CACHE_CLEAN : HB_SYS_MEM_CACHE_INVALIDATE));
}

void attach(hbDNNTensor& tensor, const Block& block, const TensorDesc&) { tensor.sysMem = block; }

#include "hb_runtime.inc"

class UcpTask final : public HbTask {
public:
    using HbTask::HbTask;
    Status start(const std::vector<Memory*>& inputs, const std::vector<Memory*>& outputs,
                 const Schedule& schedule) override;

private:
    // The callback is set before the submit, so a short task may end while hbUCPSubmitTask still runs;
    // its end is then reported when the submit returns, never while the runtime is inside a call on
    // the task (the driver releases a task that has ended).
    static void on_end(hbUCPTaskHandle_t, int32_t status, void* self);

    std::mutex mutex_;
    bool submitting_ = false, ended_in_submit_ = false;
    Status end_status_;
};

void UcpTask::on_end(hbUCPTaskHandle_t, int32_t status, void* self) {
    auto* t = static_cast<UcpTask*>(self);
    Status s = vendor_status(kTaskCall, status);
    {
        std::lock_guard<std::mutex> lock(t->mutex_);
        if (t->submitting_) {
            t->ended_in_submit_ = true;
            t->end_status_ = std::move(s);
            return;
        }
    }
    t->done_(t->context_, s);
}

// The board cores a task may run on as hbUCP backend bits: all of them (or none named) is any core.
uint64_t backend_of(uint64_t cores) {
    uint64_t backend = 0;
    for (uint32_t i = 0; i < kCores; i++)
        if ((cores >> i) & 1) backend |= kCoreBits[i];
    return cores == 0 || backend == (HB_UCP_BPU_CORE_0 | HB_UCP_BPU_CORE_1 | HB_UCP_BPU_CORE_2 | HB_UCP_BPU_CORE_3)
               ? HB_UCP_BPU_CORE_ANY
               : backend;
}

Status UcpTask::start(const std::vector<Memory*>& inputs, const std::vector<Memory*>& outputs,
                      const Schedule& schedule) {
    make_tensors(inputs, outputs);
    // Made, not started: the callback is set before the task can end.
    Status s = vendor_status("hbDNNInferV2", hbDNNInferV2(&handle_, out_.data(), in_.data(), model_->handle()));
    if (!s.ok()) {
        handle_ = nullptr;
        return s;
    }
    s = vendor_status("hbUCPSetTaskDoneCb", hbUCPSetTaskDoneCb(handle_, &UcpTask::on_end, this));
    if (s.ok()) {
        hbUCPSchedParam sched;
        HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
        sched.priority = schedule.priority;  // the ABI's 0..255 is hbUCP's: 254 and 255 preempt on a board
        sched.backend = backend_of(schedule.cores);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            submitting_ = true;
        }
        s = vendor_status("hbUCPSubmitTask", hbUCPSubmitTask(handle_, &sched));
        bool ended;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            submitting_ = false;
            ended = ended_in_submit_;
        }
        if (s.ok() && ended) done_(context_, end_status_);
    }
    if (!s.ok()) end();  // never started: freed, no callback
    return s;
}

class UcpRuntime final : public HbRuntime<UcpTask> {
public:
    UcpRuntime()
        : HbRuntime(std::string("Horizon BPU (hbUCP ") + hbUCPGetVersion() + ", " + hbUCPGetSocName() + ")", kCores) {}

    Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Memory>* out) override {
        auto alloc = [](uint64_t bytes, hbUCPSysMem* block) {
            return vendor_status("hbUCPMallocCached", hbUCPMallocCached(block, bytes, 0));
        };
        return allocate_memory(size, alignment, alloc, out);
    }
};

}  // namespace

std::unique_ptr<Runtime> make_runtime() { return std::make_unique<UcpRuntime>(); }

}  // namespace accel_bpu
