// quant_util.cc - the checks of quantized tensors that the quantized ops' validate functions share.
#include "ops/quant_util.h"

#include <cmath>

#include "dtypes.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace kern {

bool check_quantized(const TensorDesc& t, const char* op, const char* role, QuantShape shape, int axis,
                     bool allow_int32, std::string* err) {
    const std::string who = cat(role, " '", t.name, "'");
    if (!is_q8(t) && !(allow_int32 && t.dtype == ACCEL_DTYPE_INT32))
        return fail(err, op, cat(who, " is ", dtype_name(t.dtype), ", not ", allow_int32 ? "int8, uint8 or int32"
                                                                                         : "int8 or uint8"));
    const Quant& q = t.quant;
    if (q.type != ACCEL_QUANT_PER_TENSOR && q.type != ACCEL_QUANT_PER_AXIS)
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

}  // namespace kern
}  // namespace accel_emu
