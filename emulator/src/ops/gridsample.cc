// gridsample.cc - ONNX GridSample (FORMAT.md op 82): each output element samples its input plane (or volume)
// at the grid's normalized location, nearest, linear or cubic, with zeros, border or reflection padding of
// the neighbours it reads. Float steps are onnxruntime's (grid_sample.cc) in its order, without contraction,
// so results round as its do.
#include <cmath>
#include <cstdint>

#include "math/exact_rounding.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "gridsample";
enum Mode : int64_t { kNearest = 0, kLinear = 1, kCubic = 2 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// Coordinates are held within +-2^40 before they become indices: far outside any axis (so zeros and border
// read as onnxruntime does), and exactly representable as int64 (onnxruntime's cast of a larger one is
// undefined).
constexpr float kCoordLimit = 1099511627776.f;

using kern::no_scratch;

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& grid = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const GridSampleParams p = GridSampleParams::of(n);
    if (x.ndim != 4 && x.ndim != 5) return fail(err, kOp, cat("input rank ", x.ndim, " is not 4 or 5"));
    const int r = x.ndim - 2;
    if (grid.ndim != x.ndim || grid.dims[0] != x.dims[0] || grid.dims[x.ndim - 1] != r)
        return fail(err, kOp,
                    cat("grid ", kern::dims_str(grid), " is not [N, ..., ", r, "] for input ", kern::dims_str(x)));
    bool ok = y.ndim == x.ndim && y.dims[0] == x.dims[0] && y.dims[1] == x.dims[1];
    for (int i = 0; ok && i < r; ++i) ok = y.dims[2 + i] == grid.dims[1 + i];
    if (!ok)
        return fail(err, kOp,
                    cat("output ", kern::dims_str(y), " is not [N, C] of input ", kern::dims_str(x), " and the grid's ",
                        kern::dims_str(grid), " points"));
    if (p.mode < kNearest || p.mode > kCubic) return fail(err, kOp, cat("mode ", p.mode, " is not 0..2"));
    if (p.mode == kCubic && r != 2) return fail(err, kOp, "cubic mode samples 2-D planes only (a 4-D input)");
    if (p.padding < kZeros || p.padding > kReflection)
        return fail(err, kOp, cat("padding ", p.padding, " is not 0..2"));
    if (p.align_corners != 0 && p.align_corners != 1)
        return fail(err, kOp, cat("align_corners ", p.align_corners, " is not 0 or 1"));
    return true;
}

// One spatial axis: its length and the reflection bounds.
struct Axis {
    int64_t len;
    float lo, hi;
};

struct Sampler {
    Padding padding;
    bool align;
    Axis axes[3];  // x (W), y (H), z (D): the grid's component order

    float denormalize(float g, int a) const {
        const int64_t len = axes[a].len;
        return align ? (g + 1) / 2.f * static_cast<float>(len - 1) : ((g + 1) * static_cast<float>(len) - 1) / 2.f;
    }

    // onnxruntime's GsReflect of an index, in float, then truncated; held inside the axis (an axis of one
    // element with align_corners has no range to reflect in: its one element).
    int64_t reflect(int64_t i, const Axis& ax) const {
        float fx = static_cast<float>(i);
        const float range = ax.hi - ax.lo;
        if (!(range > 0.f)) return 0;
        if (fx < ax.lo) {
            const float dx = ax.lo - fx;
            const int64_t n = static_cast<int64_t>(dx / range);
            const float r = dx - static_cast<float>(n) * range;
            fx = n % 2 == 0 ? ax.lo + r : ax.hi - r;
        } else if (fx > ax.hi) {
            const float dx = fx - ax.hi;
            const int64_t n = static_cast<int64_t>(dx / range);
            const float r = dx - static_cast<float>(n) * range;
            fx = n % 2 == 0 ? ax.hi - r : ax.lo + r;
        }
        const int64_t j = static_cast<int64_t>(fx);
        return j < 0 ? 0 : (j >= ax.len ? ax.len - 1 : j);
    }

    // The element index along axis a of neighbour i, or -1 where zeros padding reads 0.
    int64_t index(int64_t i, int a) const {
        const Axis& ax = axes[a];
        if (i >= 0 && i < ax.len) return i;
        if (padding == kZeros) return -1;
        if (padding == kBorder) return i < 0 ? 0 : ax.len - 1;
        return reflect(i, ax);
    }

    float pixel2(const float* plane, int64_t r, int64_t c) const {
        const int64_t ic = index(c, 0), ir = index(r, 1);
        return ic < 0 || ir < 0 ? 0.f : plane[ir * axes[0].len + ic];
    }

    float pixel3(const float* vol, int64_t d, int64_t h, int64_t w) const {
        const int64_t iw = index(w, 0), ih = index(h, 1), id = index(d, 2);
        return iw < 0 || ih < 0 || id < 0 ? 0.f : vol[(id * axes[1].len + ih) * axes[0].len + iw];
    }
};

float held(float v) { return v < -kCoordLimit ? -kCoordLimit : (v > kCoordLimit ? kCoordLimit : v); }

