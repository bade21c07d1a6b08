// job.cc - jobs on the vart device. A submission is checked completely first (counts, buffers, byte
// sizes: the runner would abort the process on any mismatch), then queued for the model's workers,
// one per runner (the device's cores: a job's core_mask says which may take it). A worker runs the job
// on its runner: buffers lent from that runner for the same tensor are used as they are (sync_for_write
// before, sync_for_read after), any other buffer is handed to VART as a HOST_VIRT buffer of the
// runner's own tensor, which the runner copies (counted in bytes_copied). execute_async blocks; the
// per-job timeout ends the job at its deadline even while VART still runs it (the worker keeps its own
// references until VART returns).
#include <algorithm>

#include "driver_kit/buffer_checks.h"
#include "driver_kit/run_options.h"
#include "entry_points.h"
#include "handles.h"

namespace accel_vart {
namespace {

// An accel buffer given to VART as ordinary host memory holding `tensor` (the runner copies it).
class HostView : public vart::TensorBuffer {
public:
    HostView(const xir::Tensor* tensor, accel_buffer* b) : vart::TensorBuffer(tensor), buffer_(b) {}
    std::pair<uint64_t, size_t> data(const std::vector<int32_t> idx) override {
        size_t offset = 0;
        if (!idx.empty()) {
            const std::vector<int32_t> shape = tensor_->get_shape();
            for (size_t d = 0; d < shape.size() && d < idx.size(); d++) offset = offset * shape[d] + idx[d];
            offset *= (size_t)(tensor_->get_data_type().bit_width / 8);
        }
        offset = std::min<size_t>(offset, buffer_->size);
        return {(uint64_t)(uintptr_t)(buffer_->host + offset), buffer_->size - offset};
    }

private:
    accel_buffer* buffer_;
};

bool lent_for(const accel_buffer* b, const Runners* r, bool is_output, size_t index) {
    return b->lender.get() == r && b->is_output == is_output && b->index == index;
}

// The device's cores are the model's runner slots: bit i of a job's core_mask allows slot i (0: any).
bool allowed(uint64_t core_mask, size_t slot) { return !core_mask || ((core_mask >> slot) & 1); }

// The slot among those core_mask allows whose own buffers the job uses most (-1: none, any allowed slot
// will do).
int pinned_slot(accel_model* m, const std::vector<accel_buffer*>& in, const std::vector<accel_buffer*>& out,
                uint64_t core_mask) {
    std::vector<int> votes(m->runners->slots.size(), 0);
    for (size_t i = 0; i < in.size(); i++)
        if (lent_for(in[i], m->runners.get(), false, i) && allowed(core_mask, in[i]->slot)) votes[in[i]->slot]++;
    for (size_t i = 0; i < out.size(); i++)
        if (lent_for(out[i], m->runners.get(), true, i) && allowed(core_mask, out[i]->slot)) votes[out[i]->slot]++;
    auto best = std::max_element(votes.begin(), votes.end());
    return best == votes.end() || *best == 0 ? -1 : (int)(best - votes.begin());
}

// How the vart driver's messages name what accel_kit::check_job_buffers finds: a buffer by its tensor.
constexpr accel_kit::JobBufferWording kWording = {
    [](const char* kind, size_t given, size_t expected) {
        return format("%zu %ss given, the model has %zu", given, kind, expected);
    },
    [](const accel_kit::JobTensor& t) { return format("%s '%s' is NULL", t.kind, t.tensor.name); },
    [](const accel_kit::JobTensor& t) {
        return format("the buffer for %s '%s' belongs to another device", t.kind, t.tensor.name);
    },
    [](const accel_kit::JobTensor& t, const accel_buffer*, uint64_t bytes) {
        return format("%s '%s' needs %llu bytes, its buffer has %llu", t.kind, t.tensor.name,
                      (unsigned long long)t.tensor.byte_size, (unsigned long long)bytes);
    },
    [](const accel_kit::JobTensor& output, const accel_kit::JobTensor& input) {
        return format("output '%s' shares memory with input '%s'", output.tensor.name, input.tensor.name);
    },
    [](const accel_kit::JobTensor& first, const accel_kit::JobTensor& second) {
        return format("outputs '%s' and '%s' share memory", first.tensor.name, second.tensor.name);
    },
};

// Waits for an in-flight slot (or says BUSY). Inside a callback waiting could never end.
accel_status acquire_slot(accel_device* d, bool no_wait) {
    std::unique_lock<std::mutex> lock(d->mutex);
    if (d->in_flight >= d->runners) {
        if (no_wait || on_completion_thread())
            return fail(ACCEL_ERR_BUSY,
                        format("accel_job_submit: %u jobs already in flight (max_inflight %u)%s", d->in_flight,
                               d->runners, on_completion_thread() ? " and called from a completion callback" : ""));
        d->slot_cv.wait(lock, [d] { return d->in_flight < d->runners; });
    }
    d->in_flight++;
    return ACCEL_OK;
}

// Runs the job on `slot` (a worker; the job is Running and the worker holds a reference). `in` and
// `out` are the worker's own references to the job's buffers: a job that times out lets go of its own
// while VART may still use them.
void run(accel_model* m, size_t slot_index, Job* job, const std::vector<accel_buffer*>& in,
         const std::vector<accel_buffer*>& out) {
    Runners& r = *m->runners;
    Slot& slot = r.slots[slot_index];
    std::vector<std::unique_ptr<HostView>> views;
    std::vector<vart::TensorBuffer*> vin, vout;
    uint64_t copied = 0;
    auto pick = [&](accel_buffer* b, bool is_output, size_t i) -> vart::TensorBuffer* {
        const auto& own = is_output ? slot.outputs : slot.inputs;
        if (lent_for(b, &r, is_output, i) && b->slot == slot_index && i < own.size()) return own[i];
        const xir::Tensor* t = (is_output ? r.output_tensors : r.input_tensors)[i];
        views.push_back(std::make_unique<HostView>(t, b));
        copied += t->get_data_size();
        return views.back().get();
    };
    for (size_t i = 0; i < in.size(); i++) vin.push_back(pick(in[i], false, i));
    for (size_t i = 0; i < out.size(); i++) vout.push_back(pick(out[i], true, i));
    accel_status status = ACCEL_OK;
    std::string message;
    try {
        for (size_t i = 0; i < vin.size(); i++)
            if (i < slot.inputs.size() && vin[i] == slot.inputs[i])
                vin[i]->sync_for_write(0, static_cast<size_t>(r.input_tensors[i]->get_data_size()));
        auto started = slot.runner->execute_async(vin, vout);
        int rc = started.second == 0 ? slot.runner->wait((int)started.first, -1) : started.second;
        if (started.second != 0 || rc != 0) {
            status = ACCEL_ERR_DEVICE;
            message = format("VART: execute_async returned %d, wait %d", started.second, rc);
        }
        for (size_t i = 0; status == ACCEL_OK && i < vout.size(); i++)
            if (i < slot.outputs.size() && vout[i] == slot.outputs[i])
                vout[i]->sync_for_read(0, static_cast<size_t>(r.output_tensors[i]->get_data_size()));
    } catch (const std::exception& e) {
        status = ACCEL_ERR_DEVICE;
        message = format("VART: %s", e.what());
    }
    m->device->bytes_copied.fetch_add(copied);
    for (accel_buffer* b : in) buffer_release(b);
    for (accel_buffer* b : out) buffer_release(b);
    // Done after its deadline is a timeout, whether or not the timer thread got to it first (under load it
    // may run late): the emulator's rule, so that a job's outcome does not depend on thread scheduling.
    if (status == ACCEL_OK && job->deadline_ns && now_ns() > job->deadline_ns) {
        status = ACCEL_ERR_TIMEOUT;
        message = "the job's timeout passed while it ran (it finished late)";
    }
    finish_job(job, status, message);
}

}  // namespace

void worker_loop(accel_model* m, size_t slot) {
    std::vector<Job*> stale;
    std::vector<accel_buffer*> in, out;
    for (;;) {
        Job* job = nullptr;
        {
            std::unique_lock<std::mutex> lock(m->queue_mutex);
            for (;;) {
                // Drop entries of jobs that ended while queued; take the first this slot may run.
                for (auto it = m->queue.begin(); it != m->queue.end();) {
                    Job* j = *it;
                    std::lock_guard<std::mutex> jl(j->mutex);
                    if (j->state != JobState::Queued) {
                        it = m->queue.erase(it);
                        stale.push_back(j);
                        continue;
                    }
                    if ((j->pinned_slot < 0 || j->pinned_slot == (int)slot) && allowed(j->core_mask, slot)) {
                        // Taken while the job still holds its buffers (a timeout cannot end it meanwhile).
                        in = j->inputs;
                        out = j->outputs;
                        for (accel_buffer* b : in) buffer_retain(b);
                        for (accel_buffer* b : out) buffer_retain(b);
                        j->state = JobState::Running;
                        j->timing.started_ns = now_ns();
                        j->timing.core = (int32_t)slot;
                        m->queue.erase(it);
                        job = j;
                        break;
                    }
                    ++it;
                }
                if (job || m->stop || !stale.empty()) break;
                m->queue_cv.wait(lock);
            }
        }
        for (Job* j : stale) job_unref(j);  // the queue's references, outside the locks
        stale.clear();
        if (!job && !m->stop) continue;
        if (!job) return;
        run(m, slot, job, in, out);
        job_unref(job);  // the queue's reference
    }
}

accel_status job_submit(accel_model* m, accel_buffer* const* inputs, size_t nin, accel_buffer* const* outputs,
                        size_t nout, const accel_run_options* options, accel_job** out) {
    accel_device* d = m->device;
    accel_run_options o;
    if (accel_status s = accel_kit::read_run_options(options, out != nullptr, d->runners, &o)) return s;
    if (accel_status s = accel_kit::check_job_buffers(m, inputs, nin, outputs, nout, kBufferRules, kWording)) return s;
    if (accel_status s = acquire_slot(d, (o.flags & ACCEL_SUBMIT_NO_WAIT) != 0)) return s;
    auto* j = new Job;
    j->header.driver = &kDriverTable;
    j->model = m;
    model_retain(m);
    j->inputs.assign(inputs, inputs + nin);
    j->outputs.assign(outputs, outputs + nout);
    for (accel_buffer* b : j->inputs) buffer_retain(b);
    for (accel_buffer* b : j->outputs) buffer_retain(b);
    j->priority = o.priority;
    j->callback = o.callback;
    j->user_data = o.user_data;
    j->core_mask = o.core_mask;
    j->pinned_slot = pinned_slot(m, j->inputs, j->outputs, o.core_mask);
    j->timing.struct_size = sizeof j->timing;
    j->timing.core = -1;
    j->timing.queued_ns = now_ns();
    j->deadline_ns = accel_kit::job_deadline_ns(o, j->timing.queued_ns);
    if (!out) j->user_refs.store(0);  // fire and forget: no caller reference to cancel with
    d->jobs_submitted.fetch_add(1);
    {
        std::lock_guard<std::mutex> lock(m->queue_mutex);
        static std::atomic<uint64_t> sequence{0};
        j->sequence = sequence.fetch_add(1);
        j->refs.fetch_add(1);  // the queue's
        auto at = std::find_if(m->queue.begin(), m->queue.end(), [j](Job* q) { return q->priority < j->priority; });
        m->queue.insert(at, j);
    }
    m->queue_cv.notify_all();
    if (j->deadline_ns) watch_deadline(d, j);
    // The caller's reference is held until here, so that the job outlives the lines above even when a worker
    // finishes it first; a fire-and-forget job drops it now (and is deleted if it has already ended).
    if (out) *out = j;
    else job_unref(j);
    return ACCEL_OK;
}

// Inside its own callback the job has its result: waiting for Done there would wait for ourselves.
bool job_ended(accel_job* j) {
    return j->state == JobState::Done || (j->state == JobState::Finishing && job_in_callback() == j);
}

void job_before_wait(accel_job*, int64_t) {}  // the completion thread signals ends: nothing to poll

void job_retain(accel_job* j) {
    j->user_refs.fetch_add(1);
    j->refs.fetch_add(1);
}

void job_unref(Job* j) {
    if (j->refs.fetch_sub(1) == 1) delete j;
}

// The caller's last reference to a job that has not started cancels it.
void job_release(accel_job* j) {
    if (!j) return;
    if (j->user_refs.fetch_sub(1) == 1) {
        bool queued;
        {
            std::lock_guard<std::mutex> lock(j->mutex);
            queued = j->state == JobState::Queued;
        }
        if (queued) finish_job(j, ACCEL_ERR_CANCELLED, "the job was released before it started", true);
    }
    job_unref(j);
}

}  // namespace accel_vart
