// job_wait.h - accel_job_wait, _poll and _get_timing for a driver's job, which ends under its `mutex`
// and notifies `done_cv` when it does, with its result in `status` and `message` and its `timing`.
// `ended(j)` says (the mutex held) whether the caller may see the job as ended; it is the driver's.
#pragma once

#include <chrono>
#include <mutex>

#include "accel/driver.h"
#include "driver_kit/abi_copy.h"
#include "driver_kit/clock.h"
#include "driver_kit/status.h"

namespace accel_kit {

// `before_wait(j, timeout_us)` runs first, without the mutex.
template <class Job, class BeforeWait, class Ended>
accel_status wait_job(Job* j, int64_t timeout_us, BeforeWait before_wait, Ended ended_for_caller) {
    before_wait(j, timeout_us);
    auto ended = [&] { return ended_for_caller(j); };
    std::unique_lock<std::mutex> lock(j->mutex);
    if (timeout_us < 0 || timeout_us > kForeverUs) {
        j->done_cv.wait(lock, ended);
    } else if (!j->done_cv.wait_until(lock, std::chrono::steady_clock::now() + std::chrono::microseconds(timeout_us),
                                      ended)) {
        return fail(ACCEL_ERR_NOT_READY, "accel_job_wait: the job has not finished yet");
    }
    if (j->status != ACCEL_OK) return fail(j->status, j->message);
    return ACCEL_OK;
}

template <class Job, class Ended>
accel_status poll_job(Job* j, int32_t* out_done, Ended ended) {
    std::lock_guard<std::mutex> lock(j->mutex);
    *out_done = ended(j);
    return ACCEL_OK;
}

template <class Job>
accel_status job_timing(Job* j, accel_job_timing* out) {
    std::lock_guard<std::mutex> lock(j->mutex);
    copy_to_caller(j->timing, out);
    return ACCEL_OK;
}

}  // namespace accel_kit
