// pooling.cc - maxpool, avgpool (FORMAT.md ops 9, 10) and globalavgpool (op 11): the checks, the window
// geometry, and a run over the planes, each pooled by math/pool.cc.
#include <type_traits>

#include "math/exact_rounding.h"
#include "math/pool.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/quant_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

using kern::Axis;

// P: MaxPoolParams or AvgPoolParams, which share the window fields.
template <class P>
PoolGeom geom(const Graph& g, const Node& n) {
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    const P p = P::of(n);
    PoolGeom q;
    q.N = x.dims[0], q.C = x.dims[1], q.H = x.dims[2], q.W = x.dims[3];
    q.kh = p.kernel_h, q.kw = p.kernel_w, q.sh = p.stride_h, q.sw = p.stride_w;
    q.pt = p.pad_top, q.pl = p.pad_left, q.pb = p.pad_bottom, q.pr = p.pad_right;
    q.dh = p.dilation_h, q.dw = p.dilation_w, q.OH = y.dims[2], q.OW = y.dims[3];
    return q;
}

// What a pool takes: avgpool float32; qavgpool int8 or uint8, quantized per tensor; maxpool float32, or int8
// or uint8 with X and Y of one dtype and quantized alike or not at all (the max of the integers is the
// integer of the max).
enum class PoolTypes { Float, Quantized, FloatOr8Bit };

bool check_pool_dtypes(const char* op, PoolTypes types, const TensorDesc& x, const TensorDesc& y, std::string* err) {
    using kern::cat;
    if (types == PoolTypes::Quantized) {
        const auto pt = kern::QuantShape::PerTensor;
        return kern::check_quantized(x, op, "input", pt, -1, false, err) &&
               kern::check_quantized(y, op, "output", pt, -1, false, err) && kern::same_dtype(x, y, op, "input", err);
    }
    if (x.dtype == ACCEL_DTYPE_FLOAT32 && y.dtype == ACCEL_DTYPE_FLOAT32) return true;
    if (types == PoolTypes::Float) return kern::fail(err, op, "input and output must be float32");
    if (!kern::is_q8(x) || x.dtype != y.dtype)
        return kern::fail(err, op,
                          cat("input '", x.name, "' and output '", y.name, "' must be both float32, int8 or uint8"));
    if (x.quant.type == ACCEL_QUANT_NONE && y.quant.type == ACCEL_QUANT_NONE) return true;
    if (!kern::check_quantized(x, op, "input", kern::QuantShape::PerTensor, -1, false, err) ||
        !kern::check_quantized(y, op, "output", kern::QuantShape::PerTensor, -1, false, err))
        return false;
    const QParams a = kern::qparams(x), b = kern::qparams(y);
    if (a.scale != b.scale || a.zero != b.zero)
        return kern::fail(err, op, cat("input '", x.name, "' and output '", y.name, "' are not quantized alike"));
    return true;
}

template <class P>
bool validate_pool(const char* op, const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    constexpr PoolTypes kTypes = std::is_same_v<P, MaxPoolParams>    ? PoolTypes::FloatOr8Bit
                                 : std::is_same_v<P, QAvgPoolParams> ? PoolTypes::Quantized
                                                                     : PoolTypes::Float;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!check_pool_dtypes(op, kTypes, x, y, err)) return false;
    if (x.ndim != 4) return fail(err, op, cat("input rank ", x.ndim, " is not 4 (NCHW)"));
    if (y.ndim != 4) return fail(err, op, cat("output rank ", y.ndim, " is not 4"));
    const P p = P::of(n);
    if (p.ceil_mode != 0 && p.ceil_mode != 1) return fail(err, op, cat("ceil_mode ", p.ceil_mode, " is not 0 or 1"));
    if constexpr (!std::is_same_v<P, MaxPoolParams>) {
        if (p.count_include_pad != 0 && p.count_include_pad != 1)
            return fail(err, op, cat("count_include_pad ", p.count_include_pad, " is not 0 or 1"));
        if (p.dilation_h != 1 || p.dilation_w != 1)
            return fail(err, op, cat("dilations ", p.dilation_h, "x", p.dilation_w, " are not 1x1"));
    }
    Axis ah{x.dims[2], p.kernel_h, p.stride_h, p.pad_top, p.pad_bottom, p.dilation_h, 0};
    Axis aw{x.dims[3], p.kernel_w, p.stride_w, p.pad_left, p.pad_right, p.dilation_w, 0};
    const bool ceil = p.ceil_mode != 0;
    if (!kern::window_axis(&ah, ceil, op, "h", err) || !kern::window_axis(&aw, ceil, op, "w", err)) return false;
    if (y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1] || y.dims[2] != ah.out || y.dims[3] != aw.out)
        return fail(err, op,
                    cat("output shape ", kern::dims_str(y), " should be [", x.dims[0], ",", x.dims[1], ",", ah.out, ",",
                        aw.out, "]"));
    return true;
}

