// qconv.cc - the quantized 2-D convolution (FORMAT.md op 29): the checks, the packing of each group's
// weights with its requantization constants at load, and the run over images and groups through the int8
// GEMM (math/qgemm.h), whose code path (portable, AVX2, AVX-512 VNNI, AMX) is chosen when the model loads.
#include <vector>

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
    if (!kern::check_common(g, n, kOp, {2, 3, 2, 1}, kern::DTypeRule::Any, kern::ActRule::MustBeNone, err))
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

// The GEMM of group gi: its weights' zero points, its bias and its requantization multipliers, which
// `keep` holds while the spec points into it.
struct GroupSpec {
    QGemmSpec spec;
    std::vector<int32_t> w_zero, bias;
    std::vector<float> scale;
};

// The sizes and types of a group's GEMM (what the packed and scratch sizes depend on), no arrays.
QGemmSpec size_spec(const Graph& g, const Node& n, const ConvGeom& q) {
    QGemmSpec s;
    s.M = q.depthwise ? q.C : q.Mg;
    s.K = q.depthwise ? q.kh * q.kw : q.K;
    s.taps = q.kh * q.kw;
    s.w_signed = kern::input(g, n, 1)->dtype == ACCEL_DTYPE_INT8;
    s.x_signed = kern::input(g, n, 0)->dtype == ACCEL_DTYPE_INT8;
    s.out = QOut::Q8;
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
            qconv(packed + gi * stride, q, x + (i * q.C + gi * q.Cg) * HW, y + (i * q.M + gi * q.Mg) * q.P,
                  a.scratch);
}

}  // namespace

const OpDef kQConvDef = {kOp, validate, scratch_bytes, run, prepared_bytes, prepare};

}  // namespace accel_emu
