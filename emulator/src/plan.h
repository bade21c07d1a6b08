// plan.h - where every tensor of a model lives during a run, decided once at load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph.h"

namespace accel_emu {

enum class Place : uint8_t { Input, Output, Constant, Workspace };

struct TensorPlace {
    Place place = Place::Workspace;
    uint32_t index = 0;   // Input/Output: position in the graph's input/output list
    uint64_t offset = 0;  // Constant: in the weights block; Workspace: in the workspace
};

struct OpDef;

constexpr uint64_t kNotPrepared = UINT64_MAX;

struct MemoryPlan {
    std::vector<TensorPlace> tensors;  // one per graph tensor
    uint64_t workspace_bytes = 0;      // intermediates + scratch, at least kAlignment
    uint64_t scratch_offset = 0;       // scratch area in the workspace: one per worker (host thread) of a job
    uint64_t scratch_stride = 0;       // one worker's scratch: the largest any node needs
    std::vector<const OpDef*> ops;     // one per node: its kernel, looked up once
    // One per node: where its prepared data (OpDef::prepare, made at load) lies in the model's prepared
    // block, or kNotPrepared if the op has none.
    std::vector<uint64_t> prepared_offsets;
    uint64_t prepared_bytes = 0;       // the prepared block's size (0: no node prepares anything)
};

// Plans intermediates by liveness: two intermediates share bytes only if their lifetimes (from the node
// that produces one to the last node that reads it) do not overlap. Greedy, largest first. Also looks up
// each node's kernel and lays out the data the nodes prepare at load. The nodes have been validated.
// `workers`: host threads a job runs on (the device's threads option), each with its own scratch.
MemoryPlan plan_memory(const Graph& graph, uint32_t workers);

}  // namespace accel_emu
