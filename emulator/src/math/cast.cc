// cast.cc - see cast.h. One loop per (from, to) pair, in a table built at compile time.
#include "math/cast.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "dtypes.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

// The two dtypes with no C++ arithmetic type of their own, held by their bits.
struct Half { uint16_t bits; };
struct Bool { uint8_t byte; };

ACCEL_INLINE uint32_t bits_of(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

ACCEL_INLINE float float_of(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

// The float16 conversions are written as selects, not branches, so that loops over them vectorize.
ACCEL_INLINE float half_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t mag = h & 0x7fff;                              // exponent and mantissa
    const uint32_t normal = (mag << 13) + ((127 - 15) << 23);     // rebias the exponent
    const uint32_t special = normal + ((127 - 15) << 23);         // inf, NaN: exponent all ones, payload kept
    const uint32_t tiny = bits_of(float(mag) * 0x1p-24f);         // subnormal or zero: exact
    return float_of(sign | (mag >= 0x7c00 ? special : mag >= 0x0400 ? normal : tiny));
}

ACCEL_INLINE uint16_t float_to_half(float f) {
    const uint32_t u = bits_of(f);
    const uint32_t sign = (u >> 16) & 0x8000;
    const uint32_t mag = u & 0x7fffffff;
    // A normal half (>= 2^-14): rebias the exponent, then round the 13 dropped mantissa bits to nearest
    // even; a carry out of the mantissa bumps the exponent, up to inf from 65520 on.
    const uint32_t r = mag - ((127 - 15) << 23);
    const uint32_t normal = (r + 0xfff + ((r >> 13) & 1)) >> 13;
    // A subnormal half or zero counts units of 2^-24: adding 0.5, whose last mantissa bit is worth
    // 2^-24, makes the float unit round |f| to nearest even in those units; the mantissa then holds them.
    const uint32_t tiny = bits_of(float_of(mag) + 0.5f) - bits_of(0.5f);
    const uint32_t nan = 0x7e00 | ((mag >> 13) & 0x3ff);  // quiet, top payload bits kept
    uint32_t h = mag >= 0x38800000 ? normal : tiny;
    h = mag >= 0x47800000 ? 0x7c00 : h;  // >= 2^16, and inf
    h = mag > 0x7f800000 ? nan : h;
    return uint16_t(sign | h);
}

// One element, From -> To, To != From.
template <class To, class From>
ACCEL_INLINE To convert(From x) {
    if constexpr (std::is_same_v<From, Half>) {
        return convert<To>(half_to_float(x.bits));
    } else if constexpr (std::is_same_v<From, Bool>) {
        if constexpr (std::is_same_v<To, Half>) return Half{uint16_t(x.byte ? 0x3c00 : 0)};
        else return To(x.byte ? 1 : 0);
    } else if constexpr (std::is_same_v<To, Bool>) {
        return Bool{uint8_t(x != From(0))};
    } else if constexpr (std::is_same_v<To, Half>) {
        // Integers above 2^24, the first a float may round, are inf as halves either way.
        return Half{float_to_half(static_cast<float>(x))};
    } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
        // Limits as floats: the top one is a power of two, exact; the bottom one, minus 1, rounds to
        // it for 32 and 64 bits, which is still right since every float in between truncates to it.
        // Selects, not branches, so that loops vectorize; NaN fails every comparison and gives 0.
        constexpr float top = 2.f * float(std::numeric_limits<To>::max() / 2 + 1);
        constexpr float bottom = float(std::numeric_limits<To>::min()) - 1.f;
        const float inside = x > bottom && x < top ? float(x) : 0.f;
        To r = static_cast<To>(inside);
        r = x >= top ? std::numeric_limits<To>::max() : r;
        return x <= bottom ? std::numeric_limits<To>::min() : r;
    } else {
        return static_cast<To>(x);  // integer wraps, integer to float rounds, float to float
    }
}

// ACCEL_HOT (math_util.h): an AVX2 clone, and no trapping math, which lets the selects on floats
// above vectorize.
template <class To, class From>
ACCEL_HOT void cast_loop(const void* in, void* out, int64_t n) {
    const From* x = static_cast<const From*>(in);
    To* y = static_cast<To*>(out);
    for (int64_t i = 0; i < n; ++i) y[i] = convert<To>(x[i]);
}

using CastFn = void (*)(const void*, void*, int64_t);

// The C++ type of each dtype code (accel.h), in code order from 1.
template <int Code>
struct Type;
template <> struct Type<ACCEL_DTYPE_FLOAT32> { using T = float; };
template <> struct Type<ACCEL_DTYPE_FLOAT16> { using T = Half; };
template <> struct Type<ACCEL_DTYPE_INT8> { using T = int8_t; };
template <> struct Type<ACCEL_DTYPE_UINT8> { using T = uint8_t; };
template <> struct Type<ACCEL_DTYPE_INT16> { using T = int16_t; };
template <> struct Type<ACCEL_DTYPE_INT32> { using T = int32_t; };
template <> struct Type<ACCEL_DTYPE_INT64> { using T = int64_t; };
template <> struct Type<ACCEL_DTYPE_UINT16> { using T = uint16_t; };
template <> struct Type<ACCEL_DTYPE_UINT32> { using T = uint32_t; };
template <> struct Type<ACCEL_DTYPE_UINT64> { using T = uint64_t; };
template <> struct Type<ACCEL_DTYPE_BOOL> { using T = Bool; };

constexpr int kCodes = ACCEL_DTYPE_BOOL;  // codes 1 .. kCodes

template <int From, int To>
constexpr CastFn entry() {
    if constexpr (From == To) return nullptr;  // a copy: run_cast moves the bytes
    else return cast_loop<typename Type<To>::T, typename Type<From>::T>;
}

template <int From, int... To>
constexpr void fill_row(CastFn* row, std::integer_sequence<int, To...>) {
    ((row[To] = entry<From, To + 1>()), ...);
}

template <int... From>
constexpr void fill_table(CastFn (*table)[kCodes], std::integer_sequence<int, From...>) {
    (fill_row<From + 1>(table[From], std::make_integer_sequence<int, kCodes>()), ...);
}

struct CastTable {
    CastFn fn[kCodes][kCodes] = {};  // [from - 1][to - 1]
    constexpr CastTable() { fill_table(fn, std::make_integer_sequence<int, kCodes>()); }
};

constexpr CastTable kTable;

}  // namespace

void cast_elements(accel_dtype from, accel_dtype to, const void* in, void* out, int64_t n) {
    const CastFn fn = kTable.fn[from - 1][to - 1];
    if (fn) fn(in, out, n);
    else std::memcpy(out, in, static_cast<size_t>(n) * dtype_size(from));
}

}  // namespace accel_emu
