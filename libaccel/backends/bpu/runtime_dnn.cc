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

class DnnModel;

class DnnTask final : public Task {
public:
    DnnTask(DnnModel* model, TaskDoneFn done, void* context) : model_(model), done_(done), context_(context) {}
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
    DnnModel* model_;
    TaskDoneFn done_;
    void* context_;
    hbDNNTaskHandle_t handle_ = nullptr;
    std::vector<hbDNNTensor> in_, out_;  // alive while the task may read them
};

class DnnModel final : public Model {
public:
    ~DnnModel() override {
        if (packed_) hbDNNRelease(packed_);
    }
    const std::vector<TensorDesc>& inputs() const override { return inputs_; }
    const std::vector<TensorDesc>& outputs() const override { return outputs_; }
    std::unique_ptr<Task> new_task(TaskDoneFn done, void* context) override {
        return std::make_unique<DnnTask>(this, done, context);
    }

    // Takes the packed handle (released with the model) and picks `name` (empty: the first model).
    Status open(hbPackedDNNHandle_t packed, const std::string& name) {
        packed_ = packed;
        const char** names = nullptr;
        int32_t count = 0;
        Status s = vendor_status("hbDNNGetModelNameList", hbDNNGetModelNameList(&names, &count, packed_));
        if (!s.ok()) return s;
        if (count <= 0 || !names) return Status{ACCEL_ERR_MODEL_FORMAT, "the model file holds no model"};
        const char* chosen = names[0];
        if (!name.empty()) {
            chosen = nullptr;
            std::string list;
            for (int32_t i = 0; i < count; i++) {
                if (names[i] && name == names[i]) chosen = names[i];
                list += std::string(i ? ", " : "") + "'" + (names[i] ? names[i] : "") + "'";
            }
            if (!chosen)
                return Status{ACCEL_ERR_NOT_FOUND, "the model file holds no model '" + name + "' (it holds " + list + ")"};
        }
        s = vendor_status("hbDNNGetModelHandle", hbDNNGetModelHandle(&handle_, packed_, chosen));
        if (s.ok()) s = describe(true);
        if (s.ok()) s = describe(false);
        return s;
    }

    hbDNNHandle_t handle() const { return handle_; }
    const std::vector<hbDNNTensorProperties>& props(bool input) const { return input ? in_props_ : out_props_; }

private:
    Status describe(bool input) {
        int32_t count = 0;
        Status s = vendor_status(input ? "hbDNNGetInputCount" : "hbDNNGetOutputCount",
                                 input ? hbDNNGetInputCount(&count, handle_) : hbDNNGetOutputCount(&count, handle_));
        for (int32_t i = 0; s.ok() && i < count; i++) {
            const char* name = nullptr;
            hbDNNTensorProperties p;
            std::memset(&p, 0, sizeof p);
            s = vendor_status(input ? "hbDNNGetInputName" : "hbDNNGetOutputName",
                              input ? hbDNNGetInputName(&name, handle_, i) : hbDNNGetOutputName(&name, handle_, i));
            if (s.ok())
                s = vendor_status(input ? "hbDNNGetInputTensorProperties" : "hbDNNGetOutputTensorProperties",
                                  input ? hbDNNGetInputTensorProperties(&p, handle_, i)
                                        : hbDNNGetOutputTensorProperties(&p, handle_, i));
            TensorDesc t;
            if (s.ok()) s = describe_tensor(p, name, input ? "input" : "output", &t);
            if (s.ok()) {
                (input ? inputs_ : outputs_).push_back(std::move(t));
                (input ? in_props_ : out_props_).push_back(p);
            }
        }
        return s;
    }

    hbPackedDNNHandle_t packed_ = nullptr;
    hbDNNHandle_t handle_ = nullptr;
    std::vector<TensorDesc> inputs_, outputs_;
    std::vector<hbDNNTensorProperties> in_props_, out_props_;  // their arrays point into libdnn's model
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
        // Cached memory is page aligned on a board; where it is not, allocate more and align the view.
        uint64_t rounded = (size + alignment - 1) / alignment * alignment;
        for (uint64_t extra : {uint64_t(0), alignment}) {
            if (rounded + extra > UINT32_MAX)
                return Status{ACCEL_ERR_OUT_OF_MEMORY, "hbSysAllocCachedMem: " + std::to_string(size) +
                                                           " bytes is more than one block can hold (4 GiB)"};
            hbSysMem block;
            std::memset(&block, 0, sizeof block);
            Status s = vendor_status("hbSysAllocCachedMem", hbSysAllocCachedMem(&block, (uint32_t)(rounded + extra)));
            if (!s.ok()) return s;
            uint64_t misalign = reinterpret_cast<uintptr_t>(block.virAddr) % alignment;
            if (misalign && !extra) {
                hbSysFreeMem(&block);
                continue;
            }
            uint64_t offset = misalign ? alignment - misalign : 0;
            out->reset(new DnnMemory(block, offset, rounded));
            return Status{};
        }
        return Status{ACCEL_ERR_INTERNAL, "unreachable"};
    }

    Status load_file(const std::string& path, const std::string& model_name, std::unique_ptr<Model>* out) override {
        hbPackedDNNHandle_t packed = nullptr;
        const char* files[] = {path.c_str()};
        Status s = vendor_status("hbDNNInitializeFromFiles", hbDNNInitializeFromFiles(&packed, files, 1));
        if (!s.ok()) return s;
        return adopt(packed, model_name, out);
    }

    Status load_memory(const void* data, uint64_t size, std::unique_ptr<Model>* out) override {
        if (size > INT32_MAX)
            return Status{ACCEL_ERR_MODEL_FORMAT, "hbDNNInitializeFromDDR: a model of more than 2 GiB"};
        hbPackedDNNHandle_t packed = nullptr;
        const void* blobs[] = {data};
        int32_t lengths[] = {(int32_t)size};
        Status s = vendor_status("hbDNNInitializeFromDDR", hbDNNInitializeFromDDR(&packed, blobs, lengths, 1));
        if (!s.ok()) return s;
        return adopt(packed, std::string(), out);
    }

private:
    static Status adopt(hbPackedDNNHandle_t packed, const std::string& name, std::unique_ptr<Model>* out) {
        auto model = std::make_unique<DnnModel>();
        Status s = model->open(packed, name);
        if (s.ok()) *out = std::move(model);
        return s;
    }

    std::string name_ = std::string("Horizon BPU (libdnn ") + hbDNNGetVersion() + ")";
};

}  // namespace

std::unique_ptr<Runtime> make_runtime() { return std::make_unique<DnnRuntime>(); }

}  // namespace accel_bpu
