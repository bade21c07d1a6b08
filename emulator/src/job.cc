// job.cc - submitting a job (every input checked before anything runs), waiting for it, and its
// reference counting: the caller's references and the scheduler's one are counted apart, because
// the caller dropping its last reference before the job ran means "cancel".
#include <algorithm>
#include <new>
#include <thread>

#include "driver_kit/buffer_checks.h"
#include "driver_kit/clock.h"
#include "driver_kit/run_options.h"
#include "dtypes.h"
#include "entry_points.h"
#include "handles.h"
#include "scheduler.h"
#include "spin.h"
#include "status.h"

namespace accel_emu {

namespace {

using accel_kit::kForeverUs;

std::string shape_text(const accel_tensor_info& t) {
    std::string s = "(";
    for (uint32_t i = 0; i < t.ndim; i++) s += (i ? ", " : "") + std::to_string(t.shape[i]);
    return s + (t.ndim == 1 ? ",)" : ")");
}

// A buffer too small for its tensor, in the emulator's words (the rest: the kit's indexed wording).
std::string too_small(const accel_kit::JobTensor& t, const accel_buffer* b, uint64_t bytes) {
    return format("%s %zu ('%s') needs %llu bytes for %s %s, buffer #%llu holds %llu", t.kind, t.index, t.tensor.name,
                  (unsigned long long)t.tensor.byte_size, shape_text(t.tensor).c_str(), dtype_name(t.tensor.dtype),
                  (unsigned long long)b->id, (unsigned long long)bytes);
}

constexpr accel_kit::JobBufferWording kWording = accel_kit::indexed_wording(too_small);

void destroy_job(accel_job* j) {
    // A job that never reached the scheduler still holds what submit retained.
    for (accel_buffer* b : j->inputs) buffer_release(b);
    for (accel_buffer* b : j->outputs) buffer_release(b);
    if (j->model) model_release(j->model);
    delete j;
}

}  // namespace

accel_status job_submit(accel_model* m, accel_buffer* const* inputs, size_t nin, accel_buffer* const* outputs,
                        size_t nout, const accel_run_options* options, accel_job** out) {
    accel_run_options o;
    accel_status s = accel_kit::read_run_options(options, out != nullptr, m->device->options.cores, &o);
    if (s != ACCEL_OK) return s;
    s = accel_kit::check_job_buffers(m, inputs, nin, outputs, nout, kBufferRules, kWording);
    if (s != ACCEL_OK) return s;

    auto* j = new (std::nothrow) accel_job();
    if (!j) return fail(ACCEL_ERR_OUT_OF_MEMORY, "emu: out of host memory submitting a job");
    j->header.driver = &kDriverTable;
    if (!out) {  // fire and forget: only the scheduler holds it
        j->refs = 1;
        j->user_refs = 0;
    }
    j->model = m;
    model_retain(m);
    j->scheduler = m->device->scheduler;
    for (size_t i = 0; i < nin; i++) buffer_retain(inputs[i]), j->inputs.push_back(inputs[i]);
    for (size_t i = 0; i < nout; i++) buffer_retain(outputs[i]), j->outputs.push_back(outputs[i]);
    j->priority = o.priority;
    j->core_mask = o.core_mask;
    j->callback = o.callback;
    j->user_data = o.user_data;
    if (o.flags & ACCEL_SUBMIT_PROFILE_NODES) {
        j->node_count = (uint32_t)m->graph.nodes.size();  // the reader caps it at kMaxNodeCount
        j->node_times.reset(new (std::nothrow) accel_node_time[j->node_count + 1]());  // + 1: set even for 0 nodes
        if (!j->node_times) {
            destroy_job(j);
            return fail(ACCEL_ERR_OUT_OF_MEMORY, "emu: out of host memory for a job's node times");
        }
    }
    j->timing.struct_size = sizeof j->timing;
    j->timing.core = -1;
    j->timing.queued_ns = now_ns();
    j->deadline_ns = accel_kit::job_deadline_ns(o, j->timing.queued_ns);

    s = m->device->scheduler->submit(j, (o.flags & ACCEL_SUBMIT_NO_WAIT) != 0);
    if (s != ACCEL_OK) {
        destroy_job(j);
        return s;
    }
    m->device->jobs_submitted++;
    if (out) *out = j;
    return ACCEL_OK;
}

// Inside its own callback the job has its result: waiting for Done there would wait for ourselves.
bool job_ended(accel_job* j) {
    return j->state == JobState::Done || (j->state == JobState::Finishing && tl_job_in_callback == j);
}

// A short job ends sooner than a sleeping thread can be woken: poll first (spin.h).
void job_before_wait(accel_job* j, int64_t timeout_us) {
    if (timeout_us == 0 || tl_job_in_callback == j) return;
    uint64_t budget = j->scheduler->spin_ns();
    if (timeout_us > 0 && timeout_us <= kForeverUs) budget = std::min<uint64_t>(budget, (uint64_t)timeout_us * 1000u);
    spin_until([j] { return j->done.load(std::memory_order_acquire); }, budget);
}

void job_retain(accel_job* j) {
    j->user_refs.fetch_add(1, std::memory_order_relaxed);
    j->refs.fetch_add(1, std::memory_order_relaxed);
}

void job_unref(accel_job* j) {
    if (j->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_job(j);
}

void job_release(accel_job* j) {
    if (j->user_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        // No one can wait for it any more: if it has not started, it never will. (The job may start
        // and finish meanwhile; cancel() then finds it no longer queued and does nothing.)
        bool queued;
        {
            std::lock_guard<std::mutex> lock(j->mutex);
            queued = j->state == JobState::Queued;
        }
        if (queued) j->scheduler->cancel(j);
    }
    job_unref(j);
}

}  // namespace accel_emu
