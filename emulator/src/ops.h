// ops.h - the emulator's op registry: for each op code, a load-time shape check, the scratch memory a
// run needs, and the kernel. Kernels never fail at run time: everything that could make them fail
// (shapes, attributes, counts) is refused by `validate` when the model loads.
#pragma once

#include <cstddef>
#include <string>

#include "graph.h"
#include "math/activation.h"  // apply_activation, valid_activation
#include "parallel.h"

namespace accel_emu {

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

    void* scratch_for(int worker) const {
        return static_cast<char*>(scratch) + scratch_stride * static_cast<size_t>(worker);
    }
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
