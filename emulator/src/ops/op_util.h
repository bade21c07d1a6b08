// op_util.h - what the ops share: overflow-checked size math, tensor access and the checks every op's
// validate starts with. Validation code may allocate (error strings); run code here never does. The
// math the ops run is in ../math.
#pragma once

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>

#include "dtypes.h"
#include "graph.h"
#include "math/math_util.h"
#include "ops.h"
#include "ops/op_contract.h"

namespace accel_emu {
namespace kern {

// Sizes handed to a BLAS must fit its (32-bit) int.
constexpr int64_t kBlasIntMax = INT_MAX;
// No single scratch area may exceed what one tensor may hold (FORMAT.md: 2^40 bytes).
constexpr uint64_t kMaxScratchBytes = uint64_t(1) << 40;

inline bool mul_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_mul_overflow(a, b, r); }
inline bool add_ok(int64_t a, int64_t b, int64_t* r) { return !__builtin_add_overflow(a, b, r); }

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

// What the common checks expect of a node: the op's contract (op_contract.h, from emulator/op_schema.py), or
// a narrower arity an op's parameters give (logic's not takes one input, rnn's outputs are its mask's).
struct Arity {
    size_t min_in, max_in;     // input count range (optional trailing inputs may also be kAbsent)
    size_t required_in;        // the first `required_in` inputs must be present
    size_t outputs;            // exact output count
};

// Arity, tensor indices, descriptor sanity (ndim, dims >= 1, numel), dtypes and the activation field, as the
// op's contract gives them (op_contract.h; an ActRule::Device op checks its activation itself too:
// check_device_act). On failure sets *err to "<op>: <problem>" and returns false.
bool check_common(const Graph& g, const Node& n, std::string* err);
// The same with the dtypes left to the op's own check (DTypeRule::Any), which names what the op takes.
bool check_common(const Graph& g, const Node& n, DTypeRule dt, std::string* err);
// The same with an arity, dtype rule and activation rule the op narrows from its contract by its parameters
// (Arity above); one looser than the contract (more inputs or outputs, another activation rule) is refused
// as an error in the op's check.
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
// Whether validate can read t's values: a constant, in a model whose constants are loaded.
inline bool constant_known(const Graph& g, const TensorDesc& t) {
    return t.kind == TensorKind::Constant && g.constants != nullptr;
}
// Element i of a constant_known int32 or int64 tensor, as int64 (validate's check of constant indices).
inline int64_t constant_index(const Graph& g, const TensorDesc& t, int64_t i) {
    const uint8_t* raw = g.constants + t.data_offset;
    if (t.dtype == ACCEL_DTYPE_INT64) {
        int64_t v;
        std::memcpy(&v, raw + i * sizeof v, sizeof v);
        return v;
    }
    int32_t v;
    std::memcpy(&v, raw + i * sizeof v, sizeof v);
    return v;
}
// OpDef::scratch of an op that needs none.
inline size_t no_scratch(const Graph&, const Node&) { return 0; }

// True if `x` has `y`'s dtype; else false with "<op>: <what> dtype <x> differs from output dtype <y>".
bool same_dtype(const TensorDesc& x, const TensorDesc& y, const char* op, const char* what, std::string* err);

inline bool same_dims(const TensorDesc& a, const TensorDesc& b) {
    if (a.ndim != b.ndim) return false;
    for (int i = 0; i < a.ndim; ++i)
        if (a.dims[i] != b.dims[i]) return false;
    return true;
}

// y has x's shape; else "<op>: output shape ... differs from input ..." in *err and false.
bool check_same_shape(const TensorDesc& x, const TensorDesc& y, const char* op, std::string* err);

// y's shape is the numpy broadcast of a's and b's; else "<op>: <problem>" in *err and false.
bool check_broadcast(const TensorDesc& a, const TensorDesc& b, const TensorDesc& y, const char* op, std::string* err);

// Window geometry of one spatial axis of conv/pool, all in int64 with overflow checks.
struct Axis { int64_t in, k, stride, pad_lo, pad_hi, dil, out; };
// Computes ax->out (floor mode, or ONNX ceil mode when `ceil` is set). False with a message if a
// parameter is out of range, a product overflows or the output would be empty.
bool window_axis(Axis* ax, bool ceil, const char* op, const char* axis_name, std::string* err);

}  // namespace kern
}  // namespace accel_emu
