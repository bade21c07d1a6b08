// dnn.cc - the stand-in's hbDNN* API: models from its .bin files run on accel's emulator (through
// libaccel's public ABI), with the runtime's rules: a task limit, timeouts, the vendor's error codes,
// device memory read and written by bus address (memory.h), tensors converted as the BPU's input and
// output stages would (convert.h).
//
// libaccel loads the bpu driver, which loads this library: nothing here calls libaccel before the
// first hbDNN call (a call from a constructor would re-enter libaccel's driver scan).
#include <accel/accel.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "convert.h"
#include "dnn/hb_dnn.h"
#include "memory.h"
#include "model_file.h"

namespace standin {
namespace {

constexpr int kTaskLimit = 32;  // tasks in flight at once, as on the X3/X5 runtime

struct Packed;

struct Model {
    ModelDesc desc;
    accel_model* emulated = nullptr;
    Packed* packed = nullptr;
    ~Model() { accel_model_release(emulated); }
};

struct Packed {
    std::vector<std::shared_ptr<Model>> models;  // shared with the tasks that run them
    std::vector<const char*> names;
};

struct Task {
    std::shared_ptr<const Model> model;  // a model released while the task runs lives until it ends
    std::vector<hbDNNTensor> outputs;      // the user's output descriptors, as given to hbDNNInfer
    std::vector<accel_buffer*> in, out;    // float32 tensors of the emulated model
    accel_job* job = nullptr;
    accel_run_options options{};  // how it is submitted to the emulator
    std::mutex mutex;
    std::condition_variable cv;
    bool finished = false;  // the job ended and its outputs are written
    bool done = false;      // ... and its callback has returned: waiters may go
    bool submitted = false;  // accel_job_submit has returned (job is set): release may take the job
    int32_t status = HB_DNN_SUCCESS;
    hbDNNTaskDoneCb callback = nullptr;
    void* userdata = nullptr;
    ~Task() {
        accel_job_release(job);
        for (accel_buffer* b : in) accel_buffer_release(b);
        for (accel_buffer* b : out) accel_buffer_release(b);
    }
};

struct State {
    std::mutex mutex;
    accel_device* device = nullptr;
    std::set<Packed*> packed;
    std::set<const Model*> models;
    std::set<Task*> tasks;  // not released yet
    std::atomic<int> in_flight{0};
    bool held = false;           // tests: tasks wait here instead of running (standin_hbdnn_hold)
    std::vector<Task*> pending;  // what the hold keeps, in order
};

State& state() {
    static State* s = new State;  // never destroyed: jobs may complete during exit
    return *s;
}

// The emulator device, opened on first use.
accel_device* device() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.device && accel_device_open("emu:cores=2,max_inflight=64", &s.device) != ACCEL_OK) s.device = nullptr;
    return s.device;
}

bool known_model(const Model* m) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return s.models.count(m) != 0;
}

bool same_shape(const hbDNNTensorShape& a, const hbDNNTensorShape& b) {
    if (a.numDimensions != b.numDimensions) return false;
    for (int i = 0; i < a.numDimensions; i++)
        if (a.dimensionSize[i] != b.dimensionSize[i]) return false;
    return true;
}

// Whether the user's tensor fits the model's description closely enough for the BPU to run it.
bool tensor_matches(const hbDNNTensor& given, const TensorDesc& expected) {
    const hbDNNTensorProperties& p = given.properties;
    return p.tensorType == expected.props.tensorType && same_shape(p.validShape, expected.props.validShape) &&
           same_shape(p.alignedShape, expected.props.alignedShape) &&
           given.sysMem[0].memSize >= (uint32_t)expected.props.alignedByteSize;
}

