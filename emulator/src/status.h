// status.h - the emulator reports a failure through the driver kit (driver_kit/status.h).
#pragma once

#include "driver_kit/status.h"

namespace accel_emu {
using accel_kit::fail;
using accel_kit::format;
}  // namespace accel_emu
