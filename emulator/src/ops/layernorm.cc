// layernorm.cc - layer normalization (FORMAT.md op 24): each row of X flattened to [outer, inner] at
// the axis is normalized by its mean and biased variance, then scaled by S and shifted by the optional B.
// Its arithmetic parameter says how that rounds: centered (two passes over the row, which is in cache: no
// cancellation from a sum of squares), or onnxruntime's kernel bit for bit (math/layernorm_ort.h).
#include <cmath>

#include "math/activation.h"
#include "math/layernorm.h"
#include "math/layernorm_ort.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "layernorm";

// The outputs mask: 0 (older files) is Y alone; else Y, then Mean and InvStdDev as its bits 1 and 2 say, one
// float per row each, shaped X.dims[:axis] followed by 1s (as onnxruntime's), computed by the onnxruntime rule.
bool check_outputs(const Graph& g, const Node& n, const TensorDesc& x, const LayerNormParams& p, std::string* err) {
    using kern::cat;
    const int64_t mask = p.outputs == 0 ? 1 : p.outputs;
    if (mask < 1 || mask > 7 || !(mask & 1))
        return kern::fail(err, kOp, cat("outputs mask ", p.outputs, " is not 0 or an odd 1..7 (Y is always output)"));
    const size_t count = 1 + ((mask >> 1) & 1) + ((mask >> 2) & 1);
    if (n.outputs.size() != count)
        return kern::fail(
            err, kOp, cat("has ", n.outputs.size(), " outputs where the outputs mask ", p.outputs, " names ", count));
    if (count > 1 && p.arithmetic != LayerNormArithmetic::Onnxruntime)
        return kern::fail(err, kOp, "outputs Mean and InvStdDev only with arithmetic 1 (onnxruntime)");
    for (size_t i = 1; i < count; ++i) {
        const TensorDesc& s = kern::output(g, n, i);
        bool ok = s.ndim == x.ndim;
        for (int d = 0; ok && d < s.ndim; ++d) ok = s.dims[d] == (d < p.axis ? x.dims[d] : 1);
        if (!ok)
            return kern::fail(err, kOp,
                              cat("statistics output shape ", kern::dims_str(s), " is not ", kern::dims_str(x),
                                  " up to axis ", p.axis, " then 1s"));
    }
    return true;
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::check_same_shape(x, y, kOp, err)) return false;
    const LayerNormParams params = LayerNormParams::of(n);
    const int64_t axis = params.axis;
    if (axis < 0 || axis >= x.ndim) return kern::fail(err, kOp, cat("axis ", axis, " outside 0..", x.ndim - 1));
    const float eps = params.epsilon;
    if (!(eps > 0.f) || !std::isfinite(eps)) return kern::fail(err, kOp, cat("epsilon ", eps, " is not > 0"));
    if (!is_known(params.arithmetic))
        return kern::fail(
            err, kOp,
            cat("arithmetic ", static_cast<int64_t>(params.arithmetic), " is not 0 (centered) or 1 (onnxruntime)"));
    if (!check_outputs(g, n, x, params, err)) return false;
    const char* names[] = {"", "scale", "bias"};
    for (size_t i = 1; i < n.inputs.size(); ++i) {
        const TensorDesc* p = kern::input(g, n, i);
        if (p == nullptr) continue;
        bool ok = p->ndim == x.ndim - axis;
        for (int d = 0; ok && d < p->ndim; ++d) ok = p->dims[d] == x.dims[axis + d];
        if (!ok)
            return kern::fail(err, kOp,
                              cat(names[i], " shape ", kern::dims_str(*p), " is not the normalized dims of ",
                                  kern::dims_str(x), " from axis ", axis));
    }
    return true;
}

size_t scratch_bytes(const Graph&, const Node&) { return 0; }

void run(const KernelArgs& a) {
    const Node& n = *a.node;
    const TensorDesc& xd = kern::in_desc(a, 0);
    const LayerNormParams p = LayerNormParams::of(n);
    const int axis = static_cast<int>(p.axis);
    const int64_t inner = kern::prod(xd.dims, axis, xd.ndim);
    const float* bias = n.inputs.size() > 2 ? kern::in_f(a, 2) : nullptr;  // nullptr also when absent
    float* y = kern::out_f(a, 0);
    float* stats[2] = {nullptr, nullptr};  // Mean, InvStdDev, where the outputs mask names them (ort rule)
    if (p.arithmetic == LayerNormArithmetic::Onnxruntime) {
        size_t next = 1;
        for (int k = 0; k < 2; ++k)
            if (p.outputs & (int64_t(2) << k)) stats[k] = kern::out_f(a, next++);
    }
    // Rows across the core's threads (each row's arithmetic is its own: any split gives the same bits).
    const int64_t rows = xd.numel / inner;
    const float *x = kern::in_f(a, 0), *scale = kern::in_f(a, 1);
    a.par->for_ranges(rows, split_parts(rows, xd.numel, kMinElemsPerPart), [&](int64_t r0, int64_t r1, int) {
        float* yr = y + r0 * inner;
        if (p.arithmetic == LayerNormArithmetic::Onnxruntime)
            layernorm_rows_ort(x + r0 * inner, scale, bias, yr, stats[0] ? stats[0] + r0 : nullptr,
                               stats[1] ? stats[1] + r0 : nullptr, r1 - r0, inner, p.epsilon);
        else layernorm_rows(x + r0 * inner, scale, bias, yr, r1 - r0, inner, p.epsilon);
        apply_activation(n.act, n.act_alpha, n.act_beta, yr, static_cast<size_t>((r1 - r0) * inner));
    });
}

}  // namespace

const OpDef kLayerNormDef = {"layernorm", validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
