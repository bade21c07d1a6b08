// entry_points.h - the bpu driver's implementations of the driver table's functions (driver_kit/
// entry_points.inc; driver.cc makes the table of them).
#pragma once

#include "accel/driver.h"
#include "driver_kit/buffer_checks.h"

namespace accel_bpu {
#include "driver_kit/entry_points.inc"
}  // namespace accel_bpu
