// node_profile.cc - per-node profiling (ABI 1.1): what each node of a model is called as the emulator
// runs it, and the node times of a job submitted with ACCEL_SUBMIT_PROFILE_NODES (the executor
// writes them; executor.cc).
#include <algorithm>
#include <cstring>
#include <mutex>

#include "driver_kit/abi_copy.h"
#include "entry_points.h"
#include "handles.h"
#include "status.h"

namespace accel_emu {

// A fused node shows what runs: its op and the activation fused into it ("Conv+Relu"); an activation
// node is its function ("Sigmoid", "QSigmoid" for the int8 one).
std::string node_type_name(const Node& n) {
    if (n.op == Op::Activation) return type_name(n.act);
    if (n.op == Op::QActivation) return std::string("Q") + type_name(n.act);
    std::string type = type_name(n.op);
    if (n.act != Act::None) type += std::string("+") + type_name(n.act);
    return type;
}

accel_status model_get_node_count(accel_model* m, size_t* out) {
    *out = m->graph.nodes.size();
    return ACCEL_OK;
}

accel_status model_get_node_info(accel_model* m, size_t index, accel_node_info* out) {
    if (index >= m->graph.nodes.size())
        return fail(ACCEL_ERR_INVALID_ARGUMENT, format("accel_model_get_node_info: node %zu of a model of %zu nodes",
                                                       index, m->graph.nodes.size()));
    accel_node_info info{};
    info.struct_size = sizeof info;
    info.name = m->graph.nodes[index].name.c_str();
    info.op_type = m->node_types[index].c_str();
    accel_kit::copy_to_caller(info, out);
    return ACCEL_OK;
}

accel_status job_get_node_times(accel_job* j, accel_node_time* times, size_t capacity, size_t* out) {
    if (!j->node_times)
        return fail(ACCEL_ERR_UNSUPPORTED,
                    "accel_job_get_node_times: the job was not submitted with ACCEL_SUBMIT_PROFILE_NODES");
    std::lock_guard<std::mutex> lock(j->mutex);
    // The executor's writes happen before the job leaves Running (under this mutex).
    if (j->state == JobState::Queued || j->state == JobState::Running)
        return fail(ACCEL_ERR_NOT_READY, "accel_job_get_node_times: the job has not finished yet");
    const size_t n = std::min<size_t>(capacity, j->node_count);
    if (n) memcpy(times, j->node_times.get(), n * sizeof *times);
    *out = j->node_count;
    return ACCEL_OK;
}

}  // namespace accel_emu
