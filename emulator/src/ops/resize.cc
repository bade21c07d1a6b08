// resize.cc - nearest and bilinear resize of the H and W axes of NCHW (FORMAT.md op 17): the checks,
// the per-axis coordinate parameters, and a run through math/resize.cc.
#include <cmath>

#include "math/resize.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "resize";

ResizeGeom geom(const Graph& g, const Node& n) {
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    ResizeGeom q;
    q.planes = x.dims[0] * x.dims[1];
    q.H = x.dims[2], q.W = x.dims[3], q.OH = y.dims[2], q.OW = y.dims[3];
    const ResizeParams p = ResizeParams::of(n);
    q.linear = p.mode == ResizeMode::Linear;
    q.ph = {p.coord_transform, p.nearest_rounding, p.scale_h, q.H, q.OH};
    q.pw = {p.coord_transform, p.nearest_rounding, p.scale_w, q.W, q.OW};
    return q;
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.ndim != 4) return fail(err, kOp, cat("input rank ", x.ndim, " is not 4 (NCHW)"));
    if (y.ndim != 4) return fail(err, kOp, cat("output rank ", y.ndim, " is not 4"));
    if (y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1])
        return fail(err, kOp, cat("output shape ", kern::dims_str(y), " resizes N or C of input ", kern::dims_str(x)));
    const ResizeParams p = ResizeParams::of(n);
    const int64_t mode = static_cast<int64_t>(p.mode), coord = static_cast<int64_t>(p.coord_transform);
    const int64_t rounding = static_cast<int64_t>(p.nearest_rounding);
    if (!is_known(p.mode)) return fail(err, kOp, cat("mode ", mode, " is not 0 or 1"));
    if (!is_known(p.coord_transform)) return fail(err, kOp, cat("coordinate transformation ", coord, " is not 0..5"));
    if (!is_known(p.nearest_rounding)) return fail(err, kOp, cat("nearest rounding ", rounding, " is not 0..3"));
    const char* names[2] = {"h", "w"};
    for (int a = 0; a < 2; ++a) {
        const float s = a == 0 ? p.scale_h : p.scale_w;
        if (!(s > 0.f) || !std::isfinite(s)) return fail(err, kOp, cat("scale_", names[a], " ", s, " must be > 0"));
        // An axis of scale 1 maps output i to input i, so it must keep its size.
        if (s == 1.f && y.dims[2 + a] != x.dims[2 + a])
            return fail(err, kOp,
                        cat("scale_", names[a], " 1 but output shape ", kern::dims_str(y),
                            " changes that axis of input ", kern::dims_str(x)));
    }
    return true;
}

// Worker 0's scratch holds the tables (every worker's scratch skips as many bytes), then each worker's rows.
size_t scratch_bytes(const Graph& g, const Node& n) {
    const ResizeGeom q = geom(g, n);
    return resize_table_bytes(q) + resize_row_bytes(q);
}

// The planes in parts across the core's threads: each plane is filled as a whole by one worker.
void run(const KernelArgs& a) {
    const ResizeGeom q = geom(*a.graph, *a.node);
    resize_tables(q, a.scratch);
    const size_t skip = resize_table_bytes(q);
    const int64_t parts = split_parts(q.planes, q.planes * q.OH * q.OW, kMinElemsPerPart);
    a.par->for_ranges(q.planes, parts, [&](int64_t p0, int64_t p1, int worker) {
        resize_planes(q, kern::in_f(a, 0), kern::out_f(a, 0), a.scratch,
                      static_cast<char*>(a.scratch_for(worker)) + skip, p0, p1);
    });
}

}  // namespace

const OpDef kResizeDef = {kOp, validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
