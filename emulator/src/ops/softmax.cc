// softmax.cc - softmax, qsoftmax and logsoftmax (FORMAT.md ops 15, 37, 51), max-subtracted. coerce_2d = 0: over one
// axis (opset >= 13); 1: over all dims from the axis on (opset < 13), i.e. rows of the input flattened to 2-D there.
// qsoftmax's table of exponentials is made at load.
#include <type_traits>

#include "math/exact_rounding.h"
#include "math/qsoftmax.h"
#include "math/softmax.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/quant_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "softmax";

// P: SoftmaxParams, QSoftmaxParams or LogSoftmaxParams (the same fields).
template <class P>
bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    constexpr bool kQuantized = std::is_same_v<P, QSoftmaxParams>;
    const char* op = kQuantized ? "qsoftmax" : std::is_same_v<P, LogSoftmaxParams> ? "logsoftmax" : kOp;
    if (!kern::check_common(g, n, err)) return false;
    if (kQuantized && !quant_rules(g).has_qsoftmax())
        return kern::fail(err, op,
                          "is onnxruntime's QLinearSoftmax, not one of the devices' int8 rules' ops (a device runs "
                          "softmax in float: DQ -> softmax -> Q)");
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (kQuantized) {
        const auto pt = kern::QuantShape::PerTensor;
        if (!kern::check_quantized(x, op, "input", pt, -1, false, err) ||
            !kern::check_quantized(y, op, "output", pt, -1, false, err) || !kern::same_dtype(x, y, op, "input", err))
            return false;
    }
    if (!kern::check_same_shape(x, y, op, err)) return false;
    const P p = P::of(n);
    if (p.axis < 0 || p.axis >= x.ndim) return kern::fail(err, op, cat("axis ", p.axis, " outside 0..", x.ndim - 1));
    if (p.coerce_2d != 0 && p.coerce_2d != 1)
        return kern::fail(err, op, cat("mode ", p.coerce_2d, " is not 0 (one axis) or 1 (axis and after)"));
    return true;
}

// The rows of a softmax node: outer x n elements (stride inner) x inner.
template <class P>
void rows_of(const TensorDesc& xd, const Node& node, int64_t* outer, int64_t* n, int64_t* inner) {
    const P p = P::of(node);
    const int axis = static_cast<int>(p.axis);
    *outer = kern::prod(xd.dims, 0, axis);
    *n = xd.dims[axis];
    *inner = kern::prod(xd.dims, axis + 1, xd.ndim);
    if (p.coerce_2d == 1) *n *= *inner, *inner = 1;
}

size_t scratch_bytes(const Graph&, const Node&) { return 0; }

template <class P>
void run(const KernelArgs& a) {
    constexpr bool kLog = std::is_same_v<P, LogSoftmaxParams>;
    int64_t outer, n, inner;
    rows_of<P>(kern::in_desc(a, 0), *a.node, &outer, &n, &inner);
    if (inner == 1) {  // rows across the core's threads (each row's arithmetic is its own: any split, same bits)
        const float* x = kern::in_f(a, 0);
        float* y = kern::out_f(a, 0);
        a.par->for_ranges(outer, split_parts(outer, outer * n, kMinElemsPerPart),
                          [&](int64_t r0, int64_t r1, int) { softmax_rows(x + r0 * n, y + r0 * n, r1 - r0, n, kLog); });
    } else softmax_strided(kern::in_f(a, 0), kern::out_f(a, 0), outer, n, inner, kLog);
}

size_t table_bytes(const Graph&, const Node&) { return 256 * sizeof(float); }

void make_table(const Graph& g, const Node& node, const void* const*, void* out) {
    const TensorDesc& xd = *kern::input(g, node, 0);
    int64_t outer, n, inner;
    rows_of<QSoftmaxParams>(xd, node, &outer, &n, &inner);
    qsoftmax_table(kern::qparams(xd).scale, n, static_cast<float*>(out));
}

void run_q(const KernelArgs& a) {
    int64_t outer, n, inner;
    rows_of<QSoftmaxParams>(kern::in_desc(a, 0), *a.node, &outer, &n, &inner);
    qsoftmax(static_cast<const float*>(a.prepared), a.in[0], a.out[0], outer, n, inner,
             kern::qparams(kern::out_desc(a, 0)));
}

}  // namespace

const OpDef kSoftmaxDef = {kOp, validate<SoftmaxParams>, scratch_bytes, run<SoftmaxParams>, nullptr, nullptr};
const OpDef kLogSoftmaxDef = {"logsoftmax", validate<LogSoftmaxParams>, scratch_bytes, run<LogSoftmaxParams>, nullptr,
                              nullptr};
const OpDef kQSoftmaxDef = {"qsoftmax", validate<QSoftmaxParams>, scratch_bytes, run_q, table_bytes, make_table};

}  // namespace accel_emu
