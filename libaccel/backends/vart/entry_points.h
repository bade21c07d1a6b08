// entry_points.h - the vart driver's implementations of the driver table's functions (driver_kit/
// entry_points.inc; driver.cc makes the table of them).
#pragma once

#include "accel/driver.h"
#include "driver_kit/buffer_checks.h"

namespace accel_vart {
#define ACCEL_KIT_LOADS_SUBGRAPHS  // one runner per DPU subgraph, as VART makes them: the caller names which
#include "driver_kit/entry_points.inc"

constexpr uint64_t kAlignment = 64;
}  // namespace accel_vart
