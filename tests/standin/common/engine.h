// engine.h - what a stand-in BPU runtime does behind its vendor API, in neutral terms: the emulator
// device (opened on first use, closed with the last model file), the loaded model files, and tasks
// (one or more models run on the user's device memory) with the runtime's rules: a task limit,
// waits with timeouts, done callbacks, cancellation on release. Each stand-in library keeps one
// Engine and maps its results to the vendor's status codes.
//
// libaccel loads a bpu driver, which loads the stand-in: nothing here calls libaccel before the
// first API call that needs it (a call from a constructor would re-enter libaccel's driver scan).
#pragma once

#include <accel/accel.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tensor.h"

namespace standin {

// One model of a loaded file: its tensors as the user sees them and its emulator model. A stand-in
// derives from it to keep its vendor's view (property structs) next to the neutral one.
struct LoadedModel : std::enable_shared_from_this<LoadedModel> {
    std::string name;
    std::vector<uint8_t> accm;
    std::vector<TensorDesc> inputs, outputs;
    accel_model* emulated = nullptr;
    virtual ~LoadedModel();
};

enum class Result {
    Ok,
    InvalidArgument,
    UnknownPack,
    UnknownTask,
    InvalidModel,       // a file that is not a stand-in model file
    IncompatibleModel,  // its emulator model does not load
    NoDevice,           // the emulator could not be opened
    FileOpen,           // a model file that cannot be read
    TaskLimit,
    RunFailed,
    Timeout,
    NotSubmitted,
};

struct Task;

// Same shape as both generations' task-done callbacks.
typedef void (*TaskDoneCb)(void* task, int32_t status, void* userdata);

class Engine {
public:
    struct Config {
        const char* device_uri;  // the emulator, e.g. "emu:cores=2,max_inflight=64"
        int task_limit;          // tasks created and not finished, at most
        int32_t status_ok;       // the vendor's codes a task ends with
        int32_t status_failed;
    };
    explicit Engine(const Config& config);

    // ---- model files ----
    // Parses one file into models (their names, tensors and accm set; emulated not yet).
    using Parser =
        std::function<bool(const uint8_t* data, size_t size, std::vector<std::shared_ptr<LoadedModel>>& out)>;
    Result load(const std::vector<std::vector<uint8_t>>& files, const Parser& parse, void** pack);
    // The same from file names, or from files in memory (InvalidArgument: a null or empty entry).
    Result load_files(const char* const* names, int32_t count, const Parser& parse, void** pack);
    Result load_memory(const void* const* data, const int32_t* lengths, int32_t count, const Parser& parse,
                       void** pack);
    Result release_pack(void* pack);
    Result model_names(void* pack, const char*** names, int32_t* count);
    Result find_model(void* pack, const char* name, void** model);  // InvalidArgument: no such name
    // The model a handle names, or nullptr if it is not a model of a loaded file.
    const LoadedModel* known_model(const void* handle);

    // ---- tasks ----
    // A new empty task, counted against the limit until it finishes or is released.
    Result create_task(Task** task);
    // Appends a model run reading the device side of `in_phy` and writing that of `out_phy`, laid
    // out as `in` and `out` describe. `in_phy2` (may be null; 0 entries: none): where the second
    // plane of a two-plane input lies when the user gave it apart (NV12_SEPARATE). InvalidArgument if
    // an input range is not device memory.
    Result add_part(Task* task, const LoadedModel* model, std::vector<TensorDesc> in, const uint64_t* in_phy,
                    std::vector<TensorDesc> out, const uint64_t* out_phy, const uint64_t* in_phy2 = nullptr);
    // The input stage: converts what the device side of each input holds now.
    Result stage_inputs(Task* task);
    // Starts the task (or queues it while held). RunFailed if the emulator refuses it; the task is
    // then still unsubmitted.
    Result submit(Task* task, int32_t priority, uint64_t core_mask);
    Task* known_task(const void* handle);
    bool submitted(Task* task);
    // A callback set after the task ended runs at once, on this thread.
    Result set_callback(Task* task, TaskDoneCb cb, void* userdata);
    // timeout_ms <= 0 waits for ever. *status: the task's vendor status.
    Result wait(Task* task, int32_t timeout_ms, int32_t* status);
    // Frees a task: one queued or not started is cancelled, one running is waited for. In the late
    // completion mode (late_completion_ms() > 0) a submitted task not done yet is released as the real
    // X5 hbDNNReleaseTask documents: the call returns at once and the rest (cancelling or finishing the
    // run, writing its outputs, calling its done callback) happens on a thread of its own, that long
    // later. See ../hbdnn/FORMAT.md, "Late completion mode".
    Result release_task(Task* task);
    // ACCEL_STANDIN_LATE_COMPLETION (milliseconds; unset or 0: off), read when the engine is made.
    int late_completion_ms() const { return late_ms_; }

    // Tests only: while held, submitted tasks wait in order; releasing the hold starts them.
    void hold(bool on);

private:
    accel_device* device();
    void start(Task* task);  // submits every part; parts that cannot start end failed
    void finish(Task* task);
    void release_submitted(Task* task, bool was_pending);  // the waiting half of release_task
    static void on_part_done(accel_job* job, accel_status status, void* part);

    Config config_;
    int late_ms_ = 0;
    std::mutex mutex_;
    accel_device* device_ = nullptr;
    std::set<void*> packs_;
    std::set<const LoadedModel*> models_;
    std::set<Task*> tasks_;  // not released yet
    std::atomic<int> slots_{0};
    bool held_ = false;
    std::vector<Task*> pending_;  // what the hold keeps, in order
};

}  // namespace standin
