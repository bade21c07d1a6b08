// engine.cc - see engine.h.
#include "engine.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "device_memory.h"

namespace standin {

struct Task;

namespace {

struct Pack {
    std::vector<std::shared_ptr<LoadedModel>> models;  // shared with the tasks that run them
    std::vector<const char*> names;
};

}  // namespace

// One model's run inside a task.
struct Part {
    Task* task = nullptr;
    std::shared_ptr<const LoadedModel> model;  // a model released while the task runs lives until it ends
    std::vector<TensorDesc> in_desc, out_desc;
    std::vector<uint64_t> in_phy, in_phy2, out_phy;  // in_phy2: a second plane given apart, or 0
    std::vector<accel_buffer*> in, out;  // the emulated model's tensors (float32, or raw inputs' own type)
    accel_job* job = nullptr;  // set under the task's lock once accel_job_submit returns
    bool launched = false;     // ... and then this is true: release may take the job
    accel_run_options options{};
    ~Part() {
        accel_job_release(job);
        for (accel_buffer* b : in) accel_buffer_release(b);
        for (accel_buffer* b : out) accel_buffer_release(b);
    }
};

struct Task {
    Engine* engine = nullptr;
    std::vector<std::unique_ptr<Part>> parts;
    std::mutex mutex;
    std::condition_variable cv;
    bool submitted = false;  // submitted (or queued by the hold)
    bool finished = false;   // every part ended and its outputs are written
    bool done = false;       // ... and the callback has returned: waiters may go
    bool holds_slot = true;  // counted against the task limit
    size_t remaining = 0;    // parts not ended yet
    int32_t status = 0;
    TaskDoneCb callback = nullptr;
    void* userdata = nullptr;
};

LoadedModel::~LoadedModel() { accel_model_release(emulated); }

Engine::Engine(const Config& config) : config_(config) {
    const char* late = std::getenv("ACCEL_STANDIN_LATE_COMPLETION");
    late_ms_ = late ? std::max(0, std::atoi(late)) : 0;
}

accel_device* Engine::device() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!device_ && accel_device_open(config_.device_uri, &device_) != ACCEL_OK) device_ = nullptr;
    return device_;
}

namespace {

// Inputs whose emulator tensor is uint8 (the frame an image model converts itself) are handed over as
// bytes; the file must describe them as U8. False if it does not, or the emulated model has other inputs.
bool mark_raw_inputs(LoadedModel& m) {
    size_t count = 0;
    if (accel_model_input_count(m.emulated, &count) != ACCEL_OK || count != m.inputs.size()) return false;
    for (size_t i = 0; i < count; i++) {
        accel_tensor_info info;
        std::memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (accel_model_input_info(m.emulated, i, &info) != ACCEL_OK) return false;
        if (info.dtype == ACCEL_DTYPE_FLOAT32) continue;
        if (info.dtype != ACCEL_DTYPE_UINT8 || m.inputs[i].type != ElementType::U8) return false;
        m.inputs[i].raw = true;
    }
    return true;
}

}  // namespace

Result Engine::load(const std::vector<std::vector<uint8_t>>& files, const Parser& parse, void** out) {
    if (!out) return Result::InvalidArgument;
    *out = nullptr;
    accel_device* dev = device();
    if (!dev) return Result::NoDevice;
    auto pack = std::make_unique<Pack>();
    for (const auto& bytes : files) {
        std::vector<std::shared_ptr<LoadedModel>> models;
        if (!parse(bytes.data(), bytes.size(), models)) return Result::InvalidModel;
        for (auto& m : models) {
            if (accel_model_load_memory(dev, m->accm.data(), m->accm.size(), &m->emulated) != ACCEL_OK ||
                !mark_raw_inputs(*m))
                return Result::IncompatibleModel;
            pack->models.push_back(std::move(m));
        }
    }
    for (auto& m : pack->models) pack->names.push_back(m->name.c_str());
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& m : pack->models) models_.insert(m.get());
    *out = pack.get();
    packs_.insert(pack.release());
    return Result::Ok;
}

