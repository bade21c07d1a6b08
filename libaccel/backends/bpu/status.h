// status.h - how the bpu driver reports a failure: the message goes to libaccel's per-thread last
// error (through the host API the loader gave the driver) and the status code is returned.
#pragma once

#include <string>

#include "accel/driver.h"

namespace accel_bpu {

void set_host(const accel_host_api* host);

// Records `message` as the calling thread's last error and returns `status`.
accel_status fail(accel_status status, const std::string& message);

// printf-style formatting into a std::string, for messages.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace accel_bpu
