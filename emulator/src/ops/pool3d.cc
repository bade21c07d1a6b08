// pool3d.cc - max and average pooling over D, H and W with dilations (FORMAT.md op 83): MaxPool and
// AveragePool of 3-D inputs, and the dilated average pools the 2-D avgpool op does not take (the compiler
// lifts 1-D and 2-D pools to it with axes of one element); and maxpoolidx (op 85), MaxPool with its Indices
// output as onnxruntime's pooling loop computes it. Each window's taps are bounds-checked, so any
// parameters the load-time check passes read inside the input.
#include <algorithm>
#include <cmath>
#include <limits>

#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "pool3d";
enum Mode : int64_t { kMax = 0, kAvg = 1, kAvgWithPads = 2 };

using kern::no_scratch;

// One axis' window parameters and output size: each in 1 .. 2^40 (pads 0 .. 2^40), and the last window starting
// inside the input or its leading padding, all in overflow-checked arithmetic.
bool check_axis(const char* op, const char* nm, int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dil,
                int64_t pad_lo, int64_t pad_hi, std::string* err) {
    using kern::cat;
    const int64_t big = int64_t(1) << 40;
    if (k < 1 || stride < 1 || dil < 1 || pad_lo < 0 || pad_hi < 0 || k > big || stride > big || dil > big ||
        pad_lo > big || pad_hi > big)
        return kern::fail(err, op,
                          cat("axis ", nm, ": kernel ", k, ", stride ", stride, ", dilation ", dil,
                              " must be 1 .. 2^40 and pads ", pad_lo, ", ", pad_hi, " 0 .. 2^40"));
    int64_t last = 0;
    if (!kern::mul_ok(out - 1, stride, &last) || last - pad_lo >= in)
        return kern::fail(err, op,
                          cat("axis ", nm, ": output size ", out, " has a window starting past input size ", in,
                              " (stride ", stride, ", pad ", pad_lo, ")"));
    return true;
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.ndim != 5 || y.ndim != 5)
        return fail(err, kOp, cat("input and output ranks ", x.ndim, ", ", y.ndim, " are not 5"));
    if (y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1])
        return fail(err, kOp, cat("output ", kern::dims_str(y), " changes N or C of input ", kern::dims_str(x)));
    const Pool3dParams p = Pool3dParams::of(n);
    if (p.mode < kMax || p.mode > kAvgWithPads) return fail(err, kOp, cat("mode ", p.mode, " is not 0..2"));
    const char* axis[3] = {"d", "h", "w"};
    for (int a = 0; a < 3; ++a)
        if (!check_axis(kOp, axis[a], x.dims[2 + a], y.dims[2 + a], p.kernel[a], p.strides[a], p.dilations[a],
                        p.pad_begin[a], p.pad_end[a], err))
            return false;
    return true;
}

// One axis of one output position: its first tap inside the input, the taps' dilation and how many of them fall
// inside (the loops visit those alone, so their work is the input's, whatever the kernel and pads), and
// onnxruntime's divisor factor counting pads. Parameters within check_axis' 2^40 keep every product in range.
struct Span { int64_t start, step, taps, padded; };

Span span(const Pool3dParams& p, int a, int64_t o, int64_t in) {
    Span s;
    const int64_t begin = o * p.strides[a] - p.pad_begin[a];
    s.step = p.dilations[a];
    int64_t end = begin + p.kernel[a] * p.dilations[a];
    if (end > in + p.pad_end[a]) end = in + p.pad_end[a];
    s.padded = 1 + (end - begin - 1) / s.step;
    const int64_t first = begin < 0 ? (-begin + s.step - 1) / s.step : 0;      // the first tap at index >= 0
    const int64_t last = std::min(p.kernel[a] - 1, (in - 1 - begin) / s.step);  // the last at index < in
    s.start = begin + first * s.step;
    s.taps = in - 1 - begin < 0 || last < first ? 0 : last - first + 1;
    return s;
}

void run(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    const Pool3dParams p = Pool3dParams::of(*a.node);
    const Mode mode = static_cast<Mode>(p.mode);
    const int64_t D = xd.dims[2], H = xd.dims[3], W = xd.dims[4];
    const int64_t OD = yd.dims[2], OH = yd.dims[3], OW = yd.dims[4];
    const int64_t planes = xd.dims[0] * xd.dims[1];
    const float* x = kern::in_f(a, 0);
    float* y = kern::out_f(a, 0);
    for (int64_t c = 0; c < planes; ++c) {
        const float* xc = x + c * D * H * W;
        float* yc = y + c * OD * OH * OW;
        for (int64_t od = 0; od < OD; ++od) {
            const Span sd = span(p, 0, od, D);
            for (int64_t oh = 0; oh < OH; ++oh) {
                const Span sh = span(p, 1, oh, H);
                for (int64_t ow = 0; ow < OW; ++ow) {
                    const Span sw = span(p, 2, ow, W);
                    float acc = mode == kMax ? std::numeric_limits<float>::lowest() : 0.f;
                    int64_t count = 0;
                    bool nan = false;
                    for (int64_t kd = 0, d = sd.start; kd < sd.taps; ++kd, d += sd.step) {
                        for (int64_t kh = 0, h = sh.start; kh < sh.taps; ++kh, h += sh.step) {
                            const float* row = xc + (d * H + h) * W;
                            for (int64_t kw = 0, w = sw.start; kw < sw.taps; ++kw, w += sw.step) {
                                const float v = row[w];
                                ++count;
                                if (mode != kMax) acc += v;
                                else if (v != v) nan = true;
                                else if (v > acc) acc = v;
                            }
                        }
                    }
                    float out = acc;
                    if (mode == kMax) out = nan ? std::numeric_limits<float>::quiet_NaN() : acc;
                    else if (count > 0)
                        out = acc / static_cast<float>(mode == kAvg ? count : sd.padded * sh.padded * sw.padded);
                    yc[(od * OH + oh) * OW + ow] = out;
                }
            }
        }
    }
}