int32_t load_packed(const std::vector<std::vector<uint8_t>>& files, hbPackedDNNHandle_t* out) {
    if (!out) return HB_DNN_INVALID_ARGUMENT;
    *out = nullptr;
    accel_device* dev = device();
    if (!dev) return HB_DNN_RUN_TASK_FAILED;
    auto packed = std::make_unique<Packed>();
    for (const auto& bytes : files) {
        std::vector<ModelDesc> descs;
        std::string why;
        if (!parse_model_file(bytes.data(), bytes.size(), descs, why)) return HB_DNN_INVALID_MODEL;
        for (ModelDesc& d : descs) {
            auto model = std::make_shared<Model>();
            model->desc = std::move(d);
            if (accel_model_load_memory(dev, model->desc.accm.data(), model->desc.accm.size(), &model->emulated) !=
                ACCEL_OK)
                return HB_DNN_INCOMPATIBLE_MODEL;
            model->packed = packed.get();
            packed->models.push_back(std::move(model));
        }
    }
    for (auto& m : packed->models) packed->names.push_back(m->desc.name.c_str());
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    for (auto& m : packed->models) s.models.insert(m.get());
    *out = packed.get();
    s.packed.insert(packed.release());
    return HB_DNN_SUCCESS;
}

// The driver's completion callback: the outputs leave the emulator through the output stage into
// the device side of the user's output memory; then waiters and the task's callback are told.
void on_done(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    Task* task = static_cast<Task*>(user_data);
    int32_t result = HB_DNN_SUCCESS;
    if (status != ACCEL_OK) result = status == ACCEL_ERR_TIMEOUT ? HB_DNN_TIMEOUT : HB_DNN_RUN_TASK_FAILED;
    for (size_t i = 0; result == HB_DNN_SUCCESS && i < task->out.size(); i++) {
        const TensorDesc& t = task->model->desc.outputs[i];
        void* data = nullptr;
        uint8_t* device_side = standin::device_bytes(task->outputs[i].sysMem[0].phyAddr, t.props.alignedByteSize);
        if (!device_side || accel_buffer_host_ptr(task->out[i], &data) != ACCEL_OK) {
            result = HB_DNN_RUN_TASK_FAILED;  // the output memory was freed while the task ran
            break;
        }
        from_float(t, static_cast<const float*>(data), device_side);
    }
    // The callback runs before waiters wake (as accel's own jobs do). `finished` decides, under the
    // lock, whether this thread or hbDNNSetTaskDoneCb calls a callback set late.
    hbDNNTaskDoneCb callback;
    void* userdata;
    {
        std::lock_guard<std::mutex> lock(task->mutex);
        task->status = result;
        task->finished = true;
        callback = task->callback;
        userdata = task->userdata;
    }
    if (callback) callback(task, result, userdata);
    state().in_flight.fetch_sub(1);
    // Notified under the lock and not touched after: a waiter that wakes may free the task at once.
    std::lock_guard<std::mutex> lock(task->mutex);
    task->done = true;
    task->cv.notify_all();
}

// The job may finish (and a caller release the task) before accel_job_submit returns: its handle is
// stored under the task's lock, and hbDNNReleaseTask waits for it.
bool submit(Task* task) {
    accel_job* job = nullptr;
    bool ok = accel_job_submit(task->model->emulated, task->in.data(), task->in.size(), task->out.data(),
                               task->out.size(), &task->options, &job) == ACCEL_OK;
    std::lock_guard<std::mutex> lock(task->mutex);
    task->job = job;
    task->submitted = true;
    task->cv.notify_all();
    return ok;
}

}  // namespace
}  // namespace standin

using namespace standin;

