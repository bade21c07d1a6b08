// runtime_dnn.cc - the X3/X5 generation: libdnn (hb_dnn.h, hb_sys.h). See runtime.h for the contract.
//
// Facts this relies on (Horizon's libdnn 1.2x API): memory is hbSysAllocCachedMem, flushed whole with
// hbSysFlushMem; a packed model file holds one or more models (hbDNNGetModelNameList); hbDNNInfer takes
// one hbDNNTensor per input and output (sysMem[0] + the model's properties) and starts a task; a task's
// end is reported through hbDNNSetTaskDoneCb; hbDNNReleaseTask cancels a task not run yet, stops one
// running, and after it no callback comes; at most 32 tasks are in flight in the process
// (HB_DNN_TASK_NUM_EXCEED_LIMIT).
#include <dnn/hb_dnn.h>
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
    const char* desc = hbDNNGetErrorDesc(code);
    return Status{mapped, std::string(call) + ": " + std::to_string(code) + " (" + (desc ? desc : "?") + ")"};
}

class DnnMemory final : public Memory {
public:
    // `block` is what hbSysAllocCachedMem gave; the user's view starts `offset` bytes into it.
    DnnMemory(const hbSysMem& block, uint64_t offset, uint64_t size) : block_(block), offset_(offset), size_(size) {}
    ~DnnMemory() override { hbSysFreeMem(&block_); }
    void* host() const override { return static_cast<uint8_t*>(block_.virAddr) + offset_; }
    uint64_t size() const override { return size_; }
    Status flush(bool to_device) override {
        return vendor_status("hbSysFlushMem",
                             hbSysFlushMem(&block_, to_device ? HB_SYS_MEM_CACHE_CLEAN : HB_SYS_MEM_CACHE_INVALIDATE));
    }
    // The tensor memory the BPU sees: the user's view of the block.
    hbSysMem view() const {
        hbSysMem m = block_;
        m.phyAddr += offset_;
        m.virAddr = host();
        m.memSize = (uint32_t)size_;
        return m;
    }

private:
    hbSysMem block_;
    uint64_t offset_, size_;
};

using PackedHandle = hbPackedDNNHandle_t;

#include "hb_model.inc"

class DnnTask final : public Task {
public:
    DnnTask(HbModel* model, TaskDoneFn done, void* context) : model_(model), done_(done), context_(context) {}
    ~DnnTask() override { end(); }
    Status start(const std::vector<Memory*>& inputs, const std::vector<Memory*>& outputs,
                 const Schedule& schedule) override;
    void end() override {
        if (handle_) hbDNNReleaseTask(handle_);
        handle_ = nullptr;
    }

private:
    static void on_done(hbDNNTaskHandle_t, int32_t status, void* self) {
        auto* t = static_cast<DnnTask*>(self);
        t->done_(t->context_, vendor_status("hbDNNInfer (task)", status));
    }
    HbModel* model_;
    TaskDoneFn done_;
    void* context_;
    hbDNNTaskHandle_t handle_ = nullptr;
    std::vector<hbDNNTensor> in_, out_;  // alive while the task may read them
};

class DnnModel final : public HbModel {
public:
    std::unique_ptr<Task> new_task(TaskDoneFn done, void* context) override {
        return std::make_unique<DnnTask>(this, done, context);
    }
};

Status DnnTask::start(const std::vector<Memory*>& inputs, const std::vector<Memory*>& outputs,
                      const Schedule& schedule) {
    auto tensors = [](const std::vector<Memory*>& mems, const std::vector<hbDNNTensorProperties>& props) {
        std::vector<hbDNNTensor> out(mems.size());
        for (size_t i = 0; i < mems.size(); i++) {
            std::memset(&out[i], 0, sizeof out[i]);
            out[i].sysMem[0] = static_cast<DnnMemory*>(mems[i])->view();
            out[i].properties = props[i];
        }
        return out;
    };
    in_ = tensors(inputs, model_->props(true));
    out_ = tensors(outputs, model_->props(false));
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
    s = vendor_status("hbDNNSetTaskDoneCb", hbDNNSetTaskDoneCb(handle_, &DnnTask::on_done, this));
    if (!s.ok()) end();
    return s;
}

class DnnRuntime final : public Runtime {
public:
    const char* device_name() const override { return name_.c_str(); }
    uint32_t core_count() const override { return 2; }  // HB_BPU_CORE_0, HB_BPU_CORE_1
    uint32_t task_limit() const override { return kTaskLimit; }

    Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Memory>* out) override {
        auto alloc = [size](uint64_t bytes, hbSysMem* block) {
            if (bytes > UINT32_MAX)
                return Status{ACCEL_ERR_OUT_OF_MEMORY, "hbSysAllocCachedMem: " + std::to_string(size) +
                                                           " bytes is more than one block can hold (4 GiB)"};
            return vendor_status("hbSysAllocCachedMem", hbSysAllocCachedMem(block, (uint32_t)bytes));
        };
        hbSysMem block;
        uint64_t offset = 0, rounded = 0;
        Status s = allocate_aligned(size, alignment, alloc, hbSysFreeMem, &block, &offset, &rounded);
        if (s.ok()) out->reset(new DnnMemory(block, offset, rounded));
        return s;
    }

    Status load_file(const std::string& path, const std::string& model_name, std::unique_ptr<Model>* out) override {
        return load_file_as<DnnModel>(path, model_name, out);
    }
    Status load_memory(const void* data, uint64_t size, std::unique_ptr<Model>* out) override {
        return load_memory_as<DnnModel>(data, size, out);
    }

private:
    std::string name_ = std::string("Horizon BPU (libdnn ") + hbDNNGetVersion() + ")";
};

}  // namespace

std::unique_ptr<Runtime> make_runtime() { return std::make_unique<DnnRuntime>(); }

}  // namespace accel_bpu
