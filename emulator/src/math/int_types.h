// int_types.h - the element types the computing kernels dispatch on, and integer arithmetic that wraps (two's
// complement) rather than overflowing, which C++ leaves undefined for signed types.
#pragma once

#include <cstdint>
#include <type_traits>

#include "accel/accel.h"

namespace accel_emu {

// Calls f(T{}) with T the C++ type of an integer dtype (int8 .. uint64); nothing for any other.
template <class F>
void dispatch_integer(int64_t dtype, F&& f) {
    switch (dtype) {
        case ACCEL_DTYPE_INT8: return f(int8_t{});
        case ACCEL_DTYPE_UINT8: return f(uint8_t{});
        case ACCEL_DTYPE_INT16: return f(int16_t{});
        case ACCEL_DTYPE_UINT16: return f(uint16_t{});
        case ACCEL_DTYPE_INT32: return f(int32_t{});
        case ACCEL_DTYPE_UINT32: return f(uint32_t{});
        case ACCEL_DTYPE_INT64: return f(int64_t{});
        case ACCEL_DTYPE_UINT64: return f(uint64_t{});
        default: return;
    }
}

// As dispatch_integer, and float for float32.
template <class F>
void dispatch_numeric(int64_t dtype, F&& f) {
    if (dtype == ACCEL_DTYPE_FLOAT32) return f(float{});
    dispatch_integer(dtype, static_cast<F&&>(f));
}

// dtype is one dispatch_integer (or dispatch_numeric) takes.
inline bool is_integer_dtype(int64_t dtype) {
    bool yes = false;
    dispatch_integer(dtype, [&](auto) { yes = true; });
    return yes;
}
inline bool is_numeric_dtype(int64_t dtype) { return dtype == ACCEL_DTYPE_FLOAT32 || is_integer_dtype(dtype); }

// T's arithmetic done in an unsigned type at least as wide as unsigned int (so that no promotion to a signed
// int can overflow), then narrowed: two's complement wrapping.
template <typename T>
using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

// a + b, integers wrapping; floats as they are.
template <typename T>
inline T wrapping_add(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(static_cast<Wide<T>>(a) + static_cast<Wide<T>>(b));
    } else {
        return a + b;
    }
}

// a * b, integers wrapping; floats as they are.
template <typename T>
inline T wrapping_mul(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        return static_cast<T>(static_cast<Wide<T>>(a) * static_cast<Wide<T>>(b));
    } else {
        return a * b;
    }
}

}  // namespace accel_emu
