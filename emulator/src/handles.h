// handles.h - the emulator's definitions of the ABI's opaque handles. Each begins with the kit's
// HandleHeader (the loader dispatches on it; it names the process that made the handle), and is
// reference counted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "accel/driver.h"
#include "driver_kit/clock.h"
#include "driver_kit/handle.h"
#include "entry_points.h"
#include "graph.h"
#include "parallel.h"
#include "plan.h"
#include "pool.h"

namespace accel_emu {
class Scheduler;

// What one running job of a model needs besides its buffers: device memory for intermediates and
// scratch, and the pointer tables the executor fills, all sized once.
struct Workspace {
    Block block;
    std::vector<void*> tensor_ptrs;      // one per graph tensor
    std::vector<const void*> node_inputs;  // the largest node arity
    std::vector<void*> node_outputs;
};

// emu:hint=: latency (one job at a time on every CPU) or throughput (one job per CPU), as OpenVINO's
// ov::hint::performance_mode; the values are accel_device_info.hint's (accel_performance_hint).
enum class Hint : uint32_t { Latency = ACCEL_HINT_LATENCY, Throughput = ACCEL_HINT_THROUGHPUT };

struct DeviceOptions {
    uint32_t cores = 1;
    uint32_t threads = 0;  // host threads per core (0 until parse_options settles the default)
    uint64_t pool_bytes = 0;  // 0 until parse_options settles it: given, else the host's memory (default_pool)
    bool pool_given = false;
    uint32_t max_inflight = 16;
    uint32_t spin_us = 50;  // how long an idle core and a waiting caller poll before sleeping
    bool debug = false;
    Int8Rules int8 = Int8Rules::Ort;  // whose integer arithmetic the device computes (emu:int8=...)
    Hint hint = Hint::Latency;        // what cores and threads default for (emu:hint=...)
};
}  // namespace accel_emu

struct accel_device {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    accel_emu::DeviceOptions options;
    std::string name;  // "accel emulator (int8: ...)": the int8 rules and the code path loads pick
    accel_emu::Pool pool;
    std::shared_ptr<accel_emu::Scheduler> scheduler;
    std::unique_ptr<accel_emu::HelperPool> helpers;  // threads-1 per core; outlives every job (jobs hold the device)

    std::atomic<uint64_t> live_buffers{0};
    std::atomic<uint64_t> bytes_copied{0};
    std::atomic<uint64_t> jobs_submitted{0};
    std::atomic<uint64_t> jobs_completed{0};
    std::atomic<uint64_t> next_buffer_id{1};

    // Debug mode: every live pool-backed buffer, so that accel_device_check can look at its guards,
    // and the first corruption found when a buffer was freed (release cannot return an error).
    std::mutex check_mutex;
    std::set<accel_buffer*> live;
    std::string deferred_corruption;
};

struct accel_buffer {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    accel_device* device = nullptr;  // retained
    accel_emu::Block block;          // pool memory (block.ptr == nullptr when imported)
    uint8_t* host = nullptr;         // the host-visible pointer
    uint64_t size = 0;
    uint64_t id = 0;                 // for messages: "buffer #12"
};

struct accel_model {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{1};
    accel_device* device = nullptr;  // retained
    accel_emu::Graph graph;
    accel_emu::Block weights;        // the data section, in device memory
    accel_emu::Block prepared;       // what the nodes' OpDef::prepare made at load (plan.prepared_offsets)
    accel_emu::MemoryPlan plan;
    std::vector<accel_tensor_info> input_infos, output_infos;
    std::vector<std::string> node_types;  // accel_model_get_node_info's op_type, one per node ("Conv+Relu")

    // Workspaces (intermediates + scratch, laid out by `plan`): one per job of this model running at
    // the same time, allocated once and reused, never per run.
    std::mutex workspace_mutex;
    std::vector<accel_emu::Workspace*> idle_workspaces;
    std::vector<std::unique_ptr<accel_emu::Workspace>> all_workspaces;
};

namespace accel_emu {
// Queued -> Running -> Finishing (result known; callback, then references dropped) -> Done. A job can
// also go from Queued straight to Finishing (cancelled, or timed out before it started).
enum class JobState { Queued, Running, Finishing, Done };
}  // namespace accel_emu

struct accel_job {
    accel_kit::HandleHeader header;
    std::atomic<int> refs{2};        // the caller's and the scheduler's
    std::atomic<int> user_refs{1};   // the caller's alone: when they go before the job ran, it is cancelled
    accel_model* model = nullptr;    // retained until the job finishes
    std::vector<accel_buffer*> inputs, outputs;  // retained until the job finishes
    int32_t priority = 0;
    uint32_t node_count = 0;         // entries of node_times (below)
    uint64_t core_mask = 0;
    uint64_t deadline_ns = 0;        // 0: none
    accel_job_callback callback = nullptr;
    void* user_data = nullptr;
    uint64_t sequence = 0;
    std::shared_ptr<accel_emu::Scheduler> scheduler;  // to cancel with, whatever happened to the model

    std::mutex mutex;
    std::condition_variable done_cv;
    accel_emu::JobState state = accel_emu::JobState::Queued;
    std::atomic<bool> done{false};   // state == Done, readable without the mutex
    accel_status status = ACCEL_OK;
    std::string message;
    accel_job_timing timing{};
    // ACCEL_SUBMIT_PROFILE_NODES: node_count entries, made at submit, written by the executor alone
    // while the job runs (read once it finished); nullptr without the flag, which is all the executor
    // tests. A pointer rather than a vector keeps the job as small as it was (its count sits in the
    // padding after `priority`).
    std::unique_ptr<accel_node_time[]> node_times;
};

namespace accel_emu {

// Drops a reference that is not the caller's (the scheduler's): never cancels.
void job_unref(accel_job* job);

// A workspace for one run of the model (reused; allocated only when more runs overlap than before).
accel_status acquire_workspace(accel_model* model, Workspace** out);
void release_workspace(accel_model* model, Workspace* ws);

// accel_model_get_node_info's op_type of a node (node_profile.cc).
std::string node_type_name(const Node& n);

// Runs the job's graph on `core` and returns its status (the message in *message). Worker threads only.
accel_status run_job(accel_job* job, int core, std::string* message);

using accel_kit::now_ns;

}  // namespace accel_emu
