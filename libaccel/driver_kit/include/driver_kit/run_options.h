// run_options.h - the accel_run_options of a submitted job, as every driver reads them: the caller's
// struct (of any ABI version) copied, and what accel_job_submit refuses whatever the driver checked
// before its runtime sees the job.
#pragma once

#include <cstdint>

#include "accel/driver.h"
#include "driver_kit/clock.h"

namespace accel_kit {

// Copies *options (as far as the caller's struct_size and ours both reach) to *out and checks it for a
// device of `cores` cores: a priority outside 0..255, a flag accel.h does not define, no job handle
// (`has_job_handle` false) and no callback, a core_mask that selects none of the cores are
// ACCEL_ERR_INVALID_ARGUMENT with accel_job_submit's messages. On success out->core_mask keeps only
// the device's cores (0 still means any core). A driver's own rules (what its cores map to) come after.
accel_status read_run_options(const accel_run_options* options, bool has_job_handle, uint32_t cores,
                              accel_run_options* out);

// The deadline of a job with these options queued at `queued_ns` (now_ns's clock), 0 for none: a timeout
// of 0, negative or past kForeverUs means none (accel.h).
inline uint64_t job_deadline_ns(const accel_run_options& o, uint64_t queued_ns) {
    return o.timeout_us > 0 && o.timeout_us <= kForeverUs ? queued_ns + (uint64_t)o.timeout_us * 1000u : 0;
}

}  // namespace accel_kit
