// runtime_ucp.cc - the S100 generation: hbDNN over hbUCP (hobot/dnn/hb_dnn.h, hobot/hb_ucp*.h). See
// runtime.h for the contract.
//
// Facts this relies on (Horizon's hbUCP 3.x API): memory is hbUCPMallocCached (device 0), flushed whole
// with hbUCPMemFlush and freed with hbUCPFree; the model API is libdnn's (packed files of named models);
// hbDNNInferV2 with a null task makes a task that is not started yet (one hbDNNTensor per input and
// output: one hbUCPSysMem each + the properties, dynamic strides filled in); hbUCPSubmitTask starts it
// with hbUCPSchedParam (priority 0..255, 254 and 255 preempt; backend = core bits); its end is reported
// through hbUCPSetTaskDoneCb; hbUCPReleaseTask cancels a task not started, lets one running finish, and
// after it no callback comes; at most 32 tasks exist at once in the process (hbDNNInferV2 then says
// HB_DNN_TASK_NUM_EXCEED_LIMIT).
#include <hobot/dnn/hb_dnn.h>
#include <hobot/dnn/hb_dnn_status.h>
#include <hobot/hb_ucp.h>
#include <hobot/hb_ucp_status.h>
#include <hobot/hb_ucp_sys.h>

#include <cstring>
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
    const char* desc = hbUCPGetErrorDesc(code);
    return Status{mapped, std::string(call) + ": " + std::to_string(code) + " (" + (desc ? desc : "?") + ")"};
}

class UcpMemory final : public Memory {
public:
    // `block` is what hbUCPMallocCached gave; the user's view starts `offset` bytes into it.
    UcpMemory(const hbUCPSysMem& block, uint64_t offset, uint64_t size) : block_(block), offset_(offset), size_(size) {}
    ~UcpMemory() override { hbUCPFree(&block_); }
    void* host() const override { return static_cast<uint8_t*>(block_.virAddr) + offset_; }
    uint64_t size() const override { return size_; }
    Status flush(bool to_device) override {
        return vendor_status("hbUCPMemFlush",
                             hbUCPMemFlush(&block_, to_device ? HB_SYS_MEM_CACHE_CLEAN : HB_SYS_MEM_CACHE_INVALIDATE));
    }
    // The tensor memory the BPU sees: the user's view of the block.
    hbUCPSysMem view() const { return hbUCPSysMem{block_.phyAddr + offset_, host(), size_}; }

private:
    hbUCPSysMem block_;
    uint64_t offset_, size_;
};

using PackedHandle = hbDNNPackedHandle_t;

#include "hb_model.inc"

class UcpTask final : public Task {
public:
    UcpTask(HbModel* model, TaskDoneFn done, void* context) : model_(model), done_(done), context_(context) {}
    ~UcpTask() override { end(); }
    Status start(const std::vector<Memory*>& inputs, const std::vector<Memory*>& outputs,
                 const Schedule& schedule) override;
    void end() override {
        if (handle_) hbUCPReleaseTask(handle_);
        handle_ = nullptr;
    }

private:
    static void on_done(hbUCPTaskHandle_t, int32_t status, void* self) {
        auto* t = static_cast<UcpTask*>(self);
        t->done_(t->context_, vendor_status("hbUCPSubmitTask (task)", status));
    }
    HbModel* model_;
    TaskDoneFn done_;
    void* context_;
    hbUCPTaskHandle_t handle_ = nullptr;
    std::vector<hbDNNTensor> in_, out_;  // alive while the task may read them
};

class UcpModel final : public HbModel {
public:
    std::unique_ptr<Task> new_task(TaskDoneFn done, void* context) override {
        return std::make_unique<UcpTask>(this, done, context);
    }
};

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
    auto tensors = [](const std::vector<Memory*>& mems, const std::vector<hbDNNTensorProperties>& props) {
        std::vector<hbDNNTensor> out(mems.size());
        for (size_t i = 0; i < mems.size(); i++) {
            std::memset(&out[i], 0, sizeof out[i]);
            out[i].sysMem = static_cast<UcpMemory*>(mems[i])->view();
            out[i].properties = props[i];
        }
        return out;
    };
    in_ = tensors(inputs, model_->props(true));
    out_ = tensors(outputs, model_->props(false));
    // Made, not started: the callback is set before the task can end.
    Status s = vendor_status("hbDNNInferV2", hbDNNInferV2(&handle_, out_.data(), in_.data(), model_->handle()));
    if (!s.ok()) {
        handle_ = nullptr;
        return s;
    }
    s = vendor_status("hbUCPSetTaskDoneCb", hbUCPSetTaskDoneCb(handle_, &UcpTask::on_done, this));
    if (s.ok()) {
        hbUCPSchedParam sched;
        HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
        sched.priority = schedule.priority;  // the ABI's 0..255 is hbUCP's: 254 and 255 preempt on a board
        sched.backend = backend_of(schedule.cores);
        s = vendor_status("hbUCPSubmitTask", hbUCPSubmitTask(handle_, &sched));
    }
    if (!s.ok()) end();  // never started: freed, no callback
    return s;
}

class UcpRuntime final : public Runtime {
public:
    const char* device_name() const override { return name_.c_str(); }
    uint32_t core_count() const override { return kCores; }
    uint32_t task_limit() const override { return kTaskLimit; }

    Status allocate(uint64_t size, uint64_t alignment, std::unique_ptr<Memory>* out) override {
        auto alloc = [](uint64_t bytes, hbUCPSysMem* block) {
            return vendor_status("hbUCPMallocCached", hbUCPMallocCached(block, bytes, 0));
        };
        hbUCPSysMem block;
        uint64_t offset = 0, rounded = 0;
        Status s = allocate_aligned(size, alignment, alloc, hbUCPFree, &block, &offset, &rounded);
        if (s.ok()) out->reset(new UcpMemory(block, offset, rounded));
        return s;
    }

    Status load_file(const std::string& path, const std::string& model_name, std::unique_ptr<Model>* out) override {
        return load_file_as<UcpModel>(path, model_name, out);
    }
    Status load_memory(const void* data, uint64_t size, std::unique_ptr<Model>* out) override {
        return load_memory_as<UcpModel>(data, size, out);
    }

private:
    std::string name_ = std::string("Horizon BPU (hbUCP ") + hbUCPGetVersion() + ", " + hbUCPGetSocName() + ")";
};

}  // namespace

std::unique_ptr<Runtime> make_runtime() { return std::make_unique<UcpRuntime>(); }

}  // namespace accel_bpu
