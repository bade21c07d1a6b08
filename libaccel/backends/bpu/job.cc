// job.cc - submitting a job (every argument checked before the runtime sees it), the in-flight limit,
// cache maintenance around the run, waiting, and ending a job on the completer's thread.
//
// A user of the ABI never flushes by hand: submit CLEANs every input before the task starts, and the
// completer INVALIDATEs every output before the job is reported done (callback, wait, poll).
#include <algorithm>
#include <chrono>
#include <new>

#include "completer.h"
#include "driver_kit/buffer_checks.h"
#include "driver_kit/driver_tls.h"
#include "driver_kit/run_options.h"
#include "entry_points.h"
#include "handles.h"
#include "status.h"

namespace accel_bpu {

ACCEL_DRIVER_TLS accel_job* tl_job_in_callback = nullptr;

namespace {

// A buffer too small for its tensor, in the bpu driver's words (the rest: the kit's indexed wording).
std::string too_small(const accel_kit::JobTensor& t, const accel_buffer* b, uint64_t bytes) {
    return format("%s %zu ('%s') needs %llu bytes (its aligned, padded size), buffer #%llu holds %llu", t.kind, t.index,
                  t.tensor.name, (unsigned long long)t.tensor.byte_size, (unsigned long long)b->id,
                  (unsigned long long)bytes);
}

constexpr accel_kit::JobBufferWording kWording = accel_kit::indexed_wording(too_small);

// The board cores a job may use: bit i of the result is board core i. `core_mask` is the job's, already
// checked against the device's cores (accel_kit::read_run_options); 0 allows them all.
uint64_t board_cores(const accel_device* d, uint64_t core_mask) {
    const uint64_t mask = core_mask ? core_mask : d->cores >= 64 ? ~0ull : (1ull << d->cores) - 1;
    uint64_t board = 0;
    for (uint32_t i = 0, bit = 0; i < 64; i++) {
        if (!((d->board_cores >> i) & 1)) continue;
        if ((mask >> bit) & 1) board |= 1ull << i;
        bit++;
    }
    return board;
}

// Takes an in-flight slot: blocks while the device's max_inflight jobs are in flight, unless the
// caller may not block (no-wait flag, or inside a completion callback, where waiting could never end).
accel_status take_slot(accel_device* d, bool may_block) {
    std::unique_lock<std::mutex> lock(d->slots_mutex);
    if (d->inflight >= d->max_inflight) {
        if (!may_block)
            return fail(
                ACCEL_ERR_BUSY,
                format("accel_job_submit: %u jobs are in flight on the device (its "
                       "max_inflight)%s",
                       d->max_inflight, tl_job_in_callback ? "; a completion callback cannot wait for a slot" : ""));
        d->slot_freed.wait(lock, [d] { return d->inflight < d->max_inflight; });
    }
    d->inflight++;
    return ACCEL_OK;
}

void give_slot(accel_device* d) {
    std::lock_guard<std::mutex> lock(d->slots_mutex);
    d->inflight--;
    d->slot_freed.notify_all();
}

void drop_references(accel_job* j) {
    for (accel_buffer* b : j->inputs) buffer_release(b);
    for (accel_buffer* b : j->outputs) buffer_release(b);
    j->inputs.clear();
    j->outputs.clear();
    if (j->model) model_release(j->model);
    j->model = nullptr;
    accel_device* d = j->device;
    j->device = nullptr;
    if (d) device_release(d);  // may be the last: the device (and its completer) then goes
}

void destroy_job(accel_job* j) {
    j->task.reset();
    drop_references(j);
    delete j;
}

// The runtime's report that a task ended (its thread, or the submitting one inside start()).
// An abandoned job (see handles.h) is reaped now; any other ends as finished.
void on_task_done(void* context, const Status& status) {
    auto* j = static_cast<accel_job*>(context);
    bool abandoned;
    {
        std::lock_guard<std::mutex> lock(j->mutex);
        j->runtime_status = status;
        j->runtime_done = true;
        j->runtime_done_ns = now_ns();
        abandoned = j->abandoned;
    }
    if (abandoned) j->completer->reap(j);
    else j->completer->end(j, EndReason::Finished, true);
}

// Starts the job's task. The runtime's own task limit is process wide (other devices, other users of
// the runtime): when it is reached, wait for a slot there too, or say BUSY if the caller may not wait.
accel_status start_task(accel_job* j, const std::vector<Memory*>& in, const std::vector<Memory*>& out,
                        const Schedule& schedule, bool may_block) {
    accel_device* d = j->device;
    for (;;) {
        Status s = j->task->start(in, out, schedule);
        if (s.ok()) return ACCEL_OK;
        if (s.code != ACCEL_ERR_BUSY || !may_block) return fail(s.code, "accel_job_submit: " + s.message);
        // Our own jobs' ends wake us; other users' do not: look again every millisecond.
        std::unique_lock<std::mutex> lock(d->slots_mutex);
        d->slot_freed.wait_for(lock, std::chrono::milliseconds(1));
    }
}

}  // namespace

accel_status job_submit(accel_model* m, accel_buffer* const* inputs, size_t nin, accel_buffer* const* outputs,
                        size_t nout, const accel_run_options* options, accel_job** out) {
    accel_device* d = m->device;
    accel_run_options o;
    accel_status s = accel_kit::read_run_options(options, out != nullptr, d->cores, &o);
    if (s != ACCEL_OK) return s;
    Schedule schedule;
    schedule.priority = o.priority;
    schedule.cores = board_cores(d, o.core_mask);
    s = accel_kit::check_job_buffers(m, inputs, nin, outputs, nout, kBufferRules, kWording);
    if (s != ACCEL_OK) return s;

    const bool may_block = !(o.flags & ACCEL_SUBMIT_NO_WAIT) && !tl_job_in_callback;
    const uint64_t queued_ns = now_ns();
    s = take_slot(d, may_block);
    if (s != ACCEL_OK) return s;

    auto* j = new (std::nothrow) accel_job();
    if (!j) {
        give_slot(d);
        return fail(ACCEL_ERR_OUT_OF_MEMORY, "bpu: out of host memory submitting a job");
    }
    j->header.driver = &kDriverTable;
    // The caller's, the completer's and this call's own (the job may end before submit returns).
    j->refs = out ? 3 : 2;
    j->user_refs = out ? 1 : 0;
    j->device = d;
    d->refs.fetch_add(1, std::memory_order_relaxed);
    j->model = m;
    model_retain(m);
    std::vector<Memory*> in_mem, out_mem;
    for (size_t i = 0; i < nin; i++)
        buffer_retain(inputs[i]), j->inputs.push_back(inputs[i]), in_mem.push_back(inputs[i]->memory.get());
    for (size_t i = 0; i < nout; i++)
        buffer_retain(outputs[i]), j->outputs.push_back(outputs[i]), out_mem.push_back(outputs[i]->memory.get());
    j->callback = o.callback;
    j->user_data = o.user_data;
    j->completer = d->completer;
    j->timing.struct_size = sizeof j->timing;
    j->timing.core = -1;
    j->timing.queued_ns = queued_ns;
    j->deadline_ns = accel_kit::job_deadline_ns(o, queued_ns);

    // The BPU reads memory, not the CPU's cache: what the host wrote must reach it.
    for (size_t i = 0; s == ACCEL_OK && i < nin; i++) {
        Status f = in_mem[i]->flush(true);
        if (!f.ok())
            s = fail(f.code,
                     format("accel_job_submit: input %zu ('%s'): %s", i, m->input_infos[i].name, f.message.c_str()));
    }
    // Set before the task starts (it may end at once): the runtime says neither when a task began to run
    // nor on which core, so "started" is when the runtime took it and the core the first allowed.
    j->timing.started_ns = now_ns();
    for (uint32_t i = 0; i < d->cores; i++)
        if (!o.core_mask || ((o.core_mask >> i) & 1)) {
            j->timing.core = (int32_t)i;
            break;
        }
    if (s == ACCEL_OK) {
        j->task = m->model->new_task(&on_task_done, j);
        s = start_task(j, in_mem, out_mem, schedule, may_block);
    }
    if (s != ACCEL_OK) {
        destroy_job(j);
        give_slot(d);
        return s;
    }
    int expected = kStarting;
    j->phase.compare_exchange_strong(expected, kRunning, std::memory_order_acq_rel);
    j->completer->watch(j);
    d->jobs_submitted++;
    if (out) *out = j;
    job_unref(j);
    return ACCEL_OK;
}

void finish_job(accel_job* j) {
    // What the runtime said so far; a task that has not ended is abandoned (handles.h): its task is not
    // released and what it runs on is kept until it ends, though the job's result is reported now.
    bool runtime_done;
    Status runtime_status;
    uint64_t runtime_done_ns;
    {
        std::lock_guard<std::mutex> lock(j->mutex);
        runtime_done = j->runtime_done;
        runtime_status = j->runtime_status;
        runtime_done_ns = j->runtime_done_ns;
        j->abandoned = !runtime_done;
    }
    if (runtime_done) {  // ended: releasing it now is safe, and after it the runtime reports nothing more
        j->task->end();
        j->task.reset();
    }
    accel_status status = ACCEL_OK;
    std::string message;
    switch (j->reason) {
        case EndReason::Finished:
            if (!runtime_status.ok()) {
                status = runtime_status.code, message = runtime_status.message;
            } else if (j->deadline_ns && runtime_done_ns > j->deadline_ns) {
                // Done after its deadline is a timeout, whether or not the completer got to the deadline first
                // (under load it may run late): the emulator's rule, so the outcome does not hang on scheduling.
                status = ACCEL_ERR_TIMEOUT;
                message = "the job's timeout passed while it ran (it finished late)";
            }
            break;
        case EndReason::TimedOut:
            status = ACCEL_ERR_TIMEOUT;
            message = "the job did not finish within its timeout";
            break;
        case EndReason::Cancelled:
            // The runtime does not say whether a task had started: one that ended well before its release
            // counts as finished, any other as cancelled.
            if (runtime_done && runtime_status.ok()) break;
            status = ACCEL_ERR_CANCELLED;
            message = "the job was released before it finished";
            break;
    }
    // The host reads through its cache: drop what it holds of the outputs the BPU wrote.
    for (size_t i = 0; status == ACCEL_OK && i < j->outputs.size(); i++) {
        Status f = j->outputs[i]->memory->flush(false);
        if (!f.ok()) status = f.code, message = format("output %zu: %s", i, f.message.c_str());
    }
    uint64_t finished = j->reason == EndReason::Finished && runtime_done_ns ? runtime_done_ns : now_ns();
    {
        std::lock_guard<std::mutex> lock(j->mutex);
        j->status = status;
        j->message = message;
        j->timing.finished_ns = std::max(finished, j->timing.started_ns);
        // A job cancelled or timed out whose task did not end well never ran, as far as anyone can tell.
        bool ran = runtime_done && runtime_status.ok();
        if ((status == ACCEL_ERR_CANCELLED || status == ACCEL_ERR_TIMEOUT) && !ran)
            j->timing.core = -1, j->timing.started_ns = 0;
        j->phase.store(kFinishing, std::memory_order_release);
    }
    if (j->callback) {
        tl_job_in_callback = j;
        j->callback(j, status, j->user_data);
        tl_job_in_callback = nullptr;
    }
    accel_device* d = j->device;
    d->jobs_completed++;
    // The slot goes back now even for an abandoned job: the runtime's own task limit still counts its
    // task, and start_task waits for that (BUSY) as for any other user's.
    give_slot(d);
    if (runtime_done) drop_references(j);
    {
        std::lock_guard<std::mutex> lock(j->mutex);
        j->phase.store(kDone, std::memory_order_release);
        j->done_cv.notify_all();
    }
    if (runtime_done) job_unref(j);  // an abandoned job keeps the completer's reference until reap_job
}

void reap_job(accel_job* j) {
    j->task->end();
    j->task.reset();
    drop_references(j);  // may drop the device's last reference: it goes now
    job_unref(j);
}

// Inside its own callback the job has its result: waiting for kDone there would wait for ourselves.
bool job_ended(accel_job* j) {
    int p = j->phase.load(std::memory_order_acquire);
    return p == kDone || (p == kFinishing && tl_job_in_callback == j);
}

void job_before_wait(accel_job*, int64_t) {}  // the runtime signals ends: nothing to poll

void job_retain(accel_job* j) {
    j->user_refs.fetch_add(1, std::memory_order_relaxed);
    j->refs.fetch_add(1, std::memory_order_relaxed);
}

void job_unref(accel_job* j) {
    if (j->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy_job(j);
}

void job_release(accel_job* j) {
    // No one can wait for it any more: a job not ended yet is cancelled (its task released).
    if (j->user_refs.fetch_sub(1, std::memory_order_acq_rel) == 1) j->completer->end(j, EndReason::Cancelled, false);
    job_unref(j);
}

}  // namespace accel_bpu
