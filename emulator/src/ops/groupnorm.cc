// groupnorm.cc - group normalization (FORMAT.md op 50): each group of consecutive channels of each batch
// item is normalized by its mean and biased variance, then scaled and shifted per channel
// (GroupNormalization; InstanceNormalization is one channel per group).
#include <cmath>

#include "math/activation.h"
#include "math/groupnorm.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "groupnorm";

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::check_same_shape(x, y, kOp, err)) return false;
    if (x.ndim < 2) return kern::fail(err, kOp, cat("input ", kern::dims_str(x), " has rank < 2"));
    const GroupNormParams p = GroupNormParams::of(n);
    const int64_t c = x.dims[1];
    if (p.groups < 1 || c % p.groups != 0)
        return kern::fail(err, kOp, cat("groups ", p.groups, " does not divide the ", c, " channels"));
    if (!(p.epsilon > 0.f) || !std::isfinite(p.epsilon))
        return kern::fail(err, kOp, cat("epsilon ", p.epsilon, " is not > 0"));
    const char* names[] = {"", "scale", "bias"};
    for (size_t i = 1; i < 3; ++i) {
        const TensorDesc& t = *kern::input(g, n, i);
        if (t.ndim != 1 || t.dims[0] != c)
            return kern::fail(err, kOp, cat(names[i], " shape ", kern::dims_str(t), " is not [", c, "]"));
    }
    return true;
}

size_t scratch_bytes(const Graph&, const Node&) { return 0; }

void run(const KernelArgs& a) {
    const Node& n = *a.node;
    const TensorDesc& xd = kern::in_desc(a, 0);
    const GroupNormParams p = GroupNormParams::of(n);
    const int64_t batch = xd.dims[0], c = xd.dims[1];
    float* y = kern::out_f(a, 0);
    const int64_t rows = batch * p.groups, n_row = xd.numel / (rows > 0 ? rows : 1);
    // The groups in parts across the core's threads, each normalized whole (and activated) by one worker.
    a.par->for_ranges(rows, split_parts(rows, xd.numel, kMinElemsPerPart), [&](int64_t r0, int64_t r1, int) {
        groupnorm(kern::in_f(a, 0), kern::in_f(a, 1), kern::in_f(a, 2), y, batch, c, p.groups, xd.numel / (batch * c),
                  p.epsilon, r0, r1);
        apply_activation(n.act, n.act_alpha, n.act_beta, y + r0 * n_row, static_cast<size_t>((r1 - r0) * n_row));
    });
}

}  // namespace

const OpDef kGroupNormDef = {kOp, validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
