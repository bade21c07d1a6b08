// roialign.cc - ONNX RoiAlign (FORMAT.md op 84): each region of interest of an image cut into bins, each bin
// the average or the max of bilinear samples on a grid. Float steps are onnxruntime's, in its order, without
// contraction. Batch indices come at run time: one outside the batch fails the job (ops.h's data faults), as
// a region whose adaptive sampling grid is absurd (NaN, or more than kMaxGrid points on an axis) does,
// since onnxruntime's result there is an allocation failure or undefined.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "math/exact_rounding.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "roialign";
constexpr float kMaxGrid = 1024.f;

using kern::no_scratch;

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& r = *kern::input(g, n, 1);
    const TensorDesc& b = *kern::input(g, n, 2);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.dtype != ACCEL_DTYPE_FLOAT32 || r.dtype != ACCEL_DTYPE_FLOAT32 || y.dtype != ACCEL_DTYPE_FLOAT32)
        return fail(err, kOp, "X, R and Y must be float32");
    if (b.dtype != ACCEL_DTYPE_INT64) return fail(err, kOp, cat("B is ", dtype_name(b.dtype), ", not int64"));
    if (x.ndim != 4) return fail(err, kOp, cat("input ", kern::dims_str(x), " is not 4-D"));
    if (r.ndim != 2 || r.dims[1] != 4 || b.ndim != 1 || b.dims[0] != r.dims[0])
        return fail(
            err, kOp,
            cat("regions ", kern::dims_str(r), " and batch indices ", kern::dims_str(b), " are not [K, 4] and [K]"));
    if (y.ndim != 4 || y.dims[0] != r.dims[0] || y.dims[1] != x.dims[1])
        return fail(err, kOp,
                    cat("output ", kern::dims_str(y), " is not [K, C, OH, OW] for input ", kern::dims_str(x), " and ",
                        r.dims[0], " regions"));
    const RoiAlignParams p = RoiAlignParams::of(n);
    if (p.mode != 0 && p.mode != 1) return fail(err, kOp, cat("mode ", p.mode, " is not 0 or 1"));
    if (p.half_pixel != 0 && p.half_pixel != 1)
        return fail(err, kOp, cat("half_pixel ", p.half_pixel, " is not 0 or 1"));
    if (p.sampling_ratio < 0 || p.sampling_ratio > static_cast<int64_t>(kMaxGrid))
        return fail(err, kOp, cat("sampling_ratio ", p.sampling_ratio, " is outside 0..", kMaxGrid));
    if (!std::isfinite(p.spatial_scale))
        return fail(err, kOp, cat("spatial_scale ", p.spatial_scale, " is not finite"));
    if (kern::constant_known(g, b)) {
        for (int64_t i = 0; i < b.numel; ++i) {
            const int64_t v = kern::constant_index(g, b, i);
            if (v < 0 || v >= x.dims[0])
                return fail(err, kOp, cat("batch index ", v, " at position ", i, " is outside 0..", x.dims[0] - 1));
        }
    }
    return true;
}

// One bilinear sample: four element offsets in the plane and their weights (onnxruntime's pre-calc).
struct Sample {
    int64_t pos[4];
    float w[4];
};

Sample sample(float y, float x, int64_t H, int64_t W) {
    Sample s{{0, 0, 0, 0}, {0.f, 0.f, 0.f, 0.f}};
    if (!(y >= -1.f && y <= static_cast<float>(H) && x >= -1.f && x <= static_cast<float>(W))) return s;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
    if (y_low >= H - 1) {
        y_high = y_low = H - 1;
        y = static_cast<float>(y_low);
    } else {
        y_high = y_low + 1;
    }
    if (x_low >= W - 1) {
        x_high = x_low = W - 1;
        x = static_cast<float>(x_low);
    } else {
        x_high = x_low + 1;
    }
    const float ly = y - static_cast<float>(y_low), lx = x - static_cast<float>(x_low);
    const float hy = 1.f - ly, hx = 1.f - lx;
    s.pos[0] = y_low * W + x_low, s.pos[1] = y_low * W + x_high;
    s.pos[2] = y_high * W + x_low, s.pos[3] = y_high * W + x_high;
    s.w[0] = hy * hx, s.w[1] = hy * lx, s.w[2] = ly * hx, s.w[3] = ly * lx;
    return s;
}

