// kernel_util.h - shared helpers for the kernels: overflow-checked size math, tensor access and the
// checks every op's validate starts with. Validation code may allocate (error strings); run code here
// never does.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "dtypes.h"
#include "graph.h"
#include "ops.h"

// Hot loops get an AVX2+FMA clone picked at load time (the build targets baseline x86-64, and most
// machines we run on have AVX2): gcc on glibc x86-64 only (clones need ifunc). With gcc they are also compiled
// without trapping math: nothing here reads FP exception flags, and with them gcc refuses to if-convert
// selects such as x >= 0 ? x : a * x, which keeps the loop scalar. (clang does not trap by default.)
#if defined(__GNUC__) && !defined(__clang__)
#define ACCEL_NO_TRAP __attribute__((optimize("no-trapping-math")))
#if defined(__x86_64__) && defined(__GLIBC__) && __GNUC__ >= 11 && !defined(__SANITIZE_THREAD__) && \
    !defined(ACCEL_NO_TARGET_CLONES)
#define ACCEL_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
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

// Sizes handed to a BLAS must fit its (32-bit) int.
constexpr int64_t kBlasIntMax = INT_MAX;
// No single scratch area may exceed what one tensor may hold (FORMAT.md: 2^40 bytes).
constexpr uint64_t kMaxScratchBytes = uint64_t(1) << 40;

inline bool mul_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_mul_overflow(a, b, r); }
inline bool add_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_add_overflow(a, b, r); }

// Product of dims[lo, hi); the reader bounds every tensor, so it cannot overflow for tensor dims.
inline int64_t prod(const int64_t* dims, int lo, int hi) {
    int64_t p = 1;
    for (int i = lo; i < hi; ++i) p *= dims[i];
    return p;
}

template <typename... Ts>
std::string cat(Ts&&... parts) {
    std::ostringstream os;
    (os << ... << std::forward<Ts>(parts));
    return os.str();
}

std::string dims_str(const TensorDesc& t);  // "[1,3,224,224]"

// Run-time accessors (no checks: validate has done them).
inline const TensorDesc& in_desc(const KernelArgs& a, size_t i) { return a.graph->tensors[a.node->inputs[i]]; }
inline const TensorDesc& out_desc(const KernelArgs& a, size_t i) { return a.graph->tensors[a.node->outputs[i]]; }
inline const float* in_f(const KernelArgs& a, size_t i) { return static_cast<const float*>(a.in[i]); }
inline float* out_f(const KernelArgs& a, size_t i) { return static_cast<float*>(a.out[i]); }

// What the common checks expect of a node.
struct Arity {
    size_t min_in, max_in;     // input count range (optional trailing inputs may also be kAbsent)
    size_t required_in;        // the first `required_in` inputs must be present
    size_t outputs;            // exact output count
};
enum class DTypeRule { Float32, Any };
enum class ActRule { MustBeNone, Fused, Function };

// Arity, tensor indices, descriptor sanity (ndim, dims >= 1, numel), dtypes and the activation field.
// On failure sets *err to "<op>: <problem>" and returns false.
bool check_common(const Graph& g, const Node& n, const char* op, const Arity& ar, DTypeRule dt, ActRule act,
                  std::string* err);

inline bool fail(std::string* err, const char* op, const std::string& msg) {
    if (err) *err = std::string(op) + ": " + msg;
    return false;
}

inline const TensorDesc* input(const Graph& g, const Node& n, size_t i) {
    if (i >= n.inputs.size() || n.inputs[i] == kAbsent) return nullptr;
    return &g.tensors[n.inputs[i]];
}
inline const TensorDesc& output(const Graph& g, const Node& n, size_t i) { return g.tensors[n.outputs[i]]; }

inline bool same_dims(const TensorDesc& a, const TensorDesc& b) {
    if (a.ndim != b.ndim) return false;
    for (int i = 0; i < a.ndim; ++i)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

// Window geometry of one spatial axis of conv/pool, all in int64 with overflow checks.
struct Axis { int64_t in, k, stride, pad_lo, pad_hi, dil, out; };
// Computes ax->out (floor mode, or ONNX ceil mode when `ceil` is set). False with a message if a
// parameter is out of range, a product overflows or the output would be empty.
bool window_axis(Axis* ax, bool ceil, const char* op, const char* axis_name, std::string* err);

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

// y[r*ld + c] = act(y[r*ld + c] + bias[r]) for r < rows, c < cols (bias may be null).
void bias_act_rows(float* y, int64_t rows, int64_t cols, int64_t ld, const float* bias, Act act, float alpha,
                   float beta);

}  // namespace kern
}  // namespace accel_emu
