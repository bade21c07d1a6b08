// runtime_dnn.cc - the X3/X5 generation: libdnn (hb_dnn.h, hb_sys.h). See runtime.h for the contract.
//
// Facts this relies on (Horizon's libdnn 1.2x API): memory is hbSysAllocCachedMem, flushed whole with
// hbSysFlushMem; a packed model file holds one or more models (hbDNNGetModelNameList); hbDNNInfer takes
// one hbDNNTensor per input and output (sysMem[0] + the model's properties; NV12_SEPARATE images their Y
// and UV planes in sysMem[0] and sysMem[1]) and starts a task; a task's
// end is reported through hbDNNSetTaskDoneCb; hbDNNReleaseTask cancels a task not run yet and stops one
// running, but returns at once and does that "in the background" (1.24.5's header), so the driver
// releases only tasks that have ended (runtime.h, Task); at most 32 tasks are in flight in the process
// (HB_DNN_TASK_NUM_EXCEED_LIMIT).
#include <dnn/hb_dnn.h>
#include <dnn/hb_dnn_status.h>  // the codes and hbDNNGetErrorDesc: the real hb_dnn.h does not include it
#include <dnn/hb_sys.h>

#include <cstring>
#include <new>

#include "dnn_tensor.h"
#include "runtime.h"

namespace accel_bpu {

extern const char kRuntimeDescription[] = "Horizon BPU (RDK X3/X5 libdnn): bpu:0, bpu:1, bpu:any";

namespace {

constexpr uint32_t kTaskLimit = 32;

// A vendor status as ours: "<call>: <code> (<description>)".
Status vendor_status(const char* call, int32_t code) {
    if (code == 0) return Status{};
    accel_status mapped;
    switch (code) {
        case HB_DNN_INVALID_ARGUMENT:
        case HB_SYS_INVALID_ARGUMENT: mapped = ACCEL_ERR_INVALID_ARGUMENT; break;
        case HB_DNN_INVALID_MODEL:
        case HB_DNN_INCOMPATIBLE_MODEL: mapped = ACCEL_ERR_MODEL_FORMAT; break;
        case HB_DNN_CAN_NOT_OPEN_FILE: mapped = ACCEL_ERR_NOT_FOUND; break;
        case HB_DNN_OUT_OF_MEMORY:
        case HB_SYS_OUT_OF_MEMORY: mapped = ACCEL_ERR_OUT_OF_MEMORY; break;
        case HB_DNN_TIMEOUT: mapped = ACCEL_ERR_TIMEOUT; break;
        case HB_DNN_TASK_NUM_EXCEED_LIMIT: mapped = ACCEL_ERR_BUSY; break;
        default: mapped = ACCEL_ERR_DEVICE; break;
    }
    return vendor_failure(mapped, call, code, hbDNNGetErrorDesc(code));
}

using Block = hbSysMem;
using PackedHandle = hbPackedDNNHandle_t;
using TaskHandle = hbDNNTaskHandle_t;
constexpr auto free_block = hbSysFreeMem;
constexpr auto release_task = hbDNNReleaseTask;
constexpr const char* kTaskCall = "hbDNNInfer (task)";

Status flush_block(Block* block, bool to_device) {
    return vendor_status("hbSysFlushMem",
                         hbSysFlushMem(block, to_device ? HB_SYS_MEM_CACHE_CLEAN : HB_SYS_MEM_CACHE_INVALIDATE));
}

// One buffer per tensor; an NV12_SEPARATE image's two planes are two blocks for libdnn (sysMem[0] the Y
// plane, sysMem[1] the UV plane), here both inside the one buffer the ABI describes, the UV plane at its
// plane offset.
void attach(hbDNNTensor& tensor, const Block& block, const TensorDesc& desc) {
    tensor.sysMem[0] = block;
    if (tensor.properties.tensorType != HB_DNN_IMG_TYPE_NV12_SEPARATE || desc.plane_count != 2) return;
    const uint64_t uv = desc.plane_offset[1];
    tensor.sysMem[0].memSize = (uint32_t)uv;
    tensor.sysMem[1].phyAddr = block.phyAddr + uv;
    tensor.sysMem[1].virAddr = static_cast<uint8_t*>(block.virAddr) + uv;
    tensor.sysMem[1].memSize = (uint32_t)(block.memSize - uv);
}

#include "hb_runtime.inc"

class DnnTask final : public HbTask {
public:
    using HbTask::HbTask;
    Status start(const std::vector<Memory*>& inputs, const std::vector<Memory*>& outputs,
                 const Schedule& schedule) override;

private:
    static void on_done(hbDNNTaskHandle_t, int32_t status, void* self) {
        auto* t = static_cast<DnnTask*>(self);
        t->done_(t->context_, vendor_status(kTaskCall, status));
    }
};

Status DnnTask::start(const std::vector<Memory*>& inputs, const std::vector<Memory*>& outputs,
                      const Schedule& schedule) {
    make_tensors(inputs, outputs);
    hbDNNInferCtrlParam ctrl;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&ctrl);
    ctrl.priority = schedule.priority;  // the ABI's 0..255 is libdnn's: 255 = HB_DNN_PRIORITY_PREEMP
    int32_t cores = 0;
    if (schedule.cores & 1) cores |= HB_BPU_CORE_0;
    if (schedule.cores & 2) cores |= HB_BPU_CORE_1;
    ctrl.bpuCoreId = cores == (HB_BPU_CORE_0 | HB_BPU_CORE_1) ? HB_BPU_CORE_ANY : cores;
    hbDNNTensor* out = out_.data();
    Status s = vendor_status("hbDNNInfer", hbDNNInfer(&handle_, &out, in_.data(), model_->handle(), &ctrl));
    if (!s.ok()) {
        handle_ = nullptr;
        return s;
    }
    // The callback may run at once, on this thread, if the task has already ended.
    s = vendor_status("hbDNNSetTaskDoneCb", hbDNNSetTaskDoneCb(handle_, &on_done, this));
    if (!s.ok()) {
        // The task runs but will not say when it ends: wait for it, as its release may return before
        // it stops writing the outputs the driver is about to free.
        hbDNNWaitTaskDone(handle_, 0);
        end();
    }
    return s;
}

class DnnRuntime final : public HbRuntime<DnnTask> {
public:
    DnnRuntime() : HbRuntime(std::string("Horizon BPU (libdnn ") + hbDNNGetVersion() + ")", 2) {}  // HB_BPU_CORE_0, _1

    Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Memory>* out) override {
        auto alloc = [size](uint64_t bytes, hbSysMem* block) {
            if (bytes > UINT32_MAX)
                return Status{ACCEL_ERR_OUT_OF_MEMORY, "hbSysAllocCachedMem: " + std::to_string(size) +
                                                           " bytes is more than one block can hold (4 GiB)"};
            return vendor_status("hbSysAllocCachedMem", hbSysAllocCachedMem(block, (uint32_t)bytes));
        };
        return allocate_memory(size, alignment, alloc, out);
    }
};

}  // namespace

std::unique_ptr<Runtime> make_runtime() { return std::make_unique<DnnRuntime>(); }

}  // namespace accel_bpu