void cubic_coeffs(float x, float c[4]) {
    const float a = -0.75f;
    x = std::fabs(x);
    c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
    c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

float sample2(const Sampler& s, Mode mode, const float* plane, float gx, float gy) {
    float x = s.denormalize(gx, 0), y = s.denormalize(gy, 1);
    if (!std::isfinite(x) || !std::isfinite(y)) return NAN;
    x = held(x), y = held(y);
    if (mode == kNearest)
        return s.pixel2(plane, static_cast<int64_t>(std::nearbyint(y)), static_cast<int64_t>(std::nearbyint(x)));
    if (mode == kLinear) {
        const int64_t x1 = static_cast<int64_t>(std::floor(x)), y1 = static_cast<int64_t>(std::floor(y));
        const int64_t x2 = x1 + 1, y2 = y1 + 1;
        const float p11 = s.pixel2(plane, y1, x1), p12 = s.pixel2(plane, y1, x2);
        const float p21 = s.pixel2(plane, y2, x1), p22 = s.pixel2(plane, y2, x2);
        const float dx2 = static_cast<float>(x2) - x, dx1 = x - static_cast<float>(x1);
        const float dy2 = static_cast<float>(y2) - y, dy1 = y - static_cast<float>(y1);
        return dy2 * (dx2 * p11 + dx1 * p12) + dy1 * (dx2 * p21 + dx1 * p22);
    }
    const int64_t x0 = static_cast<int64_t>(std::floor(x)) - 1, y0 = static_cast<int64_t>(std::floor(y)) - 1;
    float c[4], v[4];
    cubic_coeffs(x - static_cast<float>(x0) - 1, c);
    for (int64_t h = 0; h < 4; ++h) {
        float p[4];
        for (int64_t w = 0; w < 4; ++w) p[w] = s.pixel2(plane, y0 + h, x0 + w);
        v[h] = c[0] * p[0] + c[1] * p[1] + c[2] * p[2] + c[3] * p[3];
    }
    cubic_coeffs(y - static_cast<float>(y0) - 1, c);
    return c[0] * v[0] + c[1] * v[1] + c[2] * v[2] + c[3] * v[3];
}

float sample3(const Sampler& s, Mode mode, const float* vol, const float* g) {
    float x = s.denormalize(g[0], 0), y = s.denormalize(g[1], 1), z = s.denormalize(g[2], 2);
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(z)) return NAN;
    x = held(x), y = held(y), z = held(z);
    if (mode == kNearest)
        return s.pixel3(vol, static_cast<int64_t>(std::nearbyint(z)), static_cast<int64_t>(std::nearbyint(y)),
                        static_cast<int64_t>(std::nearbyint(x)));
    const int64_t x1 = static_cast<int64_t>(std::floor(x)), y1 = static_cast<int64_t>(std::floor(y));
    const int64_t z1 = static_cast<int64_t>(std::floor(z));
    const int64_t x2 = x1 + 1, y2 = y1 + 1, z2 = z1 + 1;
    const float dx2 = static_cast<float>(x2) - x, dx1 = x - static_cast<float>(x1);
    const float dy2 = static_cast<float>(y2) - y, dy1 = y - static_cast<float>(y1);
    const float dz2 = static_cast<float>(z2) - z, dz1 = z - static_cast<float>(z1);
    float planes[2];
    for (int k = 0; k < 2; ++k) {
        const int64_t d = k == 0 ? z1 : z2;
        const float p11 = s.pixel3(vol, d, y1, x1), p12 = s.pixel3(vol, d, y1, x2);
        const float p21 = s.pixel3(vol, d, y2, x1), p22 = s.pixel3(vol, d, y2, x2);
        planes[k] = dy2 * (dx2 * p11 + dx1 * p12) + dy1 * (dx2 * p21 + dx1 * p22);
    }
    return dz2 * planes[0] + dz1 * planes[1];
}

void run(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    const GridSampleParams p = GridSampleParams::of(*a.node);
    const int r = xd.ndim - 2;
    Sampler s{static_cast<Padding>(p.padding), p.align_corners != 0, {}};
    for (int i = 0; i < r; ++i) {
        Axis& ax = s.axes[i];
        ax.len = xd.dims[xd.ndim - 1 - i];
        ax.lo = s.align ? 0.f : -0.5f;
        ax.hi = s.align ? static_cast<float>(ax.len) - 1.f : static_cast<float>(ax.len) - 0.5f;
    }
    int64_t in_plane = 1, points = 1;
    for (int i = 0; i < r; ++i) in_plane *= xd.dims[2 + i], points *= yd.dims[2 + i];
    const int64_t N = xd.dims[0], C = xd.dims[1];
    const Mode mode = static_cast<Mode>(p.mode);
    const float* x = kern::in_f(a, 0);
    const float* grid = kern::in_f(a, 1);
    float* y = kern::out_f(a, 0);
    for (int64_t n = 0; n < N; ++n) {
        const float* gn = grid + n * points * r;
        for (int64_t c = 0; c < C; ++c) {
            const float* xp = x + (n * C + c) * in_plane;
            float* yp = y + (n * C + c) * points;
            for (int64_t o = 0; o < points; ++o)
                yp[o] = r == 2 ? sample2(s, mode, xp, gn[o * 2], gn[o * 2 + 1]) : sample3(s, mode, xp, gn + o * 3);
        }
    }
}

}  // namespace

const OpDef kGridSampleDef = {kOp, validate, no_scratch, run, nullptr, nullptr};

}  // namespace accel_emu
