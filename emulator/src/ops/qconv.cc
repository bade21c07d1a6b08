// qconv.cc - the quantized 2-D convolutions qconv and convinteger (FORMAT.md ops 29, 40): the checks, the packing of
// each group's weights with its requantization constants at load, and the run over images and groups through the int8
// GEMM (math/qgemm.h), whose code path (portable, AVX2, AVX-512 VNNI, AMX) is chosen when the model loads.
#include <vector>

#include "math/exact_rounding.h"
#include "math/fixpoint.h"
#include "math/im2col.h"
#include "math/qgemm.h"
#include "ops/conv_shape.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/quant_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "qconv";

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, err) || !kern::check_device_act(g, n, err) || !kern::check_fused_act(g, n, kOp, err))
        return false;
    const auto per_tensor = kern::QuantShape::PerTensor;
    if (!kern::check_quantized(*kern::input(g, n, 0), kOp, "input", per_tensor, -1, false, err) ||
        !kern::check_quantized(*kern::input(g, n, 1), kOp, "weight", kern::QuantShape::PerTensorOrAxis, 0, false,
                               err) ||
        !kern::check_quantized(kern::output(g, n, 0), kOp, "output", per_tensor, -1, false, err))
        return false;
    const TensorDesc* b = kern::input(g, n, 2);
    if (b && b->dtype != ACCEL_DTYPE_INT32) return kern::fail(err, kOp, cat("bias '", b->name, "' is not int32"));
    ConvGeom q;
    return kern::check_conv_shapes(g, n, kOp, &q, err);
}

// The GEMM of a group: its spec, and the weights' zero points, bias and requantization multipliers that
// the spec points into.
struct GroupSpec {
    QGemmSpec spec;
    std::vector<int32_t> w_zero, bias;
    std::vector<float> scale;
    std::vector<FixedRequant> fixed;
};

// The sizes and types of a group's GEMM (what the packed and scratch sizes depend on), no arrays.
QGemmSpec size_spec(const Graph& g, const Node& n, const ConvGeom& q) {
    QGemmSpec s;
    s.M = q.depthwise ? q.C : q.Mg;
    s.K = q.depthwise ? q.kh * q.kw : q.K;
    s.taps = q.kh * q.kw;
    s.w_signed = kern::input(g, n, 1)->dtype == ACCEL_DTYPE_INT8;
    s.x_signed = kern::input(g, n, 0)->dtype == ACCEL_DTYPE_INT8;
    s.out = quant_rules(g).gemm_q8_out();
    s.y_signed = kern::output(g, n, 0).dtype == ACCEL_DTYPE_INT8;
    return s;
}

void group_spec(const Graph& g, const Node& n, const ConvGeom& q, int64_t gi, const void* bias, GroupSpec* out) {
    const TensorDesc& w = *kern::input(g, n, 1);
    const QParams xp = kern::qparams(*kern::input(g, n, 0)), yp = kern::qparams(kern::output(g, n, 0));
    QGemmSpec& s = out->spec;
    s = size_spec(g, n, q);
    const int64_t m0 = q.depthwise ? 0 : gi * q.Mg;
    out->w_zero.resize(s.M);
    out->bias.resize(s.M);
    out->scale.resize(s.M);
    for (int64_t m = 0; m < s.M; ++m) {
        const size_t c = w.quant.scales.size() > 1 ? static_cast<size_t>(m0 + m) : 0;
        out->w_zero[m] = w.quant.zero_points[c];
        out->bias[m] = bias ? static_cast<const int32_t*>(bias)[m0 + m] : 0;
        out->scale[m] = (xp.scale * w.quant.scales[c]) / yp.scale;  // float32, as onnxruntime orders it
    }
    if (s.out == QOut::Fixed) {  // a device's rules: an integer requantization per channel, the activation in it
        out->fixed.resize(s.M);
        for (int64_t m = 0; m < s.M; ++m)
            quant_rules(g).fixed_requant(n, *kern::input(g, n, 0), w, static_cast<size_t>(m0 + m),
                                         kern::output(g, n, 0), &out->fixed[m], &s.y_min, &s.y_max);
        s.fixed = out->fixed.data();
    }
    s.x_zero = xp.zero;
    s.w_zero = out->w_zero.data();
    s.bias = out->bias.data();
    s.scale = out->scale.data();
    s.y_zero = yp.zero;
}

