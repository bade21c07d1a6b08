#include "scheduler.h"

#include <algorithm>
#include <chrono>

#include "handles.h"
#include "spin.h"
#include "status.h"

namespace accel_emu {

namespace {
// The scheduler whose completion thread this is (callbacks run there), if any.
ACCEL_DRIVER_TLS const Scheduler* tl_completion_thread_of = nullptr;
}  // namespace

ACCEL_DRIVER_TLS const accel_job* tl_job_in_callback = nullptr;

std::shared_ptr<Scheduler> Scheduler::start(uint32_t cores, uint32_t max_inflight, uint32_t spin_us) {
    std::shared_ptr<Scheduler> s(new Scheduler(max_inflight, spin_us));
    // Each thread holds the scheduler alive, so a thread that outlives shutdown() (the one that
    // called it) still has valid state to leave through.
    for (uint32_t c = 0; c < cores; c++) {
        auto self = s;
        s->threads_.emplace_back([self, c] { self->worker_loop((int)c); });
    }
    auto self = s;
    s->threads_.emplace_back([self] { self->completion_loop(); });
    return s;
}

accel_status Scheduler::submit(accel_job* job, bool no_wait) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (inflight_ >= max_inflight_) {
        // Only this thread frees slots (after each callback): waiting here would wait for ourselves.
        if (!no_wait && tl_completion_thread_of == this)
            return fail(ACCEL_ERR_BUSY, format("accel_job_submit from a completion callback: %u jobs already in "
                                               "flight (max_inflight %u), and waiting here would never end",
                                               inflight_, max_inflight_));
        if (no_wait)
            return fail(ACCEL_ERR_BUSY, format("accel_job_submit: %u jobs already in flight (max_inflight %u)",
                                               inflight_, max_inflight_));
        slot_cv_.wait(lock, [&] { return inflight_ < max_inflight_ || stopping_; });
    }
    inflight_++;
    job->sequence = next_sequence_++;
    queue_.push_back(job);
    submitted_.store(submitted_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    work_cv_.notify_all();  // costs no system call while every core is polling
    // Wake the completion thread only if it sleeps past this deadline: a wake per submission costs a
    // thread switch, more than a small job.
    if (job->deadline_ns && job->deadline_ns < armed_deadline_) completion_cv_.notify_one();
    return ACCEL_OK;
}

void Scheduler::cancel(accel_job* job) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find(queue_.begin(), queue_.end(), job);
    if (it == queue_.end()) return;
    queue_.erase(it);
    complete_locked(job, ACCEL_ERR_CANCELLED, "the job was released before it started");
}

// Highest priority first; among equals, first submitted first.
accel_job* Scheduler::take_job_for(int core) {
    auto best = queue_.end();
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
        accel_job* j = *it;
        if (j->core_mask && !(j->core_mask & (1ull << core))) continue;
        if (best == queue_.end() || j->priority > (*best)->priority ||
            (j->priority == (*best)->priority && j->sequence < (*best)->sequence))
            best = it;
    }
    if (best == queue_.end()) return nullptr;
    accel_job* j = *best;
    queue_.erase(best);
    return j;
}

void Scheduler::set_result(accel_job* job, accel_status status, std::string message) {
    std::lock_guard<std::mutex> jl(job->mutex);
    job->status = status;
    job->message = std::move(message);
    job->state = JobState::Finishing;
    job->timing.finished_ns = now_ns();
}

void Scheduler::complete_locked(accel_job* job, accel_status status, std::string message) {
    set_result(job, status, std::move(message));
    completed_.push_back(job);
    completions_.store(completions_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    completion_cv_.notify_one();
}

void Scheduler::expire_queued_locked(uint64_t now) {
    for (size_t i = 0; i < queue_.size();) {
        accel_job* j = queue_[i];
        if (j->deadline_ns && now >= j->deadline_ns) {
            queue_.erase(queue_.begin() + (long)i);
            complete_locked(j, ACCEL_ERR_TIMEOUT, "the job's timeout passed before it could start");
        } else {
            i++;
        }
    }
}

void Scheduler::worker_loop(int core) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        accel_job* job = take_job_for(core);
        if (!job && !stopping_) {
            // Idle: poll for a new submission for a while, then sleep until one comes.
            uint64_t seen = submitted_.load(std::memory_order_relaxed);
            lock.unlock();
            spin_until(
                [&] {
                    return submitted_.load(std::memory_order_acquire) != seen ||
                           stopping_.load(std::memory_order_relaxed);
                },
                spin_ns_);
            lock.lock();
            work_cv_.wait(lock, [&] { return stopping_ || (job = take_job_for(core)) != nullptr; });
        }
        if (!job) return;  // stopping, and nothing this core may run
        lock.unlock();
        accel_status status;
        std::string message;
        uint64_t start = now_ns();
        if (job->deadline_ns && start >= job->deadline_ns) {
            status = ACCEL_ERR_TIMEOUT;
            message = "the job's timeout passed before it could start";
        } else {
            {
                std::lock_guard<std::mutex> jl(job->mutex);
                job->state = JobState::Running;
                job->timing.started_ns = start;
                job->timing.core = core;
            }
            status = run_job(job, core, &message);
        }
        if (!job->callback) {
            // Nothing must run in completion order: finish here and spare the waiter a thread hop.
            set_result(job, status, std::move(message));
            finish(job);
            lock.lock();
            continue;
        }
        lock.lock();
        complete_locked(job, status, std::move(message));
    }
}