Result Engine::load_files(const char* const* names, int32_t count, const Parser& parse, void** pack) {
    if (!names || count <= 0) return Result::InvalidArgument;
    std::vector<std::vector<uint8_t>> files(count);
    for (int32_t i = 0; i < count; i++) {
        if (!names[i]) return Result::InvalidArgument;
        std::ifstream f(names[i], std::ios::binary);
        if (!f) return Result::FileOpen;
        files[i].assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    return load(files, parse, pack);
}

Result Engine::load_memory(const void* const* data, const int32_t* lengths, int32_t count, const Parser& parse,
                           void** pack) {
    if (!data || !lengths || count <= 0) return Result::InvalidArgument;
    std::vector<std::vector<uint8_t>> files;
    for (int32_t i = 0; i < count; i++) {
        if (!data[i] || lengths[i] <= 0) return Result::InvalidArgument;
        const uint8_t* p = static_cast<const uint8_t*>(data[i]);
        files.emplace_back(p, p + lengths[i]);
    }
    return load(files, parse, pack);
}

Result Engine::release_pack(void* handle) {
    std::unique_ptr<Pack> pack;
    accel_device* last = nullptr;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = packs_.find(handle);
        if (it == packs_.end()) return Result::UnknownPack;
        pack.reset(static_cast<Pack*>(*it));
        packs_.erase(it);
        for (auto& m : pack->models) models_.erase(m.get());
        // With no model left the emulator goes too (its threads with it, before the process exits);
        // tasks still running hold their model, and so the device, themselves.
        if (packs_.empty()) {
            last = device_;
            device_ = nullptr;
        }
    }
    pack.reset();
    accel_device_release(last);
    return Result::Ok;
}

Result Engine::model_names(void* handle, const char*** names, int32_t* count) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!packs_.count(handle)) return Result::UnknownPack;
    Pack* pack = static_cast<Pack*>(handle);
    *names = pack->names.data();
    *count = (int32_t)pack->names.size();
    return Result::Ok;
}

Result Engine::find_model(void* handle, const char* name, void** model) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!packs_.count(handle)) return Result::UnknownPack;
    for (auto& m : static_cast<Pack*>(handle)->models)
        if (m->name == name) {
            *model = m.get();
            return Result::Ok;
        }
    return Result::InvalidArgument;
}

const LoadedModel* Engine::known_model(const void* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = models_.find(static_cast<const LoadedModel*>(handle));
    return it == models_.end() ? nullptr : *it;
}

Result Engine::create_task(Task** out) {
    if (slots_.fetch_add(1) >= config_.task_limit) {
        slots_.fetch_sub(1);
        return Result::TaskLimit;
    }
    Task* task = new Task;
    task->engine = this;
    task->status = config_.status_ok;
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.insert(task);
    *out = task;
    return Result::Ok;
}

// Whether the device side covers input `t` at `phy` (and its second plane at `phy2`, if given apart).
static bool input_in_memory(const TensorDesc& t, uint64_t phy, uint64_t phy2) {
    if (!t.second_plane_row || !phy2) return device_bytes(phy, (uint64_t)t.byte_size) != nullptr;
    return device_bytes(phy, (uint64_t)first_plane(t).byte_size) &&
           device_bytes(phy2, (uint64_t)second_plane(t).byte_size);
}

Result Engine::add_part(Task* task, const LoadedModel* model, std::vector<TensorDesc> in, const uint64_t* in_phy,
                        std::vector<TensorDesc> out, const uint64_t* out_phy, const uint64_t* in_phy2) {
    auto part = std::make_unique<Part>();
    part->task = task;
    part->model = model->shared_from_this();
    part->in_phy.assign(in_phy, in_phy + in.size());
    part->in_phy2.assign(in.size(), 0);
    if (in_phy2) part->in_phy2.assign(in_phy2, in_phy2 + in.size());
    part->out_phy.assign(out_phy, out_phy + out.size());
    accel_device* dev = device();
    bool ok = dev != nullptr;
    for (size_t i = 0; ok && i < in.size(); i++) {
        accel_buffer* b = nullptr;
        ok = input_in_memory(in[i], in_phy[i], part->in_phy2[i]) &&
             accel_buffer_alloc(dev, (uint64_t)valid_elements(in[i]) * 4 + 4, &b) == ACCEL_OK;
        if (b) part->in.push_back(b);
    }
    for (size_t i = 0; ok && i < out.size(); i++) {
        accel_buffer* b = nullptr;
        ok = accel_buffer_alloc(dev, (uint64_t)valid_elements(out[i]) * 4 + 4, &b) == ACCEL_OK;
        if (b) part->out.push_back(b);
    }
    if (!ok) return Result::InvalidArgument;  // an input address no BPU memory covers, or no memory
    part->in_desc = std::move(in);
    part->out_desc = std::move(out);
    std::lock_guard<std::mutex> lock(task->mutex);
    task->parts.push_back(std::move(part));
    return Result::Ok;
}

