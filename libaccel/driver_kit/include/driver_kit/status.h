// status.h - how a driver reports a failure: the message goes to libaccel's per-thread last error
// (through the host API the loader gave the driver) and the status code is returned.
//
// The state (the host API and the message prefix) is the driver's own: every driver compiles the kit
// into its own library.
#pragma once

#include <string>

#include "accel/driver.h"

namespace accel_kit {

// Remembers the loader's host API, and `prefix`, which every fail() message starts with ("vart: ").
void set_host(const accel_host_api* host, const char* prefix);

// Records `message` as the calling thread's last error, as it is, and returns `status`.
accel_status report(accel_status status, const std::string& message);

// Records the driver's prefix + `message` as the calling thread's last error and returns `status`.
accel_status fail(accel_status status, const std::string& message);

// printf-style formatting into a std::string, for messages.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace accel_kit
