// quant_rules.cc - the three rule sets of quant_rules.h over the arithmetic of math/ (quantize, qtable,
// qpool, fixpoint), and the one place a graph's rule set picks its object.
#include "ops/quant_rules.h"

#include "math/exact_rounding.h"
#include "math/qpool.h"
#include "math/qtable.h"
#include "math/quantize.h"
#include "ops/quant_util.h"

namespace accel_emu {
namespace {

bool is_signed(const TensorDesc& t) { return t.dtype == ACCEL_DTYPE_INT8; }

// onnxruntime's QLinear* kernels: float32 multipliers, round half to even, no fused activation.
class OrtRules final : public QuantRules {
public:
    kern::ActRule fused_act_rule() const override { return kern::ActRule::MustBeNone; }
    bool fuses(Act act) const override { return act == Act::None; }
    bool has_qsoftmax() const override { return true; }
    bool takes_gemm_alpha() const override { return true; }
    QOut gemm_q8_out() const override { return QOut::Q8; }
    bool fixed_requant(const Node&, const TensorDesc&, const TensorDesc&, size_t, const TensorDesc&, FixedRequant*,
                       int32_t*, int32_t*) const override {
        return false;
    }
    QBinRule binary_rule(QBinOp op, const TensorDesc& a, const TensorDesc& b, const TensorDesc& y,
                         bool) const override {
        return qbinary_rule(op, kern::qparams(a), kern::qparams(b), kern::qparams(y));
    }
    void activation_table(const Node& n, const TensorDesc& x, const TensorDesc& y, uint8_t table[256]) const override {
        make_qtable(n.act, n.act_alpha, n.act_beta, kern::qparams(x), kern::qparams(y), table);
    }
    void quantize(const float* x, const TensorDesc& y, bool vector, void* out) const override {
        quantize_linear_into(x, y, vector, out);
    }
    void avg_pool(const PoolGeom& q, bool include_pad, const TensorDesc& x, const TensorDesc& y, const void* in,
                  void* out) const override {
        const auto* X = static_cast<const uint8_t*>(in);
        auto* Y = static_cast<uint8_t*>(out);
        for (int64_t p = 0; p < q.N * q.C; ++p)
            qavg_pool_plane(q, include_pad, X + p * q.H * q.W, Y + p * q.OH * q.OW, kern::qparams(x), kern::qparams(y));
    }
    void global_avg_pool(const TensorDesc& x, const TensorDesc& y, const void* in, void* out) const override {
        const int64_t planes = x.dims[0] * x.dims[1];
        qglobal_avg_pool(in, out, planes, x.numel / planes, kern::qparams(x), kern::qparams(y));
    }