Result Engine::stage_inputs(Task* task) {
    for (auto& part : task->parts)
        for (size_t i = 0; i < part->in.size(); i++) {
            const TensorDesc& t = part->in_desc[i];
            void* data = nullptr;
            if (accel_buffer_host_ptr(part->in[i], &data) != ACCEL_OK) return Result::InvalidArgument;
            if (t.second_plane_row && part->in_phy2[i]) {  // two blocks: each plane from its own
                const TensorDesc first = first_plane(t), second = second_plane(t);
                const uint8_t* a = device_bytes(part->in_phy[i], (uint64_t)first.byte_size);
                const uint8_t* b = device_bytes(part->in_phy2[i], (uint64_t)second.byte_size);
                if (!a || !b) return Result::InvalidArgument;
                to_emulator(first, a, data);
                const int64_t element = t.raw ? element_size(t.type) : 4;
                to_emulator(second, b, static_cast<uint8_t*>(data) + valid_elements(first) * element);
                continue;
            }
            const uint8_t* src = device_bytes(part->in_phy[i], (uint64_t)t.byte_size);
            if (!src) return Result::InvalidArgument;
            to_emulator(t, src, data);
        }
    return Result::Ok;
}

// The completion of one part's job: its outputs leave the emulator through the output stage into the
// device side of the user's output memory; the last part to end finishes the task.
void Engine::on_part_done(accel_job* job, accel_status status, void* user_data) {
    (void)job;
    Part* part = static_cast<Part*>(user_data);
    Task* task = part->task;
    bool ok = status == ACCEL_OK;
    for (size_t i = 0; ok && i < part->out.size(); i++) {
        const TensorDesc& t = part->out_desc[i];
        void* data = nullptr;
        uint8_t* device_side = device_bytes(part->out_phy[i], (uint64_t)t.byte_size);
        ok = device_side && accel_buffer_host_ptr(part->out[i], &data) == ACCEL_OK;  // freed while running?
        if (!device_side && status == ACCEL_OK && task->engine->late_ms_) {
            // On a board the BPU would now write into memory its owner freed (and maybe reused).
            std::fprintf(stderr,
                         "stand-in: a task released early completed late and found its output %zu freed: "
                         "the BPU would have written into freed memory\n",
                         i);
            std::abort();
        }
        if (ok) from_float(t, static_cast<const float*>(data), device_side);
    }
    bool last;
    {
        std::lock_guard<std::mutex> lock(task->mutex);
        if (!ok) task->status = task->engine->config_.status_failed;
        last = --task->remaining == 0;
    }
    if (last) task->engine->finish(task);
}

void Engine::finish(Task* task) {
    // The callback runs before waiters wake (as accel's own jobs do). `finished` decides, under the
    // lock, whether this thread or set_callback calls a callback set late.
    TaskDoneCb callback;
    void* userdata;
    int32_t status;
    bool slot;
    {
        std::lock_guard<std::mutex> lock(task->mutex);
        task->finished = true;
        callback = task->callback;
        userdata = task->userdata;
        status = task->status;
        slot = task->holds_slot;
        task->holds_slot = false;
    }
    if (callback) callback(task, status, userdata);
    if (slot) slots_.fetch_sub(1);
    // Notified under the lock and not touched after: a waiter that wakes may free the task at once.
    std::lock_guard<std::mutex> lock(task->mutex);
    task->done = true;
    task->cv.notify_all();
}

namespace {

// The job may end, and a caller release its task, before accel_job_submit returns: the handle is
// stored under the task's lock, and release_task waits for it.
bool launch(Part* part) {
    accel_job* job = nullptr;
    bool ok = accel_job_submit(part->model->emulated, part->in.data(), part->in.size(), part->out.data(),
                               part->out.size(), &part->options, &job) == ACCEL_OK;
    std::lock_guard<std::mutex> lock(part->task->mutex);
    part->job = job;
    part->launched = true;
    part->task->cv.notify_all();
    return ok;
}

}  // namespace

void Engine::start(Task* task) {
    for (auto& part : task->parts)
        if (!launch(part.get())) on_part_done(nullptr, ACCEL_ERR_DEVICE, part.get());
}