// Bytes of one group's packed blob, enough for whichever path the load picks.
size_t blob_bytes(const QGemmSpec& s, bool depthwise) {
    return depthwise ? kern::qdepthwise_packed_max(s) : kern::qgemm_packed_max(s);
}

size_t prepared_bytes(const Graph& g, const Node& n) {
    const ConvGeom q = kern::conv_geometry(g, n);
    return blob_bytes(size_spec(g, n, q), q.depthwise) * static_cast<size_t>(q.depthwise ? 1 : q.G);
}

void prepare(const Graph& g, const Node& n, const void* const* in, void* out) {
    const ConvGeom q = kern::conv_geometry(g, n);
    const QIsa isa = qisa_select();
    const auto* w = static_cast<const uint8_t*>(in[1]);
    const void* bias = n.inputs.size() > 2 && n.inputs[2] != kAbsent ? in[2] : nullptr;
    GroupSpec gs;
    if (q.depthwise) {
        group_spec(g, n, q, 0, bias, &gs);
        qdepthwise_pack(isa, gs.spec, w, out);
        return;
    }
    const size_t stride = blob_bytes(size_spec(g, n, q), false);
    for (int64_t gi = 0; gi < q.G; ++gi) {
        group_spec(g, n, q, gi, bias, &gs);
        qgemm_pack(isa, gs.spec, w + gi * q.Mg * q.K, static_cast<uint8_t*>(out) + gi * stride);
    }
}

size_t scratch_bytes(const Graph& g, const Node& n) {
    const ConvGeom q = kern::conv_geometry(g, n);
    return kern::qconv_scratch_max(size_spec(g, n, q), q);
}

void run(const KernelArgs& a) {
    const ConvGeom q = kern::conv_geometry(*a.graph, *a.node);
    const auto* x = static_cast<const uint8_t*>(a.in[0]);
    auto* y = static_cast<uint8_t*>(a.out[0]);
    const auto* packed = static_cast<const uint8_t*>(a.prepared);
    const int64_t HW = q.H * q.W;
    if (q.depthwise) {
        for (int64_t i = 0; i < q.N; ++i) qdepthwise(packed, q, x + i * q.C * HW, y + i * q.M * q.P, a.scratch);
        return;
    }
    const size_t stride = blob_bytes(size_spec(*a.graph, *a.node, q), false);
    for (int64_t i = 0; i < q.N; ++i)
        for (int64_t gi = 0; gi < q.G; ++gi)
            qconv(packed + gi * stride, q, x + (i * q.C + gi * q.Cg) * HW, y + (i * q.M + gi * q.Mg) * q.P, a.scratch);
}

// ---- convinteger ----
//
// Each group's GEMM runs on an im2col of the input whose padding holds X_zero, with X's zero point 0 in the
// GEMM (X_zero may be known only at run time); the run then subtracts X_zero * R[m] from each sum, R[m] =
// sum_k (W[m][k] - W_zero[m]), which makes the padding's taps add 0 as they should.

bool validate_convinteger(const Graph& g, const Node& n, std::string* err) {
    const char* op = "convinteger";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc &x = *kern::input(g, n, 0), &w = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    if (!kern::is_q8(x) || !kern::is_q8(w) || y.dtype != ACCEL_DTYPE_INT32)
        return kern::fail(err, op, "takes int8 or uint8 X and W and gives int32 Y");
    const TensorDesc *xz = kern::input(g, n, 2), *wz = kern::input(g, n, 3);
    if (xz && (xz->dtype != x.dtype || xz->numel != 1))
        return kern::fail(err, op, kern::cat("X's zero point '", xz->name, "' is not one value of X's dtype"));
    if (wz && (wz->dtype != w.dtype || wz->kind != TensorKind::Constant || (wz->numel != 1 && wz->numel != w.dims[0])))
        return kern::fail(err, op,
                          kern::cat("W's zero point '", wz->name, "' is not a constant of W's dtype with 1 or ",
                                    w.dims[0], " values"));
    ConvGeom q;
    return kern::check_conv_shapes(g, n, op, &q, err);
}

QGemmSpec integer_spec(const Graph& g, const Node& n, const ConvGeom& q) {
    QGemmSpec s;
    s.M = q.Mg;
    s.K = q.K;
    s.w_signed = kern::input(g, n, 1)->dtype == ACCEL_DTYPE_INT8;
    s.x_signed = kern::input(g, n, 0)->dtype == ACCEL_DTYPE_INT8;
    s.out = QOut::Int32;
    return s;
}

