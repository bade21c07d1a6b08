// completer.cc - see completer.h.
#include "completer.h"

#include <chrono>

namespace accel_bpu {

std::shared_ptr<Completer> Completer::start() {
    auto c = std::make_shared<Completer>();
    c->self_ = c;
    c->thread_ = std::thread([raw = c.get()] { raw->run(); });
    return c;
}

void Completer::queue(accel_job* job) {
    queue_.push_back(job);
    wake_.notify_one();
}

bool Completer::end(accel_job* job, EndReason reason, bool from_starting) {
    int expected = kRunning;
    if (!job->phase.compare_exchange_strong(expected, kEnding, std::memory_order_acq_rel)) {
        if (!from_starting || expected != kStarting ||
            !job->phase.compare_exchange_strong(expected, kEnding, std::memory_order_acq_rel))
            return false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    job->reason = reason;
    queue(job);
    return true;
}

void Completer::reap(accel_job* job) {
    std::lock_guard<std::mutex> lock(mutex_);
    reaps_.push_back(job);
    wake_.notify_one();
}

void Completer::watch(accel_job* job) {
    if (!job->deadline_ns) return;
    std::lock_guard<std::mutex> lock(mutex_);
    // Under the lock: a job that ends after this check is taken off the list when it is dequeued.
    if (job->phase.load(std::memory_order_acquire) != kRunning) return;
    deadlines_.emplace(job->deadline_ns, job);
    wake_.notify_one();
}

void Completer::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        wake_.notify_one();
    }
    if (std::this_thread::get_id() == thread_.get_id()) thread_.detach();
    else thread_.join();
}

void Completer::run() {
    std::shared_ptr<Completer> keep;  // taken when stopping: what this thread touches stays alive
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        uint64_t now = now_ns();
        while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
            accel_job* job = deadlines_.begin()->second;
            deadlines_.erase(deadlines_.begin());
            int expected = kRunning;
            if (job->phase.compare_exchange_strong(expected, kEnding, std::memory_order_acq_rel)) {
                job->reason = EndReason::TimedOut;
                queue_.push_back(job);
            }
        }
        if (!reaps_.empty()) {
            accel_job* job = reaps_.front();
            reaps_.pop_front();
            lock.unlock();
            reap_job(job);
            lock.lock();
            continue;
        }
        if (!queue_.empty()) {
            accel_job* job = queue_.front();
            queue_.pop_front();
            if (job->deadline_ns) deadlines_.erase({job->deadline_ns, job});
            lock.unlock();
            finish_job(job);
            lock.lock();
            continue;
        }
        if (stopping_) break;
        if (deadlines_.empty()) {
            wake_.wait(lock);
        } else {
            auto wait_ns = std::chrono::nanoseconds(deadlines_.begin()->first - now);
            wake_.wait_for(lock, wait_ns);
        }
    }
    keep = std::move(self_);  // the last reference may be this one: released after the lock
    lock.unlock();
}

}  // namespace accel_bpu