void Scheduler::completion_loop() {
    tl_completion_thread_of = this;
    bool spinning_done = false;  // the last poll found nothing: sleep now
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        if (completed_.empty()) {
            uint64_t earliest = 0;
            for (accel_job* j : queue_)
                if (j->deadline_ns && (!earliest || j->deadline_ns < earliest)) earliest = j->deadline_ns;
            if (stopping_ && queue_.empty()) return;
            if (spin_ns_ && !spinning_done) {
                // Poll for a completion for a while first, as an idle core polls for work (spin.h).
                uint64_t seen = completions_.load(std::memory_order_relaxed);
                lock.unlock();
                uint64_t budget = spin_ns_;
                if (earliest) budget = std::min<uint64_t>(budget, earliest > now_ns() ? earliest - now_ns() : 0);
                spinning_done = !spin_until(
                    [&] {
                        return completions_.load(std::memory_order_acquire) != seen ||
                               stopping_.load(std::memory_order_relaxed);
                    },
                    budget);
                lock.lock();
                continue;
            }
            spinning_done = false;
            if (earliest) {
                uint64_t now = now_ns();
                if (now < earliest) {
                    armed_deadline_ = earliest;
                    completion_cv_.wait_until(
                        lock, std::chrono::steady_clock::time_point(std::chrono::nanoseconds(earliest)));
                }
                expire_queued_locked(now_ns());
            } else {
                armed_deadline_ = UINT64_MAX;
                completion_cv_.wait(lock);
            }
            armed_deadline_ = 0;  // awake: it looks at every queued deadline before sleeping again
            continue;
        }
        accel_job* job = completed_.front();
        completed_.pop_front();
        lock.unlock();
        finish(job);
        lock.lock();
    }
}

void Scheduler::finish(accel_job* job) {
    // Keep this thread's scheduler alive even if the device (and its last reference to us) goes below.
    std::shared_ptr<Scheduler> keep = shared_from_this();
    accel_status status;
    {
        std::lock_guard<std::mutex> jl(job->mutex);
        status = job->status;
    }
    if (job->callback) {
        tl_job_in_callback = job;
        job->callback(job, status, job->user_data);
        tl_job_in_callback = nullptr;
    }
    // Everything the job held goes before anyone waiting hears that it finished, so that a caller
    // returning from accel_job_wait or accel_run finds its memory free and its device releasable.
    accel_model* model = job->model;
    model->device->jobs_completed++;
    for (accel_buffer* b : job->inputs) buffer_release(b);
    for (accel_buffer* b : job->outputs) buffer_release(b);
    job->inputs.clear();
    job->outputs.clear();
    job->model = nullptr;
    model_release(model);  // may release the device, and with it call shutdown() on this thread
    {
        std::lock_guard<std::mutex> lock(mutex_);
        inflight_--;
    }
    slot_cv_.notify_one();
    {
        std::lock_guard<std::mutex> jl(job->mutex);
        job->state = JobState::Done;
        job->done.store(true, std::memory_order_release);
    }
    job->done_cv.notify_all();
    job_unref(job);  // the scheduler's reference
}

void Scheduler::shutdown() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    work_cv_.notify_all();
    completion_cv_.notify_all();
    slot_cv_.notify_all();
    for (std::thread& t : threads_) {
        if (t.get_id() == std::this_thread::get_id()) t.detach();
        else if (t.joinable()) t.join();
    }
}

}  // namespace accel_emu
