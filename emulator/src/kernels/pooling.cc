// pooling.cc - maxpool, avgpool (FORMAT.md ops 9, 10) and globalavgpool (op 11). Windows are walked row
// by row: for each kernel tap, the range of output columns whose input column is in bounds is computed
// once, so the inner loops carry no bounds tests and vectorize. Taps outside the input never contribute
// (a max over an empty window is the lowest float, an average over one is 0).
#include <algorithm>
#include <cfloat>

#include "fast_math.h"
#include "kernel_util.h"
#include "op_defs.h"

namespace accel_emu {
namespace {

using kern::Axis;

struct PoolGeom { int64_t N, C, H, W, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, OH, OW; };

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

ACCEL_HOT void max_plane(const PoolGeom& q, const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y) {
    kern::TapRanges tr;
    tr.init(q.kw, q.dw, q.pl, q.sw, q.W, q.OW);
    int64_t kj0, kj1;
    kern::useful_taps(q.kw, q.dw, q.pl, q.sw, q.W, q.OW, &kj0, &kj1);
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        float* yr = y + oh * q.OW;
        for (int64_t ow = 0; ow < q.OW; ++ow) yr[ow] = -FLT_MAX;
        int64_t ki0, ki1;
        kern::useful_taps(q.kh, q.dh, q.pt - oh * q.sh, 1, q.H, 1, &ki0, &ki1);
        for (int64_t ki = ki0; ki < ki1; ++ki) {
            const int64_t ih = oh * q.sh - q.pt + ki * q.dh;
            for (int64_t kj = kj0; kj < kj1; ++kj) {
                const int64_t off = kj * q.dw - q.pl;
                int64_t lo, hi;
                tr.get(kj, &lo, &hi);
                if (hi <= lo) continue;
                const float* src = x + ih * q.W + (lo * q.sw + off);
                float* d = yr + lo;
                const int64_t cnt = hi - lo;
                if (q.sw == 1) {
                    for (int64_t j = 0; j < cnt; ++j) d[j] = src[j] > d[j] ? src[j] : d[j];
                } else if (q.sw == 2) {
                    for (int64_t j = 0; j < cnt; ++j) d[j] = src[2 * j] > d[j] ? src[2 * j] : d[j];
                } else {
                    for (int64_t j = 0; j < cnt; ++j) d[j] = src[j * q.sw] > d[j] ? src[j * q.sw] : d[j];
                }
            }
        }
    }
}

// Number of window positions [s, s+k) counted along one axis: clipped to the input, or (include_pad) to
// the padded input [-pad_lo, in + pad_hi), which is what onnxruntime does for ceil_mode windows.
inline int64_t window_count(int64_t s, int64_t k, int64_t in, int64_t pad_hi, bool include_pad) {
    int64_t e = s + k;
    if (include_pad) return std::min(e, in + pad_hi) - s;
    return std::max<int64_t>(0, std::min(e, in) - std::max<int64_t>(s, 0));
}

ACCEL_HOT void avg_plane(const PoolGeom& q, bool include_pad, const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y) {
    kern::TapRanges tr;
    tr.init(q.kw, 1, q.pl, q.sw, q.W, q.OW);
    int64_t kj0, kj1;
    kern::useful_taps(q.kw, 1, q.pl, q.sw, q.W, q.OW, &kj0, &kj1);
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        float* yr = y + oh * q.OW;
        for (int64_t ow = 0; ow < q.OW; ++ow) yr[ow] = 0.f;
        const int64_t hs = oh * q.sh - q.pt;
        int64_t ki0, ki1;
        kern::useful_taps(q.kh, 1, -hs, 1, q.H, 1, &ki0, &ki1);
        for (int64_t ki = ki0; ki < ki1; ++ki) {
            const int64_t ih = hs + ki;
            for (int64_t kj = kj0; kj < kj1; ++kj) {
                const int64_t off = kj - q.pl;
                int64_t lo, hi;
                tr.get(kj, &lo, &hi);
                if (hi <= lo) continue;
                const float* src = x + ih * q.W + (lo * q.sw + off);
                float* d = yr + lo;
                const int64_t cnt = hi - lo;
                if (q.sw == 1) {
                    for (int64_t j = 0; j < cnt; ++j) d[j] += src[j];
                } else {
                    for (int64_t j = 0; j < cnt; ++j) d[j] += src[j * q.sw];
                }
            }
        }
        const int64_t ch = window_count(hs, q.kh, q.H, q.pb, include_pad);
        for (int64_t ow = 0; ow < q.OW; ++ow) {
            const int64_t cnt = ch * window_count(ow * q.sw - q.pl, q.kw, q.W, q.pr, include_pad);
            yr[ow] = cnt > 0 ? yr[ow] / static_cast<float>(cnt) : 0.f;
        }
    }
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
    for (int64_t p = 0; p < q.N * q.C; ++p) max_plane(q, X + p * q.H * q.W, Y + p * q.OH * q.OW);
}

void run_avg(const KernelArgs& a) {
    const PoolGeom q = geom(*a.graph, *a.node);
    const bool include_pad = a.node->ints[12] != 0;
    const float* X = kern::in_f(a, 0);
    float* Y = kern::out_f(a, 0);
    for (int64_t p = 0; p < q.N * q.C; ++p) avg_plane(q, include_pad, X + p * q.H * q.W, Y + p * q.OH * q.OW);
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

ACCEL_HOT void global_avg(const float* x, float* y, int64_t planes, int64_t n) {
    const float inv = 1.f / static_cast<float>(n);
    for (int64_t p = 0; p < planes; ++p) y[p] = kern::sum_reduce(x + p * n, n) * inv;
}

void run_global(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const int64_t planes = xd.dims[0] * xd.dims[1];
    const int64_t n = xd.numel / planes;
    global_avg(kern::in_f(a, 0), kern::out_f(a, 0), planes, n);
}

}  // namespace

const OpDef kMaxPoolDef = {"maxpool", validate_max, no_scratch, run_max, nullptr, nullptr};
const OpDef kAvgPoolDef = {"avgpool", validate_avg, no_scratch, run_avg, nullptr, nullptr};
const OpDef kGlobalAvgPoolDef = {"globalavgpool", validate_global, no_scratch, run_global, nullptr, nullptr};

}  // namespace accel_emu