// The prepared block: R[M] and W_zero[M] (int32), then each group's packed weights.
size_t integer_head(const ConvGeom& q) { return kern::align64(static_cast<size_t>(q.M) * 8); }

size_t prepared_convinteger(const Graph& g, const Node& n) {
    const ConvGeom q = kern::conv_geometry(g, n);
    return integer_head(q) + kern::qgemm_packed_max(integer_spec(g, n, q)) * static_cast<size_t>(q.G);
}

void prepare_convinteger(const Graph& g, const Node& n, const void* const* in, void* out) {
    const ConvGeom q = kern::conv_geometry(g, n);
    const TensorDesc& w = *kern::input(g, n, 1);
    const TensorDesc* wz = kern::input(g, n, 3);
    auto* R = static_cast<int32_t*>(out);
    int32_t* zeros = R + q.M;
    const auto* wb = static_cast<const uint8_t*>(in[1]);
    for (int64_t m = 0; m < q.M; ++m) zeros[m] = wz ? kern::q8_at(*wz, in[3], wz->numel > 1 ? m : 0) : 0;
    kern::weight_row_sums(wb, w.dtype == ACCEL_DTYPE_INT8, zeros, q.M, q.K, R);
    QGemmSpec s = integer_spec(g, n, q);
    const size_t stride = kern::qgemm_packed_max(s);
    const QIsa isa = qisa_select();
    for (int64_t gi = 0; gi < q.G; ++gi) {
        s.w_zero = zeros + gi * q.Mg;
        qgemm_pack(isa, s, wb + gi * q.Mg * q.K, static_cast<uint8_t*>(out) + integer_head(q) + gi * stride);
    }
}

size_t col_bytes(const ConvGeom& q) { return kern::align64(static_cast<size_t>(q.K * q.P)); }

size_t scratch_convinteger(const Graph& g, const Node& n) {
    const ConvGeom q = kern::conv_geometry(g, n);
    return col_bytes(q) + kern::qgemm_scratch_max(integer_spec(g, n, q), q.P);
}

void run_convinteger(const KernelArgs& a) {
    const Graph& g = *a.graph;
    const Node& n = *a.node;
    const ConvGeom q = kern::conv_geometry(g, n);
    const auto* x = static_cast<const uint8_t*>(a.in[0]);
    auto* y = static_cast<int32_t*>(a.out[0]);
    const auto* head = static_cast<const uint8_t*>(a.prepared);
    const auto* R = reinterpret_cast<const int32_t*>(head);
    const size_t stride = kern::qgemm_packed_max(integer_spec(g, n, q));
    const bool has_zero = n.inputs.size() > 2 && n.inputs[2] != kAbsent;
    const uint8_t pad = has_zero ? *static_cast<const uint8_t*>(a.in[2]) : 0;  // the zero point's byte
    const int32_t xz = has_zero ? kern::q8_at(kern::in_desc(a, 2), a.in[2], 0) : 0;
    auto* col = static_cast<uint8_t*>(a.scratch);
    void* rest = col + col_bytes(q);
    for (int64_t i = 0; i < q.N; ++i)
        for (int64_t gi = 0; gi < q.G; ++gi) {
            im2col(q, x + (i * q.C + gi * q.Cg) * q.H * q.W, 0, q.P, pad, col);
            int32_t* yg = y + (i * q.M + gi * q.Mg) * q.P;
            qgemm_wx(head + integer_head(q) + gi * stride, q.P, col, q.P, yg, q.P, rest);
            if (xz == 0) continue;
            for (int64_t m = 0; m < q.Mg; ++m) {
                const uint32_t c = static_cast<uint32_t>(xz) * static_cast<uint32_t>(R[gi * q.Mg + m]);
                for (int64_t p = 0; p < q.P; ++p)
                    yg[m * q.P + p] = static_cast<int32_t>(static_cast<uint32_t>(yg[m * q.P + p]) - c);
            }
        }
}

}  // namespace

const OpDef kConvIntegerDef = {"convinteger",   validate_convinteger, scratch_convinteger,
                               run_convinteger, prepared_convinteger, prepare_convinteger};
const OpDef kQConvDef = {kOp, validate, scratch_bytes, run, prepared_bytes, prepare};

}  // namespace accel_emu
