// run.h - one synchronous run through the ABI, shared by CoreModel.run and run_tensors.
#pragma once

#include <accel/accel.h>
#include <pybind11/pybind11.h>

#include <cstring>

namespace py = pybind11;

namespace accel_py {

inline accel_run_options make_options(int32_t priority, uint64_t core_mask, int64_t timeout_us) {
    accel_run_options o;
    std::memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.priority = priority;
    o.core_mask = core_mask;
    o.timeout_us = timeout_us;
    return o;
}

// Submit, wait (sliced, signal-aware: wait.h) and release in one GIL-released region, then raise
// through from_status if the job failed (or KeyboardInterrupt if a signal handler raised). The
// caller holds the GIL and keeps the buffers' owners alive. `timing` (may be null) receives the
// job's timing.
void run_blocking(accel_model* model, accel_buffer* const* inputs, size_t input_count, accel_buffer* const* outputs,
                  size_t output_count, const accel_run_options& options, accel_job_timing* timing);

}  // namespace accel_py