    // y's quantization (scale and zero point per tensor or per axis), onnxruntime's QuantizeLinear; the BPU
    // quantizes the same way.
    static void quantize_linear_into(const float* x, const TensorDesc& y, bool vector, void* out) {
        const kern::AxisSplit s = kern::axis_split(y);
        quantize_linear(x, s.outer, s.channels, s.inner, y.quant.scales.data(), y.quant.zero_points.data(),
                        is_signed(y), out, vector);
    }
};

// What the two devices share: zero points 0, integer requantization with the activation fused into it, an
// average pool as a sum times a multiplier and a shift over kh * kw (count_include_pad or not), no qsoftmax.
class DeviceRules : public QuantRules {
public:
    kern::ActRule fused_act_rule() const override { return kern::ActRule::Fused; }
    bool fuses(Act act) const override { return act == Act::None || act == Act::Relu || act == Act::Clip; }
    bool has_qsoftmax() const override { return false; }
    bool takes_gemm_alpha() const override { return false; }
    QOut gemm_q8_out() const override { return QOut::Fixed; }
    void avg_pool(const PoolGeom& q, bool, const TensorDesc& x, const TensorDesc& y, const void* in,
                  void* out) const override {
        const auto* X = static_cast<const uint8_t*>(in);
        auto* Y = static_cast<uint8_t*>(out);
        const AvgCoef c = avgpool_coef(x, y, q.kh, q.kw);
        for (int64_t p = 0; p < q.N * q.C; ++p)
            fixed_avg_pool_plane(q, X + p * q.H * q.W, Y + p * q.OH * q.OW, c, is_signed(x));
    }
    void global_avg_pool(const TensorDesc& x, const TensorDesc& y, const void* in, void* out) const override {
        // The window is H x W (the last dim its width).
        const int64_t planes = x.dims[0] * x.dims[1];
        const int64_t w = x.ndim > 2 ? x.dims[x.ndim - 1] : 1, h = x.numel / planes / w;
        fixed_global_avg_pool(in, out, planes, h * w, avgpool_coef(x, y, h, w), is_signed(x));
    }

protected:
    // The average pool's multiplier and shift for a kh x kw window from x to y.
    virtual AvgCoef avgpool_coef(const TensorDesc& x, const TensorDesc& y, int64_t kh, int64_t kw) const = 0;
};

// The DPU's fix-point rules (math/fixpoint.h). The reader has checked that every quantized tensor of such a
// model has power-of-two scales and zero points 0.
class DpuRules final : public DeviceRules {
public:
    bool fuses(Act act) const override { return DeviceRules::fuses(act) || act == Act::LeakyRelu; }
    bool fixed_requant(const Node& n, const TensorDesc& x, const TensorDesc& w, size_t c, const TensorDesc& y,
                       FixedRequant* r, int32_t* y_min, int32_t* y_max) const override {
        if (!fuses(n.act)) return false;
        return dpu_conv_requant(kern::fix_point(x), kern::fix_point(w, c), kern::fix_point(y), n.act, n.act_alpha,
                                n.act_beta, r, y_min, y_max);
    }
    QBinRule binary_rule(QBinOp op, const TensorDesc& a, const TensorDesc& b, const TensorDesc& y,
                         bool relu) const override {
        const int32_t fa = kern::fix_point(a), fb = kern::fix_point(b), fy = kern::fix_point(y);
        const bool s = is_signed(y);
        return qbinary_fixed_rule(
            op, op == QBinOp::Add ? dpu_add_rule(fa, fb, fy, relu, s) : dpu_mul_rule(fa, fb, fy, relu, s), s);
    }
    void activation_table(const Node& n, const TensorDesc& x, const TensorDesc& y, uint8_t table[256]) const override {
        make_dpu_table(n.act, n.act_alpha, n.act_beta, kern::fix_point(x), is_signed(x), kern::fix_point(y),
                       is_signed(y), table);
    }
    // float2fix per element, the fix point of each channel.
    void quantize(const float* x, const TensorDesc& y, bool, void* out) const override {
        const kern::AxisSplit s = kern::axis_split(y);
        auto* o = static_cast<uint8_t*>(out);
        for (int64_t c = 0; c < s.channels; ++c) {
            const int32_t fp = kern::fix_point(y, static_cast<size_t>(c));
            for (int64_t i = 0; i < s.outer; ++i) {
                const int64_t base = (i * s.channels + c) * s.inner;
                for (int64_t j = 0; j < s.inner; ++j)
                    o[base + j] = static_cast<uint8_t>(dpu_quantize(x[base + j], fp, is_signed(y)));
            }
        }
    }

protected:
    AvgCoef avgpool_coef(const TensorDesc& x, const TensorDesc& y, int64_t kh, int64_t kw) const override {
        AvgCoef c = dpu_avgpool_coef(kh, kw);
        c.shift += kern::fix_point(x) - kern::fix_point(y);
        return c;
    }
};

// The BPU's rules: any scales, 15-bit multipliers (math/fixpoint.h).
class BpuRules final : public DeviceRules {
public:
    bool fixed_requant(const Node& n, const TensorDesc& x, const TensorDesc& w, size_t c, const TensorDesc& y,
                       FixedRequant* r, int32_t* y_min, int32_t* y_max) const override {
        if (!fuses(n.act)) return false;
        const double sy = y.quant.scales[0];
        *r = bpu_multiplier(double(x.quant.scales[0]) * w.quant.scales[c < w.quant.scales.size() ? c : 0] / sy);
        *y_min = n.act == Act::Relu ? 0 : -128, *y_max = 255;
        if (n.act == Act::Clip) clip_bounds(n.act_alpha, n.act_beta, sy, y_min, y_max);
        return true;
    }
    QBinRule binary_rule(QBinOp op, const TensorDesc& a, const TensorDesc& b, const TensorDesc& y,
                         bool relu) const override {
        const double sa = a.quant.scales[0], sb = b.quant.scales[0], sy = y.quant.scales[0];
        const bool s = is_signed(y);
        return qbinary_fixed_rule(
            op, op == QBinOp::Add ? bpu_add_rule(sa, sb, sy, relu, s) : bpu_mul_rule(sa, sb, sy, relu, s), s);
    }
    void activation_table(const Node& n, const TensorDesc& x, const TensorDesc& y, uint8_t table[256]) const override {
        make_bpu_table(n.act, n.act_alpha, n.act_beta, x.quant.scales[0], is_signed(x), y.quant.scales[0], is_signed(y),
                       table);
    }
    void quantize(const float* x, const TensorDesc& y, bool vector, void* out) const override {
        OrtRules::quantize_linear_into(x, y, vector, out);
    }

protected:
    AvgCoef avgpool_coef(const TensorDesc& x, const TensorDesc& y, int64_t kh, int64_t kw) const override {
        return bpu_avgpool_coef(x.quant.scales[0], y.quant.scales[0], kh, kw);
    }
};

const OrtRules kOrt;
const DpuRules kDpu;
const BpuRules kBpu;

}  // namespace

const QuantRules& quant_rules(const Graph& g) {
    switch (g.int8_rules) {
        case Int8Rules::Dpu: return kDpu;
        case Int8Rules::Bpu: return kBpu;
        case Int8Rules::Ort: break;
    }
    return kOrt;
}

}  // namespace accel_emu