extern "C" {

const char* hbDNNGetVersion(void) { return "1.24.5 (accel stand-in)"; }

const char* hbDNNGetErrorDesc(int32_t code) {
    switch (code) {
        case HB_DNN_SUCCESS: return "success";
        case HB_DNN_INVALID_ARGUMENT: return "invalid argument";
        case HB_DNN_INVALID_MODEL: return "invalid model";
        case HB_DNN_MODEL_NUMBER_EXCEED_LIMIT: return "model number exceeds limit";
        case HB_DNN_INVALID_PACKED_DNN_HANDLE: return "invalid packed dnn handle";
        case HB_DNN_INVALID_DNN_HANDLE: return "invalid dnn handle";
        case HB_DNN_CAN_NOT_OPEN_FILE: return "can not open file";
        case HB_DNN_OUT_OF_MEMORY: return "out of memory";
        case HB_DNN_TIMEOUT: return "timeout";
        case HB_DNN_TASK_NUM_EXCEED_LIMIT: return "task number exceeds limit";
        case HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT: return "task batch size exceeds limit";
        case HB_DNN_INVALID_TASK_HANDLE: return "invalid task handle";
        case HB_DNN_RUN_TASK_FAILED: return "run task failed";
        case HB_DNN_MODEL_IS_RUNNING: return "model is running";
        case HB_DNN_INCOMPATIBLE_MODEL: return "incompatible model";
        case HB_DNN_API_USE_ERROR: return "api use error";
        case HB_DNN_MULTI_PROGRESS_USE_ERROR: return "multi process use error";
        case HB_SYS_INVALID_ARGUMENT: return "sys: invalid argument";
        case HB_SYS_OUT_OF_MEMORY: return "sys: out of memory";
        case HB_SYS_REGISTER_MEM_FAILED: return "sys: register mem failed";
        default: return "unknown error code";
    }
}

int32_t hbDNNInitializeFromFiles(hbPackedDNNHandle_t* packed, const char** names, int32_t count) {
    if (!names || count <= 0) return HB_DNN_INVALID_ARGUMENT;
    std::vector<std::vector<uint8_t>> files;
    for (int32_t i = 0; i < count; i++) {
        if (!names[i]) return HB_DNN_INVALID_ARGUMENT;
        std::ifstream f(names[i], std::ios::binary);
        if (!f) return HB_DNN_CAN_NOT_OPEN_FILE;
        files.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    return load_packed(files, packed);
}

int32_t hbDNNInitializeFromDDR(hbPackedDNNHandle_t* packed, const void** data, int32_t* lengths, int32_t count) {
    if (!data || !lengths || count <= 0) return HB_DNN_INVALID_ARGUMENT;
    std::vector<std::vector<uint8_t>> files;
    for (int32_t i = 0; i < count; i++) {
        if (!data[i] || lengths[i] <= 0) return HB_DNN_INVALID_ARGUMENT;
        const uint8_t* p = static_cast<const uint8_t*>(data[i]);
        files.emplace_back(p, p + lengths[i]);
    }
    return load_packed(files, packed);
}

int32_t hbDNNRelease(hbPackedDNNHandle_t handle) {
    State& s = state();
    std::unique_ptr<Packed> packed;
    accel_device* last = nullptr;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        auto it = s.packed.find(static_cast<Packed*>(handle));
        if (it == s.packed.end()) return HB_DNN_INVALID_PACKED_DNN_HANDLE;
        packed.reset(*it);
        s.packed.erase(it);
        for (auto& m : packed->models) s.models.erase(m.get());
        // With no model left the emulator goes too (its threads with it, before the process exits);
        // tasks still running hold their model, and so the device, themselves.
        if (s.packed.empty()) {
            last = s.device;
            s.device = nullptr;
        }
    }
    packed.reset();
    accel_device_release(last);
    return HB_DNN_SUCCESS;
}

int32_t hbDNNGetModelNameList(const char*** names, int32_t* count, hbPackedDNNHandle_t handle) {
    if (!names || !count) return HB_DNN_INVALID_ARGUMENT;
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    Packed* packed = static_cast<Packed*>(handle);
    if (!s.packed.count(packed)) return HB_DNN_INVALID_PACKED_DNN_HANDLE;
    *names = packed->names.data();
    *count = (int32_t)packed->names.size();
    return HB_DNN_SUCCESS;
}

int32_t hbDNNGetModelHandle(hbDNNHandle_t* out, hbPackedDNNHandle_t handle, const char* name) {
    if (!out || !name) return HB_DNN_INVALID_ARGUMENT;
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    Packed* packed = static_cast<Packed*>(handle);
    if (!s.packed.count(packed)) return HB_DNN_INVALID_PACKED_DNN_HANDLE;
    for (auto& m : packed->models)
        if (m->desc.name == name) {
            *out = m.get();
            return HB_DNN_SUCCESS;
        }
    return HB_DNN_INVALID_ARGUMENT;
}

#define STANDIN_MODEL(h) \
    const Model* model = static_cast<const Model*>(h); \
    if (!known_model(model)) return HB_DNN_INVALID_DNN_HANDLE

int32_t hbDNNGetInputCount(int32_t* count, hbDNNHandle_t h) {
    STANDIN_MODEL(h);
    if (!count) return HB_DNN_INVALID_ARGUMENT;
    *count = (int32_t)model->desc.inputs.size();
    return HB_DNN_SUCCESS;
}

int32_t hbDNNGetOutputCount(int32_t* count, hbDNNHandle_t h) {
    STANDIN_MODEL(h);
    if (!count) return HB_DNN_INVALID_ARGUMENT;
    *count = (int32_t)model->desc.outputs.size();
    return HB_DNN_SUCCESS;
}

static int32_t tensor_name(const char** name, const std::vector<TensorDesc>& ts, int32_t index) {
    if (!name || index < 0 || (size_t)index >= ts.size()) return HB_DNN_INVALID_ARGUMENT;
    *name = ts[index].name.c_str();
    return HB_DNN_SUCCESS;
}

static int32_t tensor_props(hbDNNTensorProperties* props, const std::vector<TensorDesc>& ts, int32_t index) {
    if (!props || index < 0 || (size_t)index >= ts.size()) return HB_DNN_INVALID_ARGUMENT;
    *props = ts[index].properties();
    return HB_DNN_SUCCESS;
}

int32_t hbDNNGetInputName(const char** name, hbDNNHandle_t h, int32_t i) {
    STANDIN_MODEL(h);
    return tensor_name(name, model->desc.inputs, i);
}

int32_t hbDNNGetOutputName(const char** name, hbDNNHandle_t h, int32_t i) {
    STANDIN_MODEL(h);
    return tensor_name(name, model->desc.outputs, i);
}

int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties* props, hbDNNHandle_t h, int32_t i) {
    STANDIN_MODEL(h);
    return tensor_props(props, model->desc.inputs, i);
}

