// driver.cc - the vart driver: what it is, and its function table and entry point, made by the driver
// kit (driver_kit/driver_table.inc) from the implementations in the other files.
#include "driver_kit/guard.h"
#include "driver_kit/job_wait.h"
#include "entry_points.h"
#include "handles.h"

namespace accel_vart {

constexpr accel_kit::DriverInfo kDriverInfo = {"vart", "Vitis AI runtime (VART/XIR): DPU subgraphs of .xmodel files",
                                               "internal error", "vart: ", nullptr};

#include "driver_kit/driver_table.inc"

}  // namespace accel_vart
