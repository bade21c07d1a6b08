// logic.cc - compare, logic and where (FORMAT.md ops 41-43): the shape, dtype and parameter checks, and a run
// through the one broadcast implementation (math/broadcast.h, kernels in math/logic.cc).
#include "math/logic.h"
#include "math/broadcast.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

using kern::cat;

using kern::no_scratch;

bool is_bool(const TensorDesc& t, const char* op, const char* what, std::string* err) {
    if (t.dtype == ACCEL_DTYPE_BOOL) return true;
    return kern::fail(err, op, cat(what, " dtype ", dtype_name(t.dtype), " is not bool"));
}

// ---- compare ----------------------------------------------------------------------------------------

bool validate_compare(const Graph& g, const Node& n, std::string* err) {
    const char* op = "compare";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& a = *kern::input(g, n, 0);
    const TensorDesc& b = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const CompareFn fn = CompareParams::of(n).function;
    if (!is_known(fn)) return kern::fail(err, op, cat("unknown function ", static_cast<int64_t>(fn)));
    if (a.dtype != b.dtype)
        return kern::fail(err, op, cat("input dtypes ", dtype_name(a.dtype), " and ", dtype_name(b.dtype), " differ"));
    if (a.dtype == ACCEL_DTYPE_FLOAT16) return kern::fail(err, op, "float16 inputs are not supported");
    if (!is_bool(y, op, "output", err)) return false;
    return kern::check_broadcast(a, b, y, op, err);
}

void run_compare(const KernelArgs& a) {
    compare_broadcast(CompareParams::of(*a.node).function, kern::in_desc(a, 0), kern::in_desc(a, 1),
                      kern::out_desc(a, 0), a.in[0], a.in[1], static_cast<uint8_t*>(a.out[0]));
}

// ---- logic ------------------------------------------------------------------------------------------

bool validate_logic(const Graph& g, const Node& n, std::string* err) {
    const char* op = "logic";
    const LogicFn fn = LogicParams::of(n).function;
    if (!is_known(fn)) return kern::fail(err, op, cat("unknown function ", static_cast<int64_t>(fn)));
    // Narrower than the contract (one or two inputs): the function fixes the count, not one input, the others two.
    const size_t nin = fn == LogicFn::Not ? 1 : 2;
    if (!kern::check_common(g, n, op, {nin, nin, nin, 1}, kern::DTypeRule::Any, kern::ActRule::MustBeNone, err))
        return false;
    const TensorDesc& y = kern::output(g, n, 0);
    for (size_t i = 0; i < nin; ++i)
        if (!is_bool(*kern::input(g, n, i), op, i == 0 ? "input 0" : "input 1", err)) return false;
    if (!is_bool(y, op, "output", err)) return false;
    if (fn == LogicFn::Not) return kern::check_same_shape(*kern::input(g, n, 0), y, op, err);
    return kern::check_broadcast(*kern::input(g, n, 0), *kern::input(g, n, 1), y, op, err);
}

void run_logic(const KernelArgs& a) {
    const LogicFn fn = LogicParams::of(*a.node).function;
    const uint8_t* x = static_cast<const uint8_t*>(a.in[0]);
    uint8_t* y = static_cast<uint8_t*>(a.out[0]);
    if (fn == LogicFn::Not) {
        logic_not(x, y, kern::out_desc(a, 0).numel);
        return;
    }
    logic_broadcast(fn, kern::in_desc(a, 0), kern::in_desc(a, 1), kern::out_desc(a, 0), x,
                    static_cast<const uint8_t*>(a.in[1]), y);
}

// ---- where ------------------------------------------------------------------------------------------

bool validate_where(const Graph& g, const Node& n, std::string* err) {
    const char* op = "where";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc* in[3] = {kern::input(g, n, 0), kern::input(g, n, 1), kern::input(g, n, 2)};
    const TensorDesc& z = kern::output(g, n, 0);
    if (!is_bool(*in[0], op, "condition (input 0)", err)) return false;
    if (!kern::same_dtype(*in[1], z, op, "input 1", err) || !kern::same_dtype(*in[2], z, op, "input 2", err))
        return false;
    int r = 0;
    for (const TensorDesc* t : in) r = t->ndim > r ? t->ndim : r;
    const auto shapes = [&] {
        return cat(kern::dims_str(*in[0]), ", ", kern::dims_str(*in[1]), " and ", kern::dims_str(*in[2]));
    };
    if (z.ndim != r) return kern::fail(err, op, cat("output rank ", z.ndim, " is not ", r, " (inputs ", shapes(), ")"));
    for (int i = 0; i < r; ++i) {
        int64_t d = 1;
        for (const TensorDesc* t : in) {
            const int64_t e = broadcast_dim(*t, r, i);
            if (e != 1 && d != 1 && e != d)
                return kern::fail(err, op, cat("shapes ", shapes(), " do not broadcast (dim ", i, ")"));
            d = e > d ? e : d;
        }
        if (z.dims[i] != d)
            return kern::fail(err, op, cat("output shape ", kern::dims_str(z), " is not the broadcast of ", shapes()));
    }
    return true;
}

void run_where(const KernelArgs& a) {
    const TensorDesc& zd = kern::out_desc(a, 0);
    where_broadcast(kern::in_desc(a, 0), kern::in_desc(a, 1), kern::in_desc(a, 2), zd, dtype_size(zd.dtype),
                    static_cast<const uint8_t*>(a.in[0]), a.in[1], a.in[2], a.out[0]);
}

}  // namespace

const OpDef kCompareDef = {"compare", validate_compare, no_scratch, run_compare, nullptr, nullptr};
const OpDef kLogicDef = {"logic", validate_logic, no_scratch, run_logic, nullptr, nullptr};
const OpDef kWhereDef = {"where", validate_where, no_scratch, run_where, nullptr, nullptr};

}  // namespace accel_emu
