#include "plan.h"

#include <algorithm>

#include "ops.h"
#include "pool.h"

namespace accel_emu {

namespace {
uint64_t align_up(uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

struct Lifetime {
    uint32_t tensor;
    size_t first, last;  // node indices, inclusive
    uint64_t bytes;
};
}  // namespace

MemoryPlan plan_memory(const Graph& g, uint32_t workers) {
    MemoryPlan plan;
    plan.tensors.resize(g.tensors.size());
    for (size_t i = 0; i < g.inputs.size(); i++) plan.tensors[g.inputs[i]] = {Place::Input, (uint32_t)i, 0};
    for (size_t i = 0; i < g.outputs.size(); i++) plan.tensors[g.outputs[i]] = {Place::Output, (uint32_t)i, 0};

    std::vector<Lifetime> lives;
    std::vector<size_t> slot(g.tensors.size(), SIZE_MAX);
    for (size_t t = 0; t < g.tensors.size(); t++) {
        const TensorDesc& d = g.tensors[t];
        if (d.kind == TensorKind::Constant) plan.tensors[t] = {Place::Constant, 0, d.data_offset};
    }
    uint64_t scratch = 0;
    plan.ops.resize(g.nodes.size());
    plan.prepared_offsets.assign(g.nodes.size(), kNotPrepared);
    for (size_t n = 0; n < g.nodes.size(); n++) {
        const Node& node = g.nodes[n];
        for (uint32_t out : node.outputs) {
            if (g.tensors[out].kind != TensorKind::Activation || slot[out] != SIZE_MAX) continue;
            slot[out] = lives.size();
            lives.push_back({out, n, n, align_up(g.tensors[out].bytes ? g.tensors[out].bytes : 1)});
        }
        for (uint32_t in : node.inputs)
            if (in != kAbsent && slot[in] != SIZE_MAX) lives[slot[in]].last = n;
        const OpDef* def = find_op(static_cast<uint32_t>(node.op));
        plan.ops[n] = def;
        if (!def) continue;
        scratch = std::max<uint64_t>(scratch, def->scratch_bytes(g, node));
        const uint64_t prepared = def->prepared_bytes ? def->prepared_bytes(g, node) : 0;
        if (prepared) {
            plan.prepared_offsets[n] = plan.prepared_bytes;
            plan.prepared_bytes += align_up(prepared);
        }
    }

    // Largest first, each at the lowest offset that no placed, overlapping-in-time tensor occupies.
    std::vector<size_t> order(lives.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return lives[a].bytes != lives[b].bytes ? lives[a].bytes > lives[b].bytes : a < b;
    });
    std::vector<std::pair<uint64_t, uint64_t>> taken;  // [offset, end) of conflicting placements
    std::vector<size_t> placed;
    uint64_t top = 0;
    for (size_t i : order) {
        const Lifetime& L = lives[i];
        taken.clear();
        for (size_t j : placed) {
            const Lifetime& P = lives[j];
            if (P.first <= L.last && L.first <= P.last) {
                uint64_t off = plan.tensors[P.tensor].offset;
                taken.emplace_back(off, off + P.bytes);
            }
        }
        std::sort(taken.begin(), taken.end());
        uint64_t offset = 0;
        for (const auto& r : taken) {
            if (offset + L.bytes <= r.first) break;
            offset = std::max(offset, r.second);
        }
        plan.tensors[L.tensor] = {Place::Workspace, 0, offset};
        top = std::max(top, offset + L.bytes);
        placed.push_back(i);
    }
    plan.scratch_offset = align_up(top);
    plan.scratch_stride = align_up(scratch);
    plan.workspace_bytes = std::max<uint64_t>(kAlignment, plan.scratch_offset + plan.scratch_stride * workers);
    return plan;
}

}  // namespace accel_emu
