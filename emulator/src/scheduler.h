// scheduler.h - the emulated cores: one worker thread per core taking the highest-priority queued
// job its core may run, at most max_inflight jobs between submission and completion, and one
// completion thread per device that runs callbacks in completion order and expires queued jobs whose
// timeout passes while they wait. A job without a callback is finished by the worker that ran it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "accel/accel.h"
#include "driver_kit/driver_tls.h"

namespace accel_emu {

// The job whose completion callback the calling thread is running, if any.
extern ACCEL_DRIVER_TLS const accel_job* tl_job_in_callback;

class Scheduler : public std::enable_shared_from_this<Scheduler> {
public:
    static std::shared_ptr<Scheduler> start(uint32_t cores, uint32_t max_inflight, uint32_t spin_us);

    // Takes the job's scheduler reference. Blocks while max_inflight jobs are in flight unless
    // no_wait (then ACCEL_ERR_BUSY, the reference not taken).
    accel_status submit(accel_job* job, bool no_wait);
    // Cancels a job that has not started: it completes with ACCEL_ERR_CANCELLED. No-op otherwise.
    void cancel(accel_job* job);
    // Stops the threads once no job is left. Joins them, except the calling thread if it is one of
    // them (the last reference to a device can drop inside a callback): that one finishes on its own.
    void shutdown();
    // How long a caller waiting for one of this scheduler's jobs polls before sleeping.
    uint64_t spin_ns() const { return spin_ns_; }

private:
    Scheduler(uint32_t max_inflight, uint32_t spin_us) : max_inflight_(max_inflight), spin_ns_(spin_us * 1000ull) {}
    void worker_loop(int core);
    void completion_loop();
    accel_job* take_job_for(int core);                         // mutex_ held
    void complete_locked(accel_job* job, accel_status status, std::string message);  // mutex_ held
    void expire_queued_locked(uint64_t now);                   // mutex_ held
    static void set_result(accel_job* job, accel_status status, std::string message);
    void finish(accel_job* job);  // completion thread (or the worker, for a job without callback); no lock held

    const uint32_t max_inflight_;
    const uint64_t spin_ns_;
    std::mutex mutex_;
    std::condition_variable work_cv_, completion_cv_, slot_cv_;
    std::vector<accel_job*> queue_;        // submitted, not started
    std::deque<accel_job*> completed_;     // finished, callback not yet run
    uint32_t inflight_ = 0;
    uint64_t next_sequence_ = 0;
    uint64_t armed_deadline_ = 0;          // when the sleeping completion thread wakes (0: it is awake)
    // Written under mutex_, read without it by idle cores and the completion thread while they poll.
    std::atomic<bool> stopping_{false};
    std::atomic<uint64_t> submitted_{0};
    std::atomic<uint64_t> completions_{0};
    std::vector<std::thread> threads_;
};

}  // namespace accel_emu
