// quant_util.cc - the checks of quantized tensors that the quantized ops' validate functions share.
#include "ops/quant_util.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "dtypes.h"
#include "math/exact_rounding.h"
#include "math/fixpoint.h"
#include "ops/op_util.h"
#include "ops/quant_rules.h"

namespace accel_emu {
namespace kern {

bool check_quantized(const TensorDesc& t, const char* op, const char* role, QuantShape shape, int axis,
                     bool allow_int32, std::string* err) {
    const std::string who = cat(role, " '", t.name, "'");
    if (!is_q8(t) && !(allow_int32 && t.dtype == ACCEL_DTYPE_INT32))
        return fail(
            err, op,
            cat(who, " is ", dtype_name(t.dtype), ", not ", allow_int32 ? "int8, uint8 or int32" : "int8 or uint8"));
    const Quant& q = t.quant;
    if (q.type != ACCEL_QUANT_PER_TENSOR && q.type != ACCEL_QUANT_PER_AXIS && q.type != ACCEL_QUANT_SHIFT)
        return fail(err, op, cat(who, " has no scale and zero point (quant_type ", q.type, ")"));
    const size_t count = q.scales.size();
    if (count < 1 || q.zero_points.size() != count)
        return fail(err, op, cat(who, " has ", count, " scales and ", q.zero_points.size(), " zero points"));
    if (count > 1) {
        if (shape == QuantShape::PerTensor)
            return fail(err, op, cat(who, " is quantized per axis (", count, " scales); per tensor only"));
        if (axis >= 0 && q.axis != axis)
            return fail(err, op, cat(who, " is quantized along axis ", q.axis, "; only axis ", axis, " is supported"));
    }
    int64_t lo = INT32_MIN, hi = INT32_MAX;
    if (t.dtype == ACCEL_DTYPE_INT8) lo = -128, hi = 127;
    if (t.dtype == ACCEL_DTYPE_UINT8) lo = 0, hi = 255;
    for (size_t i = 0; i < count; ++i) {
        const float s = q.scales[i];
        if (!std::isfinite(s) || !(s > 0.f)) return fail(err, op, cat(who, " scale ", s, " is not finite and > 0"));
        if (q.zero_points[i] < lo || q.zero_points[i] > hi)
            return fail(err, op, cat(who, " zero point ", q.zero_points[i], " is outside ", dtype_name(t.dtype)));
    }
    return true;
}

AxisSplit axis_split(const TensorDesc& t) {
    if (t.quant.scales.size() <= 1 || t.quant.axis < 0) return {1, 1, t.numel};
    AxisSplit s{1, t.dims[t.quant.axis], 1};
    for (int i = 0; i < t.quant.axis; ++i) s.outer *= t.dims[i];
    for (int i = t.quant.axis + 1; i < t.ndim; ++i) s.inner *= t.dims[i];
    return s;
}

size_t path_bytes(const Graph&, const Node&) { return kPathBytes; }

void record_path(const Graph&, const Node&, const void* const*, void* out) {
    *static_cast<int32_t*>(out) = static_cast<int32_t>(qisa_select());
}

void weight_row_sums(const uint8_t* w, bool w_signed, const int32_t* zero, int64_t M, int64_t K, int32_t* r) {
    for (int64_t m = 0; m < M; ++m) {
        uint32_t sum = 0;
        for (int64_t k = 0; k < K; ++k)
            sum += static_cast<uint32_t>(w_signed ? static_cast<int8_t>(w[m * K + k]) : w[m * K + k]);
        r[m] = static_cast<int32_t>(sum - static_cast<uint32_t>(zero[m]) * static_cast<uint32_t>(K));
    }
}

namespace {

// The scratch a run on isa needs, from zero weights of spec's shape packed for it (the size depends on
// the packed header).
size_t scratch_of(QIsa isa, const QGemmSpec& spec, const ConvGeom* q, int64_t N) {
    const bool depthwise = q && q->depthwise;
    const std::vector<uint8_t> w(static_cast<size_t>(spec.M * spec.K), 0);
    std::vector<uint8_t> blob((depthwise ? qdepthwise_packed_bytes(isa, spec) : qgemm_packed_bytes(isa, spec)) + 64);
    void* p = blob.data() + (64 - reinterpret_cast<uintptr_t>(blob.data()) % 64) % 64;
    if (depthwise) {
        qdepthwise_pack(isa, spec, w.data(), p);
        return qdepthwise_scratch_bytes(p, *q);
    }
    qgemm_pack(isa, spec, w.data(), p);
    return q ? qconv_scratch_bytes(p, *q) : qgemm_scratch_bytes(p, N);
}

}  // namespace

size_t qgemm_packed_max(const QGemmSpec& spec) {
    size_t most = 0;
    for (QIsa isa : kAllIsas) most = std::max(most, qgemm_packed_bytes(isa, spec));
    return align64(most);
}

size_t qdepthwise_packed_max(const QGemmSpec& spec) {
    size_t most = 0;
    for (QIsa isa : kAllIsas) most = std::max(most, qdepthwise_packed_bytes(isa, spec));
    return align64(most);
}

size_t qgemm_scratch_max(const QGemmSpec& spec, int64_t N) {
    size_t most = 0;
    for (QIsa isa : kAllIsas) most = std::max(most, scratch_of(isa, spec, nullptr, N));
    return most;
}

size_t qconv_scratch_max(const QGemmSpec& spec, const ConvGeom& q) {
    size_t most = 0;
    for (QIsa isa : kAllIsas) most = std::max(most, scratch_of(isa, spec, &q, 0));
    return most;
}

int32_t fix_point(const TensorDesc& t, size_t i) {
    int32_t fp = 0;
    fix_point_of(t.quant.scales[i < t.quant.scales.size() ? i : 0], &fp);
    return fp;
}

bool check_device_act(const Graph& g, const Node& n, std::string* err) {
    if (quant_rules(g).fused_act_rule() != ActRule::MustBeNone || n.act == Act::None) return true;
    return fail(err, op_contract(n.op).name, cat("fused activation ", uint32_t(n.act), " not supported"));
}

bool check_fused_act(const Graph& g, const Node& n, const char* op, std::string* err) {
    if (quant_rules(g).fuses(n.act)) return true;
    return fail(err, op, cat("activation ", uint32_t(n.act), " is not one the device's int8 rules fuse"));
}

}  // namespace kern
}  // namespace accel_emu
