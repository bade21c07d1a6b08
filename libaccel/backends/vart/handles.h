// handles.h - the vart driver's handles (each begins with the kit's HandleHeader, which the loader
// dispatches on) and the state they share.
//
// Threads: each model has one worker thread per runner (execute_async blocks, and a runner is not
// re-entrant: one runner serves one job at a time); each device has one completion thread that ends
// jobs: callbacks, dropping references, waking waiters, and the per-job timeouts. Workers never drop
// the last reference to a model or a device (the completion thread does), so a model can join its
// workers and a device its completion thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "accel/driver.h"
#include "driver_kit/clock.h"
#include "driver_kit/handle.h"
#include "driver_kit/status.h"
#include "entry_points.h"
#include "vart/runner_ext.hpp"
#include "vart/tensor_buffer.hpp"
#include "xir/graph/graph.hpp"
#include "xir/tensor/tensor.hpp"

namespace accel_vart {

// One runner with the HOST_PHY buffers it owns; `lent` marks the buffers that are accel buffers now.
struct Slot {
    std::unique_ptr<vart::Runner> runner;
    vart::RunnerExt* ext = nullptr;  // nullptr if the runner has no buffers of its own
    std::vector<vart::TensorBuffer*> inputs, outputs;
    std::vector<bool> lent_inputs, lent_outputs;
};

// The graph and its runners. Lives as long as the model or any buffer lent from a runner, and keeps
// the graph alive as long as a runner (VART's runners do not own their graph).
struct Runners {
    std::unique_ptr<xir::Graph> graph;  // declared first: destroyed after the runners
    std::vector<Slot> slots;
    std::vector<const xir::Tensor*> input_tensors, output_tensors;  // the runners' order
    accel_layout layout = ACCEL_LAYOUT_NHWC;                         // of their 4-D tensors
    std::mutex lend_mutex;                                          // guards the slots' lent flags
};

struct Completion;  // the device's completion thread's state (device.cc)

}  // namespace accel_vart

struct accel_device {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    uint32_t runners = 2;  // runners per model = in-flight jobs per device
    std::shared_ptr<accel_vart::Completion> completion;

    std::mutex mutex;  // guards the fields below
    std::condition_variable slot_cv;
    uint32_t in_flight = 0;
    std::vector<std::weak_ptr<accel_vart::Runners>> models;  // whose buffers allocations may borrow

    std::atomic<uint64_t> bytes_in_use{0}, peak_bytes{0}, live_buffers{0}, allocations{0}, bytes_copied{0};
    std::atomic<uint64_t> jobs_submitted{0}, jobs_completed{0};
};

struct accel_buffer {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    accel_device* device = nullptr;  // retained
    uint8_t* host = nullptr;
    uint64_t size = 0;
    bool owned = false;  // host was allocated by us (not imported, not lent)
    // When lent: the runner buffer it is (slot, input or output, index), kept alive by `lender`.
    std::shared_ptr<accel_vart::Runners> lender;
    size_t slot = 0, index = 0;
    bool is_output = false;
    vart::TensorBuffer* runner_buffer = nullptr;
};

struct accel_model {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    accel_device* device = nullptr;  // retained
    std::shared_ptr<accel_vart::Runners> runners;
    std::vector<accel_tensor_info> input_infos, output_infos;
    std::vector<std::string> names;  // storage of the infos' names
    std::vector<uint8_t> shifts;     // storage of their fix points (ACCEL_QUANT_SHIFT)
    std::vector<float> scales;       // ... or of 2^-fix_point when the fix point is negative

    std::mutex queue_mutex;  // guards the queue, `stop` and every job's leaving the Queued state
    std::condition_variable queue_cv;
    std::deque<accel_job*> queue;  // each entry holds a job reference  // by priority, then submission order
    bool stop = false;
    std::vector<std::thread> workers;  // one per slot
};

namespace accel_vart {
enum class JobState { Queued, Running, Finishing, Done };
}  // namespace accel_vart

struct accel_job {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{2};       // the caller's and the system's (dropped when Done)
    std::atomic<int> user_refs{1};  // the caller's alone: when they go before the job ran, it is cancelled
    accel_model* model = nullptr;   // retained until the job finishes
    std::vector<accel_buffer*> inputs, outputs;  // retained until the job finishes
    int32_t priority = 0;
    uint64_t sequence = 0;
    uint64_t deadline_ns = 0;  // 0: none
    int pinned_slot = -1;      // the slot whose own buffers the job uses, -1: any
    uint64_t core_mask = 0;    // the slots (the device's cores: bit i, slot i) it may run on, 0: any
    accel_job_callback callback = nullptr;
    void* user_data = nullptr;

    std::mutex mutex;
    std::condition_variable done_cv;
    accel_vart::JobState state = accel_vart::JobState::Queued;
    accel_status status = ACCEL_OK;
    std::string message;
    accel_job_timing timing{};
};

namespace accel_vart {

using Job = accel_job;

// Every message starts "vart: " (the kit's fail adds it: see driver.cc).
using accel_kit::fail;
using accel_kit::format;
using accel_kit::now_ns;

// Jobs (job.cc) and their ends (device.cc).
void worker_loop(accel_model* m, size_t slot);
// Ends a job that is still Queued or Running (only Queued if `only_queued`) with `status` (first caller
// wins) and hands it to the device's completion thread. Returns false if it had already ended.
bool finish_job(Job* job, accel_status status, const std::string& message, bool only_queued = false);
void watch_deadline(accel_device* d, Job* job);
bool on_completion_thread();
// The job whose callback this thread is running, if any.
Job* job_in_callback();
void job_unref(Job* job);

}  // namespace accel_vart
