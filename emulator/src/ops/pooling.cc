// pooling.cc - maxpool, avgpool (FORMAT.md ops 9, 10) and globalavgpool (op 11): the checks, the window
// geometry, and a run over the planes, each pooled by math/pool.cc.
#include "math/pool.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

using kern::Axis;

PoolGeom geom(const Graph& g, const Node& n) {
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    return {x.dims[0], x.dims[1], x.dims[2], x.dims[3], n.ints[1], n.ints[2],  n.ints[3], n.ints[4],
            n.ints[5], n.ints[6], n.ints[7], n.ints[8], n.ints[9], n.ints[10], y.dims[2], y.dims[3]};
}

bool validate_pool(const char* op, bool avg, const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, op, {1, 1, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::MustBeNone, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.ndim != 4) return fail(err, op, cat("input rank ", x.ndim, " is not 4 (NCHW)"));
    if (y.ndim != 4) return fail(err, op, cat("output rank ", y.ndim, " is not 4"));
    if (n.ints[11] != 0 && n.ints[11] != 1) return fail(err, op, cat("ceil_mode ", n.ints[11], " is not 0 or 1"));
    if (avg) {
        if (n.ints[12] != 0 && n.ints[12] != 1)
            return fail(err, op, cat("count_include_pad ", n.ints[12], " is not 0 or 1"));
        if (n.ints[9] != 1 || n.ints[10] != 1)
            return fail(err, op, cat("dilations ", n.ints[9], "x", n.ints[10], " are not 1x1"));
    }
    Axis ah{x.dims[2], n.ints[1], n.ints[3], n.ints[5], n.ints[7], n.ints[9], 0};
    Axis aw{x.dims[3], n.ints[2], n.ints[4], n.ints[6], n.ints[8], n.ints[10], 0};
    const bool ceil = n.ints[11] != 0;
    if (!kern::window_axis(&ah, ceil, op, "h", err) || !kern::window_axis(&aw, ceil, op, "w", err)) return false;
    if (y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1] || y.dims[2] != ah.out || y.dims[3] != aw.out)
        return fail(err, op,
                    cat("output shape ", kern::dims_str(y), " should be [", x.dims[0], ",", x.dims[1], ",", ah.out, ",",
                        aw.out, "]"));
    return true;
}

bool validate_max(const Graph& g, const Node& n, std::string* err) {
    return validate_pool("maxpool", false, g, n, err);
}
bool validate_avg(const Graph& g, const Node& n, std::string* err) { return validate_pool("avgpool", true, g, n, err); }

size_t no_scratch(const Graph&, const Node&) { return 0; }

void run_max(const KernelArgs& a) {
    const PoolGeom q = geom(*a.graph, *a.node);
    const float* X = kern::in_f(a, 0);
    float* Y = kern::out_f(a, 0);
    for (int64_t p = 0; p < q.N * q.C; ++p) max_pool_plane(q, X + p * q.H * q.W, Y + p * q.OH * q.OW);
}

void run_avg(const KernelArgs& a) {
    const PoolGeom q = geom(*a.graph, *a.node);
    const bool include_pad = a.node->ints[12] != 0;
    const float* X = kern::in_f(a, 0);
    float* Y = kern::out_f(a, 0);
    for (int64_t p = 0; p < q.N * q.C; ++p) avg_pool_plane(q, include_pad, X + p * q.H * q.W, Y + p * q.OH * q.OW);
}

bool validate_global(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = "globalavgpool";
    if (!kern::check_common(g, n, op, {1, 1, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::MustBeNone, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.ndim < 2) return kern::fail(err, op, cat("input rank ", x.ndim, " is below 2"));
    bool ok = y.ndim == x.ndim && y.dims[0] == x.dims[0] && y.dims[1] == x.dims[1];
    for (int i = 2; ok && i < y.ndim; ++i) ok = y.dims[i] == 1;
    if (!ok)
        return kern::fail(err, op,
                          cat("output shape ", kern::dims_str(y), " should be [", x.dims[0], ",", x.dims[1],
                              ", 1...] of rank ", x.ndim));
    return true;
}

void run_global(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const int64_t planes = xd.dims[0] * xd.dims[1];
    const int64_t n = xd.numel / planes;
    global_avg_pool(kern::in_f(a, 0), kern::out_f(a, 0), planes, n);
}

}  // namespace

const OpDef kMaxPoolDef = {"maxpool", validate_max, no_scratch, run_max, nullptr, nullptr};
const OpDef kAvgPoolDef = {"avgpool", validate_avg, no_scratch, run_avg, nullptr, nullptr};
const OpDef kGlobalAvgPoolDef = {"globalavgpool", validate_global, no_scratch, run_global, nullptr, nullptr};

}  // namespace accel_emu