bool validate_max(const Graph& g, const Node& n, std::string* err) {
    return validate_pool<MaxPoolParams>("maxpool", g, n, err);
}
bool validate_avg(const Graph& g, const Node& n, std::string* err) {
    return validate_pool<AvgPoolParams>("avgpool", g, n, err);
}
bool validate_qavg(const Graph& g, const Node& n, std::string* err) {
    return validate_pool<QAvgPoolParams>("qavgpool", g, n, err);
}

using kern::no_scratch;

// Calls f(plane) for each of the N*C planes, in parts over the core's threads when the windows add up to
// enough work (each plane is pooled alone, so the parts change no result).
template <class F>
void for_planes(const KernelArgs& a, const PoolGeom& q, F f) {
    const int64_t planes = q.N * q.C;
    const int64_t parts = split_parts(planes, planes * q.OH * q.OW * q.kh * q.kw, kMinElemsPerPart);
    a.par->for_ranges(planes, parts, [&](int64_t p0, int64_t p1, int) {
        for (int64_t p = p0; p < p1; ++p) f(p);
    });
}

template <typename T>
void max_planes(const KernelArgs& a, const PoolGeom& q) {
    const T* X = static_cast<const T*>(a.in[0]);
    T* Y = static_cast<T*>(a.out[0]);
    for_planes(a, q, [&](int64_t p) { max_pool_plane(q, X + p * q.H * q.W, Y + p * q.OH * q.OW); });
}

void run_max(const KernelArgs& a) {
    const PoolGeom q = geom<MaxPoolParams>(*a.graph, *a.node);
    switch (kern::in_desc(a, 0).dtype) {
        case ACCEL_DTYPE_INT8: max_planes<int8_t>(a, q); break;
        case ACCEL_DTYPE_UINT8: max_planes<uint8_t>(a, q); break;
        default: max_planes<float>(a, q); break;
    }
}

void run_avg(const KernelArgs& a) {
    const PoolGeom q = geom<AvgPoolParams>(*a.graph, *a.node);
    const bool include_pad = AvgPoolParams::of(*a.node).count_include_pad != 0;
    const float* X = kern::in_f(a, 0);
    float* Y = kern::out_f(a, 0);
    for_planes(a, q, [&](int64_t p) { avg_pool_plane(q, include_pad, X + p * q.H * q.W, Y + p * q.OH * q.OW); });
}

void run_qavg(const KernelArgs& a) {
    const PoolGeom q = geom<QAvgPoolParams>(*a.graph, *a.node);
    const bool include_pad = QAvgPoolParams::of(*a.node).count_include_pad != 0;
    quant_rules(*a.graph).avg_pool(q, include_pad, kern::in_desc(a, 0), kern::out_desc(a, 0), a.in[0], a.out[0]);
}

template <bool kQuantized>
bool validate_global(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* op = kQuantized ? "qglobalavgpool" : "globalavgpool";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (kQuantized && !check_pool_dtypes(op, PoolTypes::Quantized, x, y, err)) return false;
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
    const int64_t parts = split_parts(planes, xd.numel, kMinElemsPerPart);
    a.par->for_ranges(planes, parts, [&](int64_t p0, int64_t p1, int) {
        global_avg_pool(kern::in_f(a, 0) + p0 * n, kern::out_f(a, 0) + p0, p1 - p0, n);
    });
}

void run_qglobal(const KernelArgs& a) {
    quant_rules(*a.graph).global_avg_pool(kern::in_desc(a, 0), kern::out_desc(a, 0), a.in[0], a.out[0]);
}

}  // namespace

const OpDef kMaxPoolDef = {"maxpool", validate_max, no_scratch, run_max, nullptr, nullptr};
const OpDef kAvgPoolDef = {"avgpool", validate_avg, no_scratch, run_avg, nullptr, nullptr};
const OpDef kGlobalAvgPoolDef = {"globalavgpool", validate_global<false>, no_scratch, run_global, nullptr, nullptr};
const OpDef kQAvgPoolDef = {"qavgpool", validate_qavg, no_scratch, run_qavg, nullptr, nullptr};
const OpDef kQGlobalAvgPoolDef = {"qglobalavgpool", validate_global<true>, no_scratch, run_qglobal, nullptr, nullptr};

}  // namespace accel_emu
