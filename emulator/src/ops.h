// ops.h - the emulator's op registry: for each op code, a load-time shape check, the scratch memory a
// run needs, and the kernel. Kernels never fail at run time on what the model holds: everything that could
// make them fail (shapes, attributes, counts, constant indices) is refused by `validate` when the model loads.
// The one exception is a value a run brings that the op reads as a position: an index (gather) or a length
// (rnn's sequence_lens) computed at run time, which no check at load can see. A kernel checks each such
// value before it uses one and reports the first outside its range through KernelArgs::report (DataFault),
// without reading or writing outside any tensor; the executor then stops the job after that node and fails
// it with ACCEL_ERR_INVALID_ARGUMENT naming the node, the value, its position and the range, as onnxruntime
// refuses the run. Where ONNX defines the result of such a value (onehot: a line of off values), the kernel
// gives that result instead.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "graph.h"
#include "math/activation.h"  // apply_activation, valid_activation
#include "parallel.h"

namespace accel_emu {

// A value a run brought that lies outside what its op defines: element `position` (C order) of the node's
// input `input` is `value`, outside lo..hi (inclusive); `what` names it ("index", "sequence length": a
// string literal). The range is that of axis `range_axis` of the node's input `range_input` (-1: none).
struct DataFault {
    const char* what = "";
    uint32_t input = 0;
    int64_t position = 0;
    int64_t value = 0;
    int64_t lo = 0, hi = 0;
    int32_t range_input = -1, range_axis = -1;
};

// Where the kernels of one job report data faults: the one of the lowest (input, position) is kept, so
// the report does not depend on how a parallel-for split the work. report() takes a lock (it is the
// error path); faulted() is one atomic load, read by the executor after each node.
class DataFaults {
public:
    void report(const DataFault& f) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!faulted_.load(std::memory_order_relaxed) || f.input < first_.input ||
            (f.input == first_.input && f.position < first_.position))
            first_ = f;
        faulted_.store(true, std::memory_order_release);
    }
    bool faulted() const { return faulted_.load(std::memory_order_acquire); }
    DataFault first() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return first_;
    }

private:
    std::atomic<bool> faulted_{false};
    mutable std::mutex mutex_;
    DataFault first_;
};

// The data a kernel runs on. in[i] is nullptr for an absent optional input. Pointers are 64-byte
// aligned, dense, C order, shaped as the graph's tensor descriptors say.
struct KernelArgs {
    const Graph* graph;
    const Node* node;
    const void* const* in;   // node->inputs.size() entries
    void* const* out;        // node->outputs.size() entries
    void* scratch;           // scratch_bytes(graph, node) bytes, 64-byte aligned (nullptr if 0): worker 0's
    const void* prepared;    // what the op's prepare() made at load (nullptr if it has none)
    // The job's core's parallel-for, and the distance from one worker's scratch to the next's: each of
    // par->workers() workers has scratch_bytes of its own.
    const Par* par = &Par::serial();
    size_t scratch_stride = 0;
    // The job's data faults (see the top of this file); never nullptr in a job.
    DataFaults* faults = nullptr;

    void* scratch_for(int worker) const {
        return static_cast<char*>(scratch) + scratch_stride * static_cast<size_t>(worker);
    }
    // Reports a value outside its op's range: the job fails after this node (thread safe).
    void report(const DataFault& f) const { faults->report(f); }
};

struct OpDef {
    const char* name;  // "conv", as in FORMAT.md
    // Checks arity, dtypes, shapes and parameters of `node` against the tensors of `g`.
    // Returns false and sets *error (naming the problem; the caller adds the node name) if invalid.
    bool (*validate)(const Graph& g, const Node& node, std::string* error);
    // Bytes of scratch memory one run of `node` needs (e.g. im2col); 0 if none. Called after validate.
    size_t (*scratch_bytes)(const Graph& g, const Node& node);
    void (*run)(const KernelArgs& args);
    // Optional (both nullptr if unused): data made once at load from the node's constant inputs
    // (packed weights, say), prepared_bytes(g, node) bytes, 64-byte aligned, that every run reads
    // through KernelArgs::prepared. `in` are the node's inputs as in KernelArgs (constants only are
    // valid; others are nullptr).
    size_t (*prepared_bytes)(const Graph& g, const Node& node);
    void (*prepare)(const Graph& g, const Node& node, const void* const* in, void* out);
};

// The definition of `op`, or nullptr if the code is unknown.
const OpDef* find_op(uint32_t op);

}  // namespace accel_emu
