// handles.h - the bpu driver's definitions of the ABI's opaque handles (each begins with the
// kit's HandleHeader, which the loader dispatches on, and is reference counted), over runtime.h.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accel/driver.h"
#include "driver_kit/clock.h"
#include "driver_kit/driver_tls.h"
#include "driver_kit/handle.h"
#include "entry_points.h"
#include "runtime.h"

namespace accel_bpu {
class Completer;

// Buffers' host pointers are aligned to this (and sizes rounded up to it).
constexpr uint64_t kAlignment = 64;
}  // namespace accel_bpu

struct accel_device {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    std::unique_ptr<accel_bpu::Runtime> runtime;
    std::string name;          // "Horizon BPU (libdnn ...), core 0"
    uint32_t cores = 1;        // cores of this device (1 when opened on one core)
    uint64_t board_cores = 0;  // bit i: board core i of the device's core i (see device.cc)
    uint32_t max_inflight = 32;
    std::shared_ptr<accel_bpu::Completer> completer;

    // In-flight slots: jobs submitted and not finished (callback returned).
    std::mutex slots_mutex;
    std::condition_variable slot_freed;
    uint32_t inflight = 0;

    std::mutex stats_mutex;
    uint64_t bytes_in_use = 0, peak_bytes_in_use = 0, allocations = 0;
    std::atomic<uint64_t> live_buffers{0};
    std::atomic<uint64_t> bytes_copied{0};
    std::atomic<uint64_t> jobs_submitted{0};
    std::atomic<uint64_t> jobs_completed{0};
    std::atomic<uint64_t> next_buffer_id{1};
};

struct accel_buffer {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    accel_device* device = nullptr;  // retained
    std::unique_ptr<accel_bpu::Memory> memory;
    uint64_t id = 0;                 // for messages: "buffer #12"
};

struct accel_model {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    accel_device* device = nullptr;  // retained
    std::unique_ptr<accel_bpu::Model> model;
    std::vector<accel_tensor_info> input_infos, output_infos;  // point into model's TensorDescs
};

namespace accel_bpu {
// Starting (the runtime's start() not returned yet) -> Running -> Ending (result decided: the runtime
// reported the end, the deadline passed or the caller released it; queued for the completer) ->
// Finishing (callback) -> Done. Only the winner of the move out of Starting/Running queues the job.
enum JobPhase : int { kStarting, kRunning, kEnding, kFinishing, kDone };
enum class EndReason { Finished, TimedOut, Cancelled };
}  // namespace accel_bpu

struct accel_job {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{2};       // the caller's and the completer's
    std::atomic<int> user_refs{1};  // the caller's alone: when they go before the end, it is cancelled
    accel_device* device = nullptr;  // retained until the job finishes
    accel_model* model = nullptr;    // retained until the job finishes
    std::vector<accel_buffer*> inputs, outputs;  // retained until the job finishes
    std::unique_ptr<accel_bpu::Task> task;
    uint64_t deadline_ns = 0;  // 0: none
    accel_job_callback callback = nullptr;
    void* user_data = nullptr;
    std::shared_ptr<accel_bpu::Completer> completer;  // outlives the device if the job drops it last

    std::atomic<int> phase{accel_bpu::kStarting};
    accel_bpu::EndReason reason = accel_bpu::EndReason::Finished;  // written by the winner of the move to kEnding
    std::mutex mutex;
    // What the runtime reported, under `mutex` (its report may come while the completer ends the job).
    bool runtime_done = false;
    accel_bpu::Status runtime_status;
    uint64_t runtime_done_ns = 0;
    // Under `mutex`: the job was reported ended (timeout, release) while its task still ran. Its task,
    // buffers, model and device are then kept until the runtime reports the task's end, and only then
    // is the task released (the completer's reap): a runtime's release may return before the task
    // stops writing outputs and calling back (X5 libdnn's hbDNNReleaseTask: "will return immediately,
    // and all operations will run in the background").
    bool abandoned = false;
    std::condition_variable done_cv;
    accel_status status = ACCEL_OK;  // the job's result, set before kFinishing
    std::string message;
    accel_job_timing timing{};
};

namespace accel_bpu {

// Drops a reference that is not the caller's (the completer's): never cancels.
void job_unref(accel_job* job);
// Ends the job on the completer's thread: see job.cc.
void finish_job(accel_job* job);
// Frees what an abandoned job kept, once its task has ended (the completer's thread).
void reap_job(accel_job* job);

using accel_kit::now_ns;

// The job whose callback runs on this thread (nullptr outside callbacks).
extern ACCEL_DRIVER_TLS accel_job* tl_job_in_callback;

}  // namespace accel_bpu
