// reduce.cc - reductions over any set of axes (FORMAT.md op 18): the checks, the scratch log_sum_exp
// needs, and a run through math/reduce.cc.
#include "math/reduce.h"
#include "math/activation.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "reduce";

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    const ReduceParams p = ReduceParams::of(n);
    const int64_t fn = static_cast<int64_t>(p.function), mask = p.axes_mask;
    if (!is_known(p.function)) return kern::fail(err, kOp, cat("function ", fn, " is not 1..9"));
    if (mask <= 0 || (mask >> x.ndim) != 0)
        return kern::fail(err, kOp, cat("axes mask ", mask, " is empty or names an axis past rank ", x.ndim));
    if (y.ndim != x.ndim) return kern::fail(err, kOp, cat("output rank ", y.ndim, " is not the input's ", x.ndim));
    for (int i = 0; i < x.ndim; ++i) {
        const int64_t want = (mask >> i) & 1 ? 1 : x.dims[i];
        if (y.dims[i] != want)
            return kern::fail(err, kOp,
                              cat("output shape ", kern::dims_str(y), " is not ", kern::dims_str(x),
                                  " with the axes of mask ", mask, " reduced to 1"));
    }
    return true;
}

// log_sum_exp keeps each output's max in scratch.
size_t scratch_bytes(const Graph& g, const Node& n) {
    if (ReduceParams::of(n).function != ReduceFn::LogSumExp) return 0;
    return static_cast<size_t>(kern::output(g, n, 0).numel) * sizeof(float);
}

void run(const KernelArgs& a) {
    const Node& n = *a.node;
    const TensorDesc& xd = kern::in_desc(a, 0);
    const ReduceParams p = ReduceParams::of(n);
    const ReduceRuns r = reduce_runs(xd.dims, xd.ndim, p.axes_mask);
    float* y = kern::out_f(a, 0);
    const int64_t ny = kern::out_desc(a, 0).numel;
    reduce(p.function, r, kern::in_f(a, 0), y, ny, static_cast<float*>(a.scratch), *a.par);
    apply_activation(n.act, n.act_alpha, n.act_beta, y, static_cast<size_t>(ny));
}

}  // namespace

const OpDef kReduceDef = {"reduce", validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
