// entry_points.h - the emulator's implementations of the driver table's functions (driver_kit/
// entry_points.inc; driver.cc makes the table of them).
#pragma once

#include "accel/driver.h"
#include "driver_kit/buffer_checks.h"

// The emulator times each node of a job that asks (ACCEL_SUBMIT_PROFILE_NODES; node_profile.cc).
#define ACCEL_KIT_PROFILES_NODES 1

namespace accel_emu {
#include "driver_kit/entry_points.inc"
}  // namespace accel_emu
