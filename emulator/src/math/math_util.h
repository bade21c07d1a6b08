// math_util.h - what the math routines share: the attributes of hot loops (AVX-512 and AVX2+FMA clones
// picked at load time, no trapping math, always-inline helpers, restrict) and the tap ranges of conv/pool
// windows.
// Nothing here knows about graphs or nodes.
#pragma once

#include <cstdint>

// Hot loops get AVX-512 and AVX2+FMA clones picked at load time (the build targets baseline x86-64; most
// machines we run on have AVX2, many AVX-512, which halves the time of the elementwise maps such as SiLU
// in a YOLO-style detector): gcc on glibc x86-64 only (clones need ifunc). With gcc they are also compiled
// without trapping math: nothing here reads FP exception flags, and with them gcc refuses to if-convert
// selects such as x >= 0 ? x : a * x, which keeps the loop scalar. (clang does not trap by default.)
// A function with clones must not have external linkage (its ifunc symbol would be exported from the
// driver): math routines called from other files are plain functions in front of their clones.
#if defined(__GNUC__) && !defined(__clang__)
#define ACCEL_NO_TRAP __attribute__((optimize("no-trapping-math")))
#if defined(__x86_64__) && defined(__GLIBC__) && __GNUC__ >= 11 && !defined(__SANITIZE_THREAD__) && \
    !defined(ACCEL_NO_TARGET_CLONES)
#define ACCEL_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef ACCEL_NO_TRAP
#define ACCEL_NO_TRAP
#endif
#ifndef ACCEL_CLONES
#define ACCEL_CLONES
#endif
#define ACCEL_HOT ACCEL_NO_TRAP ACCEL_CLONES
// Helpers called from ACCEL_HOT code: gcc will not inline across differing FP options otherwise.
#define ACCEL_INLINE __attribute__((always_inline)) inline

#if defined(__GNUC__)
#define ACCEL_RESTRICT __restrict__
#else
#define ACCEL_RESTRICT
#endif

namespace accel_emu {
namespace kern {

// Product of dims[lo, hi); the reader bounds every tensor, so it cannot overflow for tensor dims.
inline int64_t prod(const int64_t* dims, int lo, int hi) {
    int64_t p = 1;
    for (int i = lo; i < hi; ++i) p *= dims[i];
    return p;
}

// Output positions o in [0, out) whose input position o*s + off lies in [0, in): [*lo, *hi), lo <= hi.
// Callers' geometry was validated, so o*s + off stays within int64 for every o < out.
ACCEL_INLINE void tap_range(int64_t off, int64_t s, int64_t in, int64_t out, int64_t* lo, int64_t* hi) {
    const int64_t l = off >= 0 ? 0 : (-off) / s + ((-off) % s != 0);
    const int64_t h = in - 1 - off < 0 ? 0 : (in - 1 - off) / s + 1;
    *lo = l < out ? l : out;
    *hi = h < out ? h : out;
    if (*hi < *lo) *hi = *lo;
}

// tap_range for kernel columns kj = 0, 1, ... (input offset kj*dil - pad), computed once per plane rather
// than once per output row: the integer divisions cost more than a short row of work.
struct TapRanges {
    static constexpr int64_t kCached = 64;
    int64_t lo[kCached], hi[kCached];
    int64_t dil, pad, s, in, out;
    ACCEL_INLINE void init(int64_t k, int64_t dil_, int64_t pad_, int64_t s_, int64_t in_, int64_t out_) {
        dil = dil_, pad = pad_, s = s_, in = in_, out = out_;
        for (int64_t kj = 0; kj < k && kj < kCached; ++kj) tap_range(kj * dil - pad, s, in, out, &lo[kj], &hi[kj]);
    }
    ACCEL_INLINE void get(int64_t kj, int64_t* l, int64_t* h) const {
        if (kj < kCached) *l = lo[kj], *h = hi[kj];
        else tap_range(kj * dil - pad, s, in, out, l, h);
    }
};

// The taps [*first, *last) of a k-tap window (dilation dil, padding pad, stride s) that fall inside an
// input of `in` for at least one of `out` outputs: a window far larger than its input (a legal but odd
// model) then costs what its input costs, not what its size says.
ACCEL_INLINE void useful_taps(int64_t k, int64_t dil, int64_t pad, int64_t s, int64_t in, int64_t out, int64_t* first,
                              int64_t* last) {
    const int64_t lo = pad - (out - 1) * s;  // tap * dil must be >= lo and <= in - 1 + pad
    int64_t f = lo <= 0 ? 0 : (lo + dil - 1) / dil;
    int64_t l = (in - 1 + pad) < 0 ? 0 : (in - 1 + pad) / dil + 1;
    *first = f;
    *last = l < k ? l : k;
}

}  // namespace kern
}  // namespace accel_emu
