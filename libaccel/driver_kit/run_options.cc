// run_options.cc - see run_options.h.
#include "driver_kit/run_options.h"

#include <cstring>

#include "driver_kit/status.h"

namespace accel_kit {

namespace {

constexpr uint32_t kKnownFlags = ACCEL_SUBMIT_NO_WAIT | ACCEL_SUBMIT_PROFILE_NODES;

}  // namespace

accel_status read_run_options(const accel_run_options* options, bool has_job_handle, uint32_t cores,
                              accel_run_options* out) {
    accel_run_options o{};
    memcpy(&o, options, options->struct_size < sizeof o ? options->struct_size : sizeof o);
    if (o.priority < 0 || o.priority > 255)
        return fail(ACCEL_ERR_INVALID_ARGUMENT, format("accel_job_submit: priority %d is outside 0..255", o.priority));
    if (o.flags & ~kKnownFlags)
        return fail(ACCEL_ERR_INVALID_ARGUMENT, format("accel_job_submit: unknown flags 0x%x", o.flags));
    // Fire and forget is only safe when someone hears about the end (libaccel says so first; a driver
    // called by anything else still must not run a job nobody can see).
    if (!has_job_handle && !o.callback)
        return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_job_submit: out_job is NULL and no callback is set");
    const uint64_t all = cores >= 64 ? ~0ull : (1ull << cores) - 1;
    if (o.core_mask && !(o.core_mask & all))
        return fail(ACCEL_ERR_INVALID_ARGUMENT,
                    format("accel_job_submit: core_mask 0x%llx selects none of the device's %u cores",
                           (unsigned long long)o.core_mask, cores));
    o.core_mask &= all;
    *out = o;
    return ACCEL_OK;
}

}  // namespace accel_kit
