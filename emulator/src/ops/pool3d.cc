// pool3d.cc - max and average pooling over D, H and W with dilations (FORMAT.md op 83): MaxPool and
// AveragePool of 3-D inputs, and the dilated average pools the 2-D avgpool op does not take (the compiler
// lifts 1-D and 2-D pools to it with axes of one element). Each window's taps are bounds-checked, so any
// parameters the load-time check passes read inside the input.
#include <cmath>
#include <limits>

#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "pool3d";
enum Mode : int64_t { kMax = 0, kAvg = 1, kAvgWithPads = 2 };

size_t no_scratch(const Graph&, const Node&) { return 0; }

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
    for (int a = 0; a < 3; ++a) {
        if (p.kernel[a] < 1 || p.strides[a] < 1 || p.dilations[a] < 1 || p.pad_begin[a] < 0 || p.pad_end[a] < 0)
            return fail(err, kOp,
                        cat("axis ", axis[a], ": kernel ", p.kernel[a], ", stride ", p.strides[a], ", dilation ",
                            p.dilations[a], " must be >= 1 and pads ", p.pad_begin[a], ", ", p.pad_end[a], " >= 0"));
        const int64_t in = x.dims[2 + a], out = y.dims[2 + a];
        // Limits that keep the index arithmetic far from overflow, well past any real tensor.
        const int64_t big = int64_t(1) << 40;
        if (p.kernel[a] > big || p.strides[a] > big || p.dilations[a] > big || p.pad_begin[a] > big ||
            p.pad_end[a] > big)
            return fail(err, kOp, cat("axis ", axis[a], ": a parameter exceeds 2^40"));
        if ((out - 1) * p.strides[a] - p.pad_begin[a] >= in)
            return fail(err, kOp,
                        cat("axis ", axis[a], ": output size ", out, " has a window starting past input size ", in,
                            " (stride ", p.strides[a], ", pad ", p.pad_begin[a], ")"));
    }
    return true;
}

// One axis of one output position: its first tap, the taps' dilation and count, and onnxruntime's
// divisor factor counting pads.
struct Span { int64_t start, step, taps, padded; };

Span span(const Pool3dParams& p, int a, int64_t o, int64_t in) {
    Span s;
    s.start = o * p.strides[a] - p.pad_begin[a];
    s.step = p.dilations[a];
    s.taps = p.kernel[a];
    int64_t end = s.start + p.kernel[a] * p.dilations[a];
    if (end > in + p.pad_end[a]) end = in + p.pad_end[a];
    s.padded = 1 + (end - s.start - 1) / s.step;
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
                        if (d < 0 || d >= D) continue;
                        for (int64_t kh = 0, h = sh.start; kh < sh.taps; ++kh, h += sh.step) {
                            if (h < 0 || h >= H) continue;
                            const float* row = xc + (d * H + h) * W;
                            for (int64_t kw = 0, w = sw.start; kw < sw.taps; ++kw, w += sw.step) {
                                if (w < 0 || w >= W) continue;
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

}  // namespace

const OpDef kPool3dDef = {kOp, validate, no_scratch, run, nullptr, nullptr};

}  // namespace accel_emu
