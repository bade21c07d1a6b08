// resize.cc - nearest and bilinear resize of the H and W axes of NCHW (FORMAT.md op 17). Per run, each
// output row and column is mapped once to its input row/column (nearest) or its two neighbours and weights
// (linear), with ONNX's coordinate formulas evaluated in float as onnxruntime does; the planes are then
// filled from those tables. Nearest copies an output row that repeats the previous one's input row, and
// replicates pixels for integer upscale factors; linear interpolates each needed input row horizontally
// once and blends two such rows per output row.
#include <cmath>
#include <cstring>

#include "kernel_util.h"
#include "op_defs.h"
#include "resize_coords.h"

namespace accel_emu {
namespace {

using namespace resize;

constexpr const char* kOp = "resize";

struct Geom {
    int64_t planes, H, W, OH, OW;
    Params ph, pw;  // per-axis coordinate parameters
    bool linear;
};

Geom geom(const Graph& g, const Node& n) {
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    Geom q;
    q.planes = x.dims[0] * x.dims[1];
    q.H = x.dims[2], q.W = x.dims[3], q.OH = y.dims[2], q.OW = y.dims[3];
    q.linear = n.ints[0] == 1;
    const auto coord = static_cast<Coord>(n.ints[1]);
    const auto round = static_cast<Rounding>(n.ints[2]);
    q.ph = {coord, round, n.floats[0], q.H, q.OH};
    q.pw = {coord, round, n.floats[1], q.W, q.OW};
    return q;
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, kOp, {1, 1, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::MustBeNone, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.ndim != 4) return fail(err, kOp, cat("input rank ", x.ndim, " is not 4 (NCHW)"));
    if (y.ndim != 4) return fail(err, kOp, cat("output rank ", y.ndim, " is not 4"));
    if (y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1])
        return fail(err, kOp, cat("output shape ", kern::dims_str(y), " resizes N or C of input ", kern::dims_str(x)));
    if (n.ints[0] != 0 && n.ints[0] != 1) return fail(err, kOp, cat("mode ", n.ints[0], " is not 0 or 1"));
    if (n.ints[1] < 0 || n.ints[1] > static_cast<int64_t>(Coord::HalfPixelSymmetric))
        return fail(err, kOp, cat("coordinate transformation ", n.ints[1], " is not 0..5"));
    if (n.ints[2] < 0 || n.ints[2] > static_cast<int64_t>(Rounding::Ceil))
        return fail(err, kOp, cat("nearest rounding ", n.ints[2], " is not 0..3"));
    const char* names[2] = {"h", "w"};
    for (int a = 0; a < 2; ++a) {
        const float s = n.floats[a];
        if (!(s > 0.f) || !std::isfinite(s)) return fail(err, kOp, cat("scale_", names[a], " ", s, " must be > 0"));
        // An axis of scale 1 maps output i to input i, so it must keep its size.
        if (s == 1.f && y.dims[2 + a] != x.dims[2 + a])
            return fail(err, kOp,
                        cat("scale_", names[a], " 1 but output shape ", kern::dims_str(y),
                            " changes that axis of input ", kern::dims_str(x)));
    }
    return true;
}

size_t table_bytes(int64_t n, bool linear) {
    return static_cast<size_t>(n) * (linear ? sizeof(LinearTap) : sizeof(int64_t));
}

size_t scratch_bytes(const Graph& g, const Node& n) {
    const Geom q = geom(g, n);
    size_t b = table_bytes(q.OH, q.linear) + table_bytes(q.OW, q.linear);
    if (q.linear) b += 2 * static_cast<size_t>(q.OW) * sizeof(float);  // two horizontally resized rows
    return b;
}

// Nearest: one output row from input row `src`. rep > 0: every input pixel fills rep outputs in turn.
ACCEL_HOT void nearest_row(const float* ACCEL_RESTRICT src, const int64_t* ix, int64_t OW, int64_t W, int64_t rep,
                           float* ACCEL_RESTRICT dst) {
    if (rep == 1) {
        std::memcpy(dst, src, sizeof(float) * static_cast<size_t>(W));
    } else if (rep == 2) {
        for (int64_t j = 0; j < W; ++j) dst[2 * j] = dst[2 * j + 1] = src[j];
    } else if (rep > 2) {
        for (int64_t j = 0; j < W; ++j)
            for (int64_t k = 0; k < rep; ++k) dst[j * rep + k] = src[j];
    } else {
        for (int64_t j = 0; j < OW; ++j) dst[j] = src[ix[j]];
    }
}

// The integer factor f when output column j reads input column j / f for every j, else 0.
int64_t replication(const int64_t* ix, int64_t OW, int64_t W) {
    if (OW % W != 0) return 0;
    const int64_t f = OW / W;
    for (int64_t j = 0; j < OW; ++j)
        if (ix[j] != j / f) return 0;
    return f;
}

void run_nearest(const Geom& q, const float* X, float* Y, void* scratch) {
    int64_t* iy = static_cast<int64_t*>(scratch);
    int64_t* ix = iy + q.OH;
    nearest_table(q.ph, iy);
    nearest_table(q.pw, ix);
    const int64_t rep = replication(ix, q.OW, q.W);
    for (int64_t p = 0; p < q.planes; ++p) {
        const float* x = X + p * q.H * q.W;
        float* y = Y + p * q.OH * q.OW;
        for (int64_t oy = 0; oy < q.OH; ++oy) {
            float* dst = y + oy * q.OW;
            if (oy > 0 && iy[oy] == iy[oy - 1]) std::memcpy(dst, dst - q.OW, sizeof(float) * static_cast<size_t>(q.OW));
            else nearest_row(x + iy[oy] * q.W, ix, q.OW, q.W, rep, dst);
        }
    }
}

// Linear: input row `src` interpolated along W into dst[OW].
ACCEL_HOT void lerp_row(const float* ACCEL_RESTRICT src, const LinearTap* tx, int64_t OW, float* ACCEL_RESTRICT dst) {
    for (int64_t j = 0; j < OW; ++j) dst[j] = tx[j].w0 * src[tx[j].i0] + tx[j].w1 * src[tx[j].i1];
}

ACCEL_HOT void blend_rows(const float* ACCEL_RESTRICT a, const float* ACCEL_RESTRICT b, float wa, float wb, int64_t n,
                          float* ACCEL_RESTRICT dst) {
    for (int64_t j = 0; j < n; ++j) dst[j] = wa * a[j] + wb * b[j];
}

// Two horizontally interpolated input rows, reused while consecutive output rows need them.
struct RowCache {
    float* buf[2];
    int64_t row[2] = {-1, -1};
    // The row `r` (computing it if absent) without evicting row `keep`.
    const float* get(const float* x, int64_t W, const LinearTap* tx, int64_t OW, int64_t r, int64_t keep) {
        for (int s = 0; s < 2; ++s)
            if (row[s] == r) return buf[s];
        const int s = row[0] == keep ? 1 : 0;
        lerp_row(x + r * W, tx, OW, buf[s]);
        row[s] = r;
        return buf[s];
    }
};

void run_linear(const Geom& q, const float* X, float* Y, void* scratch) {
    LinearTap* ty = static_cast<LinearTap*>(scratch);
    LinearTap* tx = ty + q.OH;
    linear_table(q.ph, ty);
    linear_table(q.pw, tx);
    float* rows = reinterpret_cast<float*>(tx + q.OW);
    for (int64_t p = 0; p < q.planes; ++p) {
        const float* x = X + p * q.H * q.W;
        float* y = Y + p * q.OH * q.OW;
        RowCache cache{{rows, rows + q.OW}};
        for (int64_t oy = 0; oy < q.OH; ++oy) {
            const LinearTap& t = ty[oy];
            const float* a = cache.get(x, q.W, tx, q.OW, t.i0, t.i1);
            const float* b = cache.get(x, q.W, tx, q.OW, t.i1, t.i0);
            blend_rows(a, b, t.w0, t.w1, q.OW, y + oy * q.OW);
        }
    }
}

void run(const KernelArgs& a) {
    const Geom q = geom(*a.graph, *a.node);
    if (q.linear) run_linear(q, kern::in_f(a, 0), kern::out_f(a, 0), a.scratch);
    else run_nearest(q, kern::in_f(a, 0), kern::out_f(a, 0), a.scratch);
}

}  // namespace

const OpDef kResizeDef = {kOp, validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