// ---- maxpoolidx: the windows as above, Y the window's first element or a later one greater than the max so
// far (onnxruntime's loop: a NaN first stays, a later one never wins), I its flattened index.

constexpr const char* kIdxOp = "maxpoolidx";

bool validate_idx(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    const TensorDesc& ind = kern::output(g, n, 1);
    if (x.dtype != ACCEL_DTYPE_FLOAT32 || y.dtype != ACCEL_DTYPE_FLOAT32)
        return fail(err, kIdxOp, "X and Y must be float32");
    if (ind.dtype != ACCEL_DTYPE_INT64) return fail(err, kIdxOp, cat("I is ", dtype_name(ind.dtype), ", not int64"));
    if (x.ndim != 5 || y.ndim != 5 || !kern::same_dims(y, ind))
        return fail(err, kIdxOp,
                    cat("input ", kern::dims_str(x), ", outputs ", kern::dims_str(y), " and ", kern::dims_str(ind),
                        " are not 5-D with Y's shape I's"));
    if (y.dims[0] != x.dims[0] || y.dims[1] != x.dims[1])
        return fail(err, kIdxOp, cat("output ", kern::dims_str(y), " changes N or C of input ", kern::dims_str(x)));
    const MaxPoolIdxParams p = MaxPoolIdxParams::of(n);
    if (p.rank < 1 || p.rank > 3) return fail(err, kIdxOp, cat("rank ", p.rank, " is not 1..3"));
    if (p.storage_order != 0 && p.storage_order != 1)
        return fail(err, kIdxOp, cat("storage_order ", p.storage_order, " is not 0 or 1"));
    const char* axis[3] = {"d", "h", "w"};
    for (int a = 0; a < 3; ++a) {
        if (!check_axis(kIdxOp, axis[a], x.dims[2 + a], y.dims[2 + a], p.kernel[a], p.strides[a], p.dilations[a],
                        p.pad_begin[a], 0, err))
            return false;
        if (a < 3 - p.rank && x.dims[2 + a] != 1)
            return fail(err, kIdxOp,
                        cat("axis ", axis[a], " is not one of the ", p.rank, " pooled axes but has ", x.dims[2 + a],
                            " elements"));
    }
    return true;
}

void run_idx(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    const MaxPoolIdxParams p = MaxPoolIdxParams::of(*a.node);
    const int64_t len[3] = {xd.dims[2], xd.dims[3], xd.dims[4]};
    const int64_t out[3] = {yd.dims[2], yd.dims[3], yd.dims[4]};
    const int64_t plane = len[0] * len[1] * len[2], planes = xd.dims[0] * xd.dims[1];
    // Each pooled axis' stride in the index: row-major over the pooled axes, or column-major with
    // storage_order 1 (the first pooled axis fastest).
    const int first = static_cast<int>(3 - p.rank);
    int64_t stride[3] = {0, 0, 0}, step = 1;
    for (int k = 0; k < p.rank; ++k) {
        const int ax = p.storage_order == 0 ? 2 - k : first + k;
        stride[ax] = step;
        step *= len[ax];
    }
    const float* x = kern::in_f(a, 0);
    float* y = kern::out_f(a, 0);
    int64_t* ind = static_cast<int64_t*>(a.out[1]);
    Pool3dParams w;  // the window geometry, shared with pool3d's span()
    w.mode = kMax;
    for (int k = 0; k < 3; ++k)
        w.kernel[k] = p.kernel[k], w.strides[k] = p.strides[k], w.dilations[k] = p.dilations[k],
        w.pad_begin[k] = p.pad_begin[k], w.pad_end[k] = 0;
    for (int64_t c = 0; c < planes; ++c) {
        const float* xc = x + c * plane;
        const int64_t o_plane = out[0] * out[1] * out[2];
        for (int64_t od = 0; od < out[0]; ++od) {
            const Span sd = span(w, 0, od, len[0]);
            for (int64_t oh = 0; oh < out[1]; ++oh) {
                const Span sh = span(w, 1, oh, len[1]);
                for (int64_t ow = 0; ow < out[2]; ++ow) {
                    const Span sw = span(w, 2, ow, len[2]);
                    float best = std::numeric_limits<float>::lowest();
                    int64_t pos[3] = {-1, -1, -1};
                    for (int64_t kd = 0, d = sd.start; kd < sd.taps; ++kd, d += sd.step) {
                        for (int64_t kh = 0, h = sh.start; kh < sh.taps; ++kh, h += sh.step) {
                            const float* row = xc + (d * len[1] + h) * len[2];
                            for (int64_t kw = 0, q = sw.start; kw < sw.taps; ++kw, q += sw.step) {
                                if (pos[0] >= 0 && !(row[q] > best)) continue;
                                best = row[q], pos[0] = d, pos[1] = h, pos[2] = q;
                            }
                        }
                    }
                    const int64_t o = c * o_plane + (od * out[1] + oh) * out[2] + ow;
                    y[o] = best;
                    // A window of padding alone (ONNX forbids the pads that make one): the lowest float, index -1.
                    int64_t i = c * plane;
                    for (int k = first; k < 3; ++k) i += pos[k] * stride[k];
                    ind[o] = pos[0] < 0 ? -1 : i;
                }
            }
        }
    }
}

}  // namespace

const OpDef kPool3dDef = {kOp, validate, no_scratch, run, nullptr, nullptr};
const OpDef kMaxPoolIdxDef = {"maxpoolidx", validate_idx, no_scratch, run_idx, nullptr, nullptr};

}  // namespace accel_emu