Result Engine::submit(Task* task, int32_t priority, uint64_t core_mask) {
    {
        std::lock_guard<std::mutex> lock(task->mutex);
        if (task->submitted || task->parts.empty()) return Result::InvalidArgument;
        task->submitted = true;
        task->remaining = task->parts.size();
    }
    for (auto& part : task->parts) {
        accel_run_options& o = part->options;
        o.struct_size = sizeof o;
        o.priority = priority;
        o.core_mask = core_mask;
        o.callback = on_part_done;
        o.user_data = part.get();
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (held_) {
            pending_.push_back(task);
            return Result::Ok;
        }
    }
    // The first part decides whether the task starts at all; later ones that cannot start end failed.
    if (!launch(task->parts[0].get())) {
        std::lock_guard<std::mutex> lock(task->mutex);
        task->submitted = false;
        task->remaining = 0;
        return Result::RunFailed;
    }
    for (size_t i = 1; i < task->parts.size(); i++)
        if (!launch(task->parts[i].get())) on_part_done(nullptr, ACCEL_ERR_DEVICE, task->parts[i].get());
    return Result::Ok;
}

void Engine::hold(bool on) {
    std::vector<Task*> run;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        held_ = on;
        if (!held_) run.swap(pending_);
    }
    for (Task* t : run) start(t);
}

Task* Engine::known_task(const void* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = tasks_.find(static_cast<Task*>(const_cast<void*>(handle)));
    return it == tasks_.end() ? nullptr : *it;
}

bool Engine::submitted(Task* task) {
    std::lock_guard<std::mutex> lock(task->mutex);
    return task->submitted;
}

Result Engine::set_callback(Task* task, TaskDoneCb cb, void* userdata) {
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
    return Result::Ok;
}

Result Engine::wait(Task* task, int32_t timeout_ms, int32_t* status) {
    std::unique_lock<std::mutex> lock(task->mutex);
    if (!task->submitted) return Result::NotSubmitted;
    if (timeout_ms <= 0) {
        task->cv.wait(lock, [&] { return task->done; });
    } else if (!task->cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return task->done; })) {
        return Result::Timeout;
    }
    *status = task->status;
    return Result::Ok;
}

Result Engine::release_task(Task* task) {
    bool was_pending = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!tasks_.erase(task)) return Result::UnknownTask;
        auto it = std::find(pending_.begin(), pending_.end(), task);
        if (it != pending_.end()) {
            pending_.erase(it);
            was_pending = true;
        }
    }
    bool started, done;
    {
        std::lock_guard<std::mutex> lock(task->mutex);
        started = task->submitted;
        done = task->done;
    }
    if (!started) {  // never submitted: nothing runs, no callback
        bool slot;
        {
            std::lock_guard<std::mutex> lock(task->mutex);
            slot = task->holds_slot;
        }
        if (slot) slots_.fetch_sub(1);
        delete task;
        return Result::Ok;
    }
    if (late_ms_ && !done) {  // as the X5's hbDNNReleaseTask: return now, the rest happens in the background
        std::thread([this, task, was_pending] {
            std::this_thread::sleep_for(std::chrono::milliseconds(late_ms_));
            release_submitted(task, was_pending);
        }).detach();
        return Result::Ok;
    }
    release_submitted(task, was_pending);
    return Result::Ok;
}

void Engine::release_submitted(Task* task, bool was_pending) {
    if (was_pending && late_ms_) {
        // The worst the header allows: the BPU had taken the task, and it runs to its end (outputs, callback).
        start(task);
        was_pending = false;
    }
    if (was_pending)  // queued by the hold, never ran: cancelled
        for (auto& part : task->parts) on_part_done(nullptr, ACCEL_ERR_CANCELLED, part.get());
    // Waits for the jobs (one not started is cancelled by its release, one running finishes), so
    // that no completion touches a freed task.
    for (auto& part : task->parts) {
        accel_job* job = nullptr;
        if (!was_pending) {  // launched, or being launched: take its job once launch has stored it
            std::unique_lock<std::mutex> lock(task->mutex);
            task->cv.wait(lock, [&] { return part->launched; });
            job = part->job;
            part->job = nullptr;
        }
        accel_job_release(job);  // its callback still runs (cancelled)
    }
    {
        std::unique_lock<std::mutex> lock(task->mutex);
        task->cv.wait(lock, [&] { return task->done; });
    }
    delete task;
}

}  // namespace standin
