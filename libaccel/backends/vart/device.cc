// device.cc - the vart device: URI options, info and stats, and the completion thread that ends jobs
// (callbacks, references, waiters) and enforces the per-job timeouts.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "driver_kit/abi_copy.h"
#include "driver_kit/driver_tls.h"
#include "driver_kit/options.h"
#include "entry_points.h"
#include "handles.h"

namespace accel_vart {

struct Completion {
    std::mutex mutex;
    std::condition_variable cv;
    std::deque<Job*> ready;                   // ended jobs to finish off, each holding the system ref
    std::multimap<uint64_t, Job*> deadlines;  // each entry holds a job reference
    bool stop = false;
    std::thread thread;
};

namespace {

ACCEL_DRIVER_TLS bool t_on_completion_thread = false;
ACCEL_DRIVER_TLS Job* t_job_in_callback = nullptr;

// The end of a job, on the completion thread: its callback, then its references go, then waiters wake.
void end_job(accel_device* d, Job* job) {
    accel_status status;
    {
        std::lock_guard<std::mutex> lock(job->mutex);
        status = job->status;
    }
    if (job->callback) {
        t_job_in_callback = job;
        job->callback(job, status, job->user_data);
        t_job_in_callback = nullptr;
    }
    Job* watched = nullptr;
    {
        std::lock_guard<std::mutex> lock(d->completion->mutex);
        auto range = d->completion->deadlines.equal_range(job->deadline_ns);
        for (auto it = range.first; it != range.second; ++it)
            if (it->second == job) {
                watched = job;
                d->completion->deadlines.erase(it);
                break;
            }
    }
    if (watched) job_unref(watched);
    device_retain(d);  // the model may hold the last reference
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        d->in_flight--;
    }
    d->slot_cv.notify_all();
    for (accel_buffer* b : job->inputs) buffer_release(b);
    for (accel_buffer* b : job->outputs) buffer_release(b);
    job->inputs.clear();
    job->outputs.clear();
    model_release(job->model);
    job->model = nullptr;
    d->jobs_completed.fetch_add(1);
    {
        std::lock_guard<std::mutex> lock(job->mutex);
        job->state = JobState::Done;
        job->done_cv.notify_all();
    }
    job_unref(job);
    device_release(d);
}

void completion_loop(accel_device* d, std::shared_ptr<Completion> c) {
    t_on_completion_thread = true;
    std::unique_lock<std::mutex> lock(c->mutex);
    for (;;) {
        if (!c->ready.empty()) {
            Job* job = c->ready.front();
            c->ready.pop_front();
            lock.unlock();
            end_job(d, job);
            lock.lock();
            continue;
        }
        if (c->stop) break;
        uint64_t now = now_ns();
        if (!c->deadlines.empty() && c->deadlines.begin()->first <= now) {
            Job* job = c->deadlines.begin()->second;
            c->deadlines.erase(c->deadlines.begin());
            lock.unlock();
            finish_job(job, ACCEL_ERR_TIMEOUT, "the job did not finish within its timeout");
            job_unref(job);
            lock.lock();
            continue;
        }
        if (c->deadlines.empty()) c->cv.wait(lock);
        else c->cv.wait_for(lock, std::chrono::nanoseconds(c->deadlines.begin()->first - now));
    }
    // Stopped: the device is gone (no job is left); drop what the timer still held.
    std::multimap<uint64_t, Job*> left;
    left.swap(c->deadlines);
    lock.unlock();
    for (auto& kv : left) job_unref(kv.second);
}

bool parse_uint(const std::string& s, uint64_t* out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::strtoull(s.c_str(), nullptr, 10);
    return true;
}

}  // namespace

bool on_completion_thread() { return t_on_completion_thread; }

Job* job_in_callback() { return t_job_in_callback; }

bool finish_job(Job* job, accel_status status, const std::string& message, bool only_queued) {
    accel_device* d;
    {
        std::lock_guard<std::mutex> lock(job->mutex);
        if (job->state == JobState::Finishing || job->state == JobState::Done) return false;
        if (only_queued && job->state != JobState::Queued) return false;
        job->state = JobState::Finishing;
        job->status = status;
        job->message = message;
        job->timing.finished_ns = now_ns();
        d = job->model->device;  // valid: the job holds the model until it is Done
    }
    std::lock_guard<std::mutex> lock(d->completion->mutex);
    d->completion->ready.push_back(job);
    d->completion->cv.notify_all();
    return true;
}

