// status.h - the bpu driver reports a failure through the driver kit (driver_kit/status.h).
#pragma once

#include "driver_kit/status.h"

namespace accel_bpu {
using accel_kit::fail;
using accel_kit::format;
}  // namespace accel_bpu
