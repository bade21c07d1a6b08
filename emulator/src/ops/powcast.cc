// powcast.cc - ONNX Pow with an integer base or exponent (FORMAT.md op 75, minor 6), as onnxruntime computes
// it: std::pow of the two operands promoted to double, then a static_cast to the base's type. Its float32 by
// float32 form is op 21 (pow, powf).
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "math/broadcast.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

using kern::cat;

using kern::no_scratch;

bool is_pow_dtype(int64_t d) { return d == ACCEL_DTYPE_FLOAT32 || d == ACCEL_DTYPE_INT32 || d == ACCEL_DTYPE_INT64; }

bool validate_powcast(const Graph& g, const Node& n, std::string* err) {
    const char* op = "powcast";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& a = *kern::input(g, n, 0);
    const TensorDesc& b = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!is_pow_dtype(a.dtype) || !is_pow_dtype(b.dtype))
        return kern::fail(
            err, op,
            cat("dtypes ", dtype_name(a.dtype), " ^ ", dtype_name(b.dtype), ": each must be float32, int32 or int64"));
    if (a.dtype == ACCEL_DTYPE_FLOAT32 && b.dtype == ACCEL_DTYPE_FLOAT32)
        return kern::fail(err, op, "float32 ^ float32 is op pow");
    if (!kern::same_dtype(a, y, op, "input 0", err)) return false;
    return kern::check_broadcast(a, b, y, op, err);
}

// v converted as onnxruntime's static_cast<T>(double) runs on x86: float32 rounds to nearest; an integer
// truncates toward zero, and NaN or a value whose truncation is outside T gives T's most negative value (the
// "integer indefinite" of cvttsd2si, which C++ leaves undefined).
template <class T>
inline T from_double(double v) {
    if constexpr (std::is_floating_point_v<T>) {
        return static_cast<T>(v);
    } else {
        constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());  // -2^(bits-1), exact
        if (!(v > lo - 1.0 && v < -lo)) return std::numeric_limits<T>::min();
        return static_cast<T>(v);
    }
}

template <class TA, class TB>
void pow_row(const TA* a, int64_t as, const TB* b, int64_t bs, TA* y, int64_t n) {
    binary_row(a, as, b, bs, y, n,
               [](TA x, TB e) { return from_double<TA>(std::pow(static_cast<double>(x), static_cast<double>(e))); });
}

template <class TA>
void run_base(const Bcast& c, int64_t numel, const KernelArgs& a, int64_t bdt) {
    switch (bdt) {
        case ACCEL_DTYPE_FLOAT32: return binary_rows(c, numel, a.in[0], a.in[1], a.out[0], pow_row<TA, float>);
        case ACCEL_DTYPE_INT32: return binary_rows(c, numel, a.in[0], a.in[1], a.out[0], pow_row<TA, int32_t>);
        default: return binary_rows(c, numel, a.in[0], a.in[1], a.out[0], pow_row<TA, int64_t>);
    }
}

void run_powcast(const KernelArgs& a) {
    const TensorDesc* ins[2] = {&kern::in_desc(a, 0), &kern::in_desc(a, 1)};
    const TensorDesc& yd = kern::out_desc(a, 0);
    const Bcast c = plan_broadcast(ins, 2, yd);
    switch (ins[0]->dtype) {
        case ACCEL_DTYPE_FLOAT32: return run_base<float>(c, yd.numel, a, ins[1]->dtype);
        case ACCEL_DTYPE_INT32: return run_base<int32_t>(c, yd.numel, a, ins[1]->dtype);
        default: return run_base<int64_t>(c, yd.numel, a, ins[1]->dtype);
    }
}

}  // namespace

const OpDef kPowCastDef = {"powcast", validate_powcast, no_scratch, run_powcast, nullptr, nullptr};

}  // namespace accel_emu