void watch_deadline(accel_device* d, Job* job) {
    job->refs.fetch_add(1);
    std::lock_guard<std::mutex> lock(d->completion->mutex);
    d->completion->deadlines.emplace(job->deadline_ns, job);
    d->completion->cv.notify_all();
}

// "vart:0", "vart:0,runners=N" (or "vart", "vart:runners=N"): DPU device 0 with N runners per model.
accel_status device_open(const char* options, accel_device** out) {
    uint64_t runners = 2;
    bool first = true;
    for (const accel_kit::OptionItem& item : accel_kit::split_options(options)) {
        if (first && !item.has_value) {
            uint64_t index;
            if (!parse_uint(item.key, &index))
                return fail(ACCEL_ERR_INVALID_ARGUMENT,
                            format("bad device index '%s' (expected vart:0)", item.text.c_str()));
            if (index != 0)
                return fail(ACCEL_ERR_NOT_FOUND, format("no DPU device %s (only vart:0)", item.text.c_str()));
        } else if (item.has_value && item.key == "runners") {
            if (!parse_uint(item.value, &runners) || runners < 1 || runners > 64)
                return fail(ACCEL_ERR_INVALID_ARGUMENT, format("bad option '%s' (runners=1..64)", item.text.c_str()));
        } else {
            return fail(ACCEL_ERR_INVALID_ARGUMENT,
                        format("unknown option '%s' (vart:0[,runners=N])", item.text.c_str()));
        }
        first = false;
    }
    auto d = std::make_unique<accel_device>();
    d->header.driver = &kDriverTable;
    d->runners = (uint32_t)runners;
    d->completion = std::make_shared<Completion>();
    d->completion->thread = std::thread(completion_loop, d.get(), d->completion);
    *out = d.release();
    return ACCEL_OK;
}

void device_retain(accel_device* d) { d->refs.fetch_add(1); }

void device_release(accel_device* d) {
    if (!d || d->refs.fetch_sub(1) != 1) return;
    std::shared_ptr<Completion> c = d->completion;
    {
        std::lock_guard<std::mutex> lock(c->mutex);
        c->stop = true;
        c->cv.notify_all();
    }
    // The last reference may go on the completion thread itself (a job's end): it cannot join itself.
    if (on_completion_thread()) c->thread.detach();
    else c->thread.join();
    delete d;
}

accel_status device_describe(const char*, accel_device_description* out) {
    accel_device_description what{};
    what.int8_rules = ACCEL_INT8_RULES_DPU;
    what.model_format = "xmodel";  // the DPU subgraph of a Vitis AI .xmodel; no image input types
    what.file_suffixes = ".xmodel";
    what.first_device = "0";
    accel_kit::copy_to_caller(what, out);
    return ACCEL_OK;
}

accel_status device_get_info(accel_device* d, accel_device_info* out) {
    accel_device_info info{};
    info.cores = d->runners;
    info.max_inflight = d->runners;
    info.debug = 0;
    info.alignment = kAlignment;
    info.pool_bytes = 0;
    info.name = "Vitis AI DPU (VART)";
    info.backend = "vart";
    accel_kit::copy_to_caller(info, out);
    return ACCEL_OK;
}

accel_status device_get_stats(accel_device* d, accel_memory_stats* out) {
    accel_memory_stats s{};
    s.bytes_in_use = d->bytes_in_use.load();
    s.peak_bytes_in_use = d->peak_bytes.load();
    s.live_buffers = d->live_buffers.load();
    s.allocations = d->allocations.load();
    s.bytes_copied = d->bytes_copied.load();
    s.jobs_submitted = d->jobs_submitted.load();
    s.jobs_completed = d->jobs_completed.load();
    accel_kit::copy_to_caller(s, out);
    return ACCEL_OK;
}

accel_status device_check(accel_device*) { return ACCEL_OK; }  // no guard bytes on this device

}  // namespace accel_vart
