// completer.h - one thread per device that ends jobs: those the runtime reported done, those whose
// deadline passed and those their caller released before they ended. Ending a job (job.cc:
// finish_job) releases the runtime's task, which may not happen on the runtime's own callback thread,
// then runs the user's callback, so callbacks run in completion order on one thread per device.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "handles.h"

namespace accel_bpu {

class Completer {
public:
    static std::shared_ptr<Completer> start();
    // Moves the job to kEnding for `reason` if it is running (or, with from_starting, still starting)
    // and queues it; false if something else ended it first. Any thread.
    bool end(accel_job* job, EndReason reason, bool from_starting);
    // Queues an abandoned job whose task has now ended, for reap_job. Any thread.
    void reap(accel_job* job);
    // Watches the deadline of a job that has just started (one ended meanwhile is not watched).
    void watch(accel_job* job);
    // The device is going: the thread leaves (detached if this is that thread, else joined).
    void stop();

private:
    void run();
    void queue(accel_job* job);  // with mutex_ held

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<accel_job*> queue_;
    std::deque<accel_job*> reaps_;
    std::set<std::pair<uint64_t, accel_job*>> deadlines_;
    bool stopping_ = false;
    std::thread thread_;
    std::shared_ptr<Completer> self_;  // the thread's own reference: it may outlive the device
};

}  // namespace accel_bpu
