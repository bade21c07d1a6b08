// run.h - one synchronous run through the ABI, shared by CoreModel.run and run_tensors.
#pragma once

#include <accel/accel.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

namespace accel_py {

// One run of the run core (accel_runcore_run: submit, sliced signal-aware wait, release) in one
// GIL-released region, then raise through from_status if the job failed (or KeyboardInterrupt if a
// signal handler raised, the run then abandoned). The caller holds the GIL and keeps the buffers'
// owners alive. `timing` (may be null) receives the job's timing.
void run_blocking(accel_model* model, accel_buffer* const* inputs, size_t input_count, accel_buffer* const* outputs,
                  size_t output_count, int32_t priority, uint64_t core_mask, int64_t timeout_us,
                  accel_job_timing* timing);

}  // namespace accel_py