int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties* props, hbDNNHandle_t h, int32_t i) {
    STANDIN_MODEL(h);
    return tensor_props(props, model->desc.outputs, i);
}

int32_t hbDNNInfer(hbDNNTaskHandle_t* task_out, hbDNNTensor** output, const hbDNNTensor* input, hbDNNHandle_t h,
                   hbDNNInferCtrlParam* ctrl) {
    STANDIN_MODEL(h);
    if (!task_out || *task_out || !output || !*output || !input || !ctrl) return HB_DNN_INVALID_ARGUMENT;
    if (ctrl->priority < HB_DNN_PRIORITY_LOWEST || ctrl->priority > HB_DNN_PRIORITY_HIGHEST)
        return HB_DNN_INVALID_ARGUMENT;
    const ModelDesc& desc = model->desc;
    for (size_t i = 0; i < desc.inputs.size(); i++)
        if (!tensor_matches(input[i], desc.inputs[i])) return HB_DNN_INVALID_ARGUMENT;
    for (size_t i = 0; i < desc.outputs.size(); i++)
        if (!tensor_matches((*output)[i], desc.outputs[i])) return HB_DNN_INVALID_ARGUMENT;
    State& s = state();
    if (s.in_flight.fetch_add(1) >= kTaskLimit) {
        s.in_flight.fetch_sub(1);
        return HB_DNN_TASK_NUM_EXCEED_LIMIT;
    }
    auto task = std::make_unique<Task>();
    for (const auto& m : model->packed->models)
        if (m.get() == model) task->model = m;
    task->outputs.assign(*output, *output + desc.outputs.size());
    accel_device* dev = device();
    bool ok = dev != nullptr;
    // The input stage: the device side of each input (what the BPU would read), converted.
    for (size_t i = 0; ok && i < desc.inputs.size(); i++) {
        const TensorDesc& t = desc.inputs[i];
        const uint8_t* src = standin::device_bytes(input[i].sysMem[0].phyAddr, t.props.alignedByteSize);
        accel_buffer* b = nullptr;
        void* data = nullptr;
        ok = src && accel_buffer_alloc(dev, (uint64_t)valid_elements(t) * 4 + 4, &b) == ACCEL_OK;
        if (b) task->in.push_back(b);
        ok = ok && accel_buffer_host_ptr(b, &data) == ACCEL_OK;
        if (ok) to_float(t, src, static_cast<float*>(data));
    }
    for (size_t i = 0; ok && i < desc.outputs.size(); i++) {
        accel_buffer* b = nullptr;
        ok = accel_buffer_alloc(dev, (uint64_t)valid_elements(desc.outputs[i]) * 4 + 4, &b) == ACCEL_OK;
        if (b) task->out.push_back(b);
    }
    if (!ok) {
        s.in_flight.fetch_sub(1);
        return HB_DNN_INVALID_ARGUMENT;  // an input address no BPU memory covers, or no memory
    }
    accel_run_options& options = task->options;
    options.struct_size = sizeof options;
    options.priority = ctrl->priority;
    options.core_mask = (uint64_t)(ctrl->bpuCoreId & 3);
    options.callback = on_done;
    options.user_data = task.get();
    Task* raw = task.get();
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.tasks.insert(raw);
        if (s.held) {
            s.pending.push_back(task.release());
            *task_out = raw;
            return HB_DNN_SUCCESS;
        }
    }
    if (!submit(raw)) {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.tasks.erase(raw);
        s.in_flight.fetch_sub(1);
        return HB_DNN_RUN_TASK_FAILED;
    }
    *task_out = task.release();
    return HB_DNN_SUCCESS;
}

