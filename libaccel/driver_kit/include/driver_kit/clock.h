// clock.h - the drivers' clock (job timings, deadlines) and their bound on timeouts.
#pragma once

#include <chrono>
#include <cstdint>

namespace accel_kit {

// Timeouts longer than this (about 31 years) mean "never": they would overflow the clocks.
constexpr int64_t kForeverUs = 1000000000000000LL;

inline uint64_t now_ns() {
    return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

}  // namespace accel_kit
