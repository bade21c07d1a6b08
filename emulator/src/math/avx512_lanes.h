// avx512_lanes.h - 16-lane masks for the AVX-512 float kernels' row edges (include only inside
// `#if defined(__x86_64__) && defined(__GNUC__)`).
#pragma once

#include <cstdint>

#include "math/x86_intrinsics.h"

namespace accel_emu {
namespace lanes16 {

// Lanes i < n set (n may exceed 16 or be negative).
inline __mmask16 first(int64_t n) {
    return n >= 16 ? static_cast<__mmask16>(0xFFFF) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

// Lanes i whose index lo + i lies in [0, hi).
inline __mmask16 inside(int64_t lo, int64_t hi) {
    const __mmask16 below = first(hi - lo);
    const __mmask16 before = lo >= 0 ? 0 : first(-lo);
    return static_cast<__mmask16>(below & ~before);
}

}  // namespace lanes16
}  // namespace accel_emu
