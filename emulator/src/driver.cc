// driver.cc - the emulator's driver: what it is, and its function table and entry point, made by the
// driver kit (driver_kit/driver_table.inc) from the implementations in the other files.
#include "driver_kit/guard.h"
#include "driver_kit/job_wait.h"
#include "entry_points.h"
#include "handles.h"
#include "math/gemm.h"
#include "ops.h"

namespace accel_emu {
namespace {

accel_status on_load() {
    gemm_init();  // one emulated core is one thread: the BLAS must not spawn its own
    return ACCEL_OK;
}

}  // namespace

constexpr accel_kit::DriverInfo kDriverInfo = {"emu", "accel emulator: a software device with real numerics",
                                               "internal error", "", on_load};

#include "driver_kit/driver_table.inc"

}  // namespace accel_emu