void run(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const TensorDesc& yd = kern::out_desc(a, 0);
    const RoiAlignParams p = RoiAlignParams::of(*a.node);
    const int64_t N = xd.dims[0], C = xd.dims[1], H = xd.dims[2], W = xd.dims[3];
    const int64_t K = yd.dims[0], OH = yd.dims[2], OW = yd.dims[3];
    const float* x = kern::in_f(a, 0);
    const float* rois = kern::in_f(a, 1);
    const int64_t* batch = static_cast<const int64_t*>(a.in[2]);
    float* y = kern::out_f(a, 0);
    const float offset = p.half_pixel ? 0.5f : 0.f, scale = p.spatial_scale;
    for (int64_t k = 0; k < K; ++k) {
        const int64_t b = batch[k];
        if (b < 0 || b >= N) {
            DataFault f;
            f.what = "batch index";
            f.input = 2, f.position = k, f.value = b, f.lo = 0, f.hi = N - 1, f.range_input = 0, f.range_axis = 0;
            a.report(f);
            continue;
        }
        const float* r = rois + k * 4;
        const float start_w = r[0] * scale - offset, start_h = r[1] * scale - offset;
        const float end_w = r[2] * scale - offset, end_h = r[3] * scale - offset;
        float roi_w = end_w - start_w, roi_h = end_h - start_h;
        if (!p.half_pixel) roi_w = std::max(roi_w, 1.f), roi_h = std::max(roi_h, 1.f);
        const float bin_h = roi_h / static_cast<float>(OH), bin_w = roi_w / static_cast<float>(OW);
        int64_t gh = p.sampling_ratio, gw = p.sampling_ratio;
        if (p.sampling_ratio == 0) {
            const float fh = std::ceil(roi_h / static_cast<float>(OH)), fw = std::ceil(roi_w / static_cast<float>(OW));
            if (!(fh <= kMaxGrid && fw <= kMaxGrid && fh >= -kMaxGrid && fw >= -kMaxGrid)) {
                DataFault f;
                f.what = "region (its sampling grid past 1024 points an axis)";
                f.input = 1, f.position = k * 4,
                f.value = std::isfinite(fh) && std::isfinite(fw) ? static_cast<int64_t>(std::max(fh, fw)) : -1;
                f.lo = 0, f.hi = static_cast<int64_t>(kMaxGrid);
                a.report(f);
                continue;
            }
            gh = static_cast<int64_t>(fh), gw = static_cast<int64_t>(fw);
        }
        const float count = static_cast<float>(std::max<int64_t>(gh * gw, 1));
        for (int64_t c = 0; c < C; ++c) {
            const float* plane = x + (b * C + c) * H * W;
            float* yc = y + (k * C + c) * OH * OW;
            for (int64_t ph = 0; ph < OH; ++ph) {
                for (int64_t pw = 0; pw < OW; ++pw) {
                    float out = 0.f;
                    bool first = true;
                    for (int64_t iy = 0; iy < gh; ++iy) {
                        const float yy = start_h + static_cast<float>(ph) * bin_h +
                                         static_cast<float>(iy + .5f) * bin_h / static_cast<float>(gh);
                        for (int64_t ix = 0; ix < gw; ++ix) {
                            const float xx = start_w + static_cast<float>(pw) * bin_w +
                                             static_cast<float>(ix + .5f) * bin_w / static_cast<float>(gw);
                            const Sample s = sample(yy, xx, H, W);
                            if (p.mode == 0) {
                                out += s.w[0] * plane[s.pos[0]] + s.w[1] * plane[s.pos[1]] + s.w[2] * plane[s.pos[2]] +
                                       s.w[3] * plane[s.pos[3]];
                            } else {
                                const float v =
                                    std::max(std::max(std::max(s.w[0] * plane[s.pos[0]], s.w[1] * plane[s.pos[1]]),
                                                      s.w[2] * plane[s.pos[2]]),
                                             s.w[3] * plane[s.pos[3]]);
                                out = first ? v : std::max(out, v);
                                first = false;
                            }
                        }
                    }
                    yc[ph * OW + pw] = p.mode == 0 ? out / count : out;
                }
            }
        }
    }
}

}  // namespace

const OpDef kRoiAlignDef = {kOp, validate, no_scratch, run, nullptr, nullptr};

}  // namespace accel_emu
