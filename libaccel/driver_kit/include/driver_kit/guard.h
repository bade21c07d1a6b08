// guard.h - what the kit's table (driver_table.inc) needs to know of a driver, and the guards it runs
// every implementation in, so that no C++ exception ever crosses the C ABI.
#pragma once

#include <cstdio>
#include <exception>
#include <new>

#include "accel/driver.h"
#include "driver_kit/status.h"

namespace accel_kit {

struct DriverInfo {
    const char* scheme;          // the URI scheme ("emu"); also names the driver in stderr reports
    const char* description;     // static
    const char* internal_error;  // what a message calls an exception that escaped an implementation
    const char* message_prefix;  // what every fail() message starts with ("" or "vart: ")
    accel_status (*on_load)();   // run once the loader's ABI is accepted; nullptr: nothing to do
};

template <typename Body>
accel_status guarded(const DriverInfo& driver, const char* fn, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(ACCEL_ERR_OUT_OF_MEMORY, format("%s: out of host memory", fn));
    } catch (const std::exception& e) {
        return fail(ACCEL_ERR_INTERNAL, format("%s: %s: %s", fn, driver.internal_error, e.what()));
    } catch (...) {
        return fail(ACCEL_ERR_INTERNAL, format("%s: %s", fn, driver.internal_error));
    }
}

// retain/release return nothing: a failure there (none is expected) is reported on stderr.
template <typename Body>
void guarded_void(const DriverInfo& driver, const char* fn, Body&& body) noexcept {
    try {
        body();
    } catch (...) {
        fprintf(stderr, "accel %s: internal error in %s\n", driver.scheme, fn);
    }
}

// The driver's on_load, if any; ACCEL_ERR_INTERNAL if it throws.
inline accel_status run_on_load(const DriverInfo& driver) noexcept {
    if (!driver.on_load) return ACCEL_OK;
    try {
        return driver.on_load();
    } catch (...) {
        return ACCEL_ERR_INTERNAL;
    }
}

}  // namespace accel_kit