// Tests only: while held, tasks are accepted (and counted against the limit) but wait; releasing the
// hold runs them in order. Lets a test fill the task limit or time out a wait deterministically.
void standin_hbdnn_hold(int on) {
    State& s = state();
    std::vector<Task*> run;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        s.held = on != 0;
        if (!s.held) run.swap(s.pending);
    }
    for (Task* t : run)
        if (!submit(t)) on_done(nullptr, ACCEL_ERR_DEVICE, t);
}

static Task* known_task(hbDNNTaskHandle_t h) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    Task* t = static_cast<Task*>(h);
    return s.tasks.count(t) ? t : nullptr;
}

int32_t hbDNNSetTaskDoneCb(hbDNNTaskHandle_t h, hbDNNTaskDoneCb cb, void* userdata) {
    Task* task = known_task(h);
    if (!task) return HB_DNN_INVALID_TASK_HANDLE;
    bool finished;
    int32_t status;
    {
        std::lock_guard<std::mutex> lock(task->mutex);
        task->callback = cb;
        task->userdata = userdata;
        finished = task->finished;
        status = task->status;
    }
    if (finished && cb) cb(task, status, userdata);  // it ended before the callback was set
    return HB_DNN_SUCCESS;
}

int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t h, int32_t timeout_ms) {
    Task* task = known_task(h);
    if (!task) return HB_DNN_INVALID_TASK_HANDLE;
    std::unique_lock<std::mutex> lock(task->mutex);
    if (timeout_ms <= 0) {
        task->cv.wait(lock, [&] { return task->done; });
    } else if (!task->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return task->done; })) {
        return HB_DNN_TIMEOUT;
    }
    return task->status;
}

int32_t hbDNNReleaseTask(hbDNNTaskHandle_t h) {
    Task* task = known_task(h);
    if (!task) return HB_DNN_INVALID_TASK_HANDLE;
    bool was_pending = false;
    {
        State& s = state();
        std::lock_guard<std::mutex> lock(s.mutex);
        s.tasks.erase(task);
        auto it = std::find(s.pending.begin(), s.pending.end(), task);
        if (it != s.pending.end()) {
            s.pending.erase(it);
            was_pending = true;
        }
    }
    if (was_pending) on_done(nullptr, ACCEL_ERR_CANCELLED, task);  // never ran: cancelled
    // Waits for the job (a job not started is cancelled by the release below, one running finishes),
    // so that its completion never touches a freed task.
    accel_job* job = nullptr;
    if (!was_pending) {  // it was (or is being) submitted: take its job once submit has stored it
        std::unique_lock<std::mutex> lock(task->mutex);
        task->cv.wait(lock, [&] { return task->submitted; });
        job = task->job;
        task->job = nullptr;
    }
    accel_job_release(job);  // cancels a job not started; its callback still runs (cancelled)
    {
        std::unique_lock<std::mutex> lock(task->mutex);
        task->cv.wait(lock, [&] { return task->done; });
    }
    delete task;
    return HB_DNN_SUCCESS;
}

}  // extern "C"
