// executor.cc - one job on one emulated core: bind every tensor to its memory as planned at load,
// run the nodes in order, and (debug mode) check that no buffer was written past its ends.
#include "handles.h"
#include "ops.h"
#include "status.h"

namespace accel_emu {

namespace {

void bind_tensors(const accel_model* m, const accel_job* job, Workspace* ws) {
    const MemoryPlan& plan = m->plan;
    for (size_t t = 0; t < plan.tensors.size(); t++) {
        const TensorPlace& p = plan.tensors[t];
        switch (p.place) {
            case Place::Input: ws->tensor_ptrs[t] = job->inputs[p.index]->host; break;
            case Place::Output: ws->tensor_ptrs[t] = job->outputs[p.index]->host; break;
            case Place::Constant: ws->tensor_ptrs[t] = m->weights.ptr + p.offset; break;
            case Place::Workspace: ws->tensor_ptrs[t] = ws->block.ptr + p.offset; break;
        }
    }
}

accel_status check_guards(const accel_model* m, const accel_job* job, const Workspace* ws, std::string* message) {
    const Pool& pool = m->device->pool;
    std::string problem;
    auto check_list = [&](const std::vector<accel_buffer*>& bufs, const std::vector<accel_tensor_info>& infos,
                          const char* what) {
        for (size_t i = 0; i < bufs.size(); i++) {
            if (!pool.check(bufs[i]->block, &problem)) {
                *message = format("%s %zu ('%s', buffer #%llu, %llu bytes): %s", what, i, infos[i].name,
                                  (unsigned long long)bufs[i]->id, (unsigned long long)bufs[i]->size, problem.c_str());
                return false;
            }
        }
        return true;
    };
    if (!check_list(job->inputs, m->input_infos, "input") || !check_list(job->outputs, m->output_infos, "output"))
        return ACCEL_ERR_MEMORY_CORRUPTION;
    if (!pool.check(ws->block, &problem)) {
        *message = "the model's workspace: " + problem;
        return ACCEL_ERR_MEMORY_CORRUPTION;
    }
    return ACCEL_OK;
}

// Where element `position` (C order) of `t` is: " at [0, 15]" ("" for a scalar).
std::string coordinates(const TensorDesc& t, int64_t position) {
    if (t.ndim == 0) return "";
    int64_t at[kMaxDims] = {0};
    for (int i = t.ndim - 1; i >= 0; --i) {
        at[i] = t.dims[i] > 0 ? position % t.dims[i] : 0;
        position = t.dims[i] > 0 ? position / t.dims[i] : 0;
    }
    std::string s = " at [";
    for (int i = 0; i < t.ndim; ++i) s += (i ? ", " : "") + std::to_string(at[i]);
    return s + "]";
}

// Why a job stopped at `node`: the value a run brought that its op does not define (ops.h, DataFault).
std::string fault_message(const Graph& g, const Node& node, const OpDef& op, const DataFault& f) {
    const TensorDesc& t = g.tensors[node.inputs[f.input]];
    std::string m = format("node '%s' (%s): %s %lld%s of input %u ('%s') is outside %lld..%lld", node.name.c_str(),
                           op.name, f.what, (long long)f.value, coordinates(t, f.position).c_str(), f.input,
                           t.name.c_str(), (long long)f.lo, (long long)f.hi);
    if (f.range_input >= 0) {
        const TensorDesc& r = g.tensors[node.inputs[static_cast<size_t>(f.range_input)]];
        m += format(" (input %d ('%s') has %lld along axis %d)", f.range_input, r.name.c_str(),
                    (long long)r.dims[f.range_axis], f.range_axis);
    }
    return m;
}

// A node's run between two reads of the job timing's clock (ACCEL_SUBMIT_PROFILE_NODES).
void run_timed(const OpDef& op, const KernelArgs& args, accel_node_time* time) {
    time->started_ns = now_ns();
    op.run(args);
    time->finished_ns = now_ns();
}

}  // namespace

accel_status run_job(accel_job* job, int core, std::string* message) {
    accel_model* m = job->model;
    Workspace* ws = nullptr;
    accel_status s = acquire_workspace(m, &ws);
    if (s != ACCEL_OK) {
        *message = "out of device memory for a second concurrent workspace of this model";
        return s;
    }
    bind_tensors(m, job, ws);
    const MemoryPlan& plan = m->plan;
    void* scratch = ws->block.ptr + plan.scratch_offset;
    const Par& par = m->device->helpers->for_core(core);
    accel_node_time* times = job->node_times.get();
    DataFaults faults;
    for (size_t n = 0; n < m->graph.nodes.size(); n++) {
        const Node& node = m->graph.nodes[n];
        if (job->deadline_ns && now_ns() >= job->deadline_ns) {
            *message = format("the job's timeout passed while it ran (before node '%s')", node.name.c_str());
            s = ACCEL_ERR_TIMEOUT;
            break;
        }
        for (size_t i = 0; i < node.inputs.size(); i++)
            ws->node_inputs[i] = node.inputs[i] == kAbsent ? nullptr : ws->tensor_ptrs[node.inputs[i]];
        for (size_t i = 0; i < node.outputs.size(); i++) ws->node_outputs[i] = ws->tensor_ptrs[node.outputs[i]];
        const void* prepared =
            plan.prepared_offsets[n] == kNotPrepared ? nullptr : m->prepared.ptr + plan.prepared_offsets[n];
        KernelArgs args{&m->graph, &node, ws->node_inputs.data(), ws->node_outputs.data(), scratch, prepared};
        args.par = &par;
        args.scratch_stride = plan.scratch_stride;
        args.faults = &faults;
        if (times) run_timed(*plan.ops[n], args, &times[n]);  // the one test profiling costs when off
        else plan.ops[n]->run(args);
        if (faults.faulted()) {
            *message = fault_message(m->graph, node, *plan.ops[n], faults.first());
            s = ACCEL_ERR_INVALID_ARGUMENT;
            break;
        }
    }
    if (s == ACCEL_OK && job->deadline_ns && now_ns() > job->deadline_ns) {
        *message = "the job's timeout passed while it ran (it finished late)";
        s = ACCEL_ERR_TIMEOUT;
    }
    if (s == ACCEL_OK && m->device->options.debug) s = check_guards(m, job, ws, message);
    release_workspace(m, ws);
    return s;
}

}  // namespace accel_emu
