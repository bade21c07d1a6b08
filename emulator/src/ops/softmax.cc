// softmax.cc - softmax (FORMAT.md op 15), max-subtracted. coerce_2d = 0: over one axis (opset >= 13);
// 1: over all dims from the axis on (opset < 13), i.e. rows of the input flattened to 2-D there.
#include "math/softmax.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "softmax";

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, kOp, {1, 1, 1, 1}, kern::DTypeRule::Float32, kern::ActRule::MustBeNone, err))
        return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dims(x, y))
        return kern::fail(err, kOp, cat("output shape ", kern::dims_str(y), " differs from input ", kern::dims_str(x)));
    const SoftmaxParams p = SoftmaxParams::of(n);
    if (p.axis < 0 || p.axis >= x.ndim) return kern::fail(err, kOp, cat("axis ", p.axis, " outside 0..", x.ndim - 1));
    if (p.coerce_2d != 0 && p.coerce_2d != 1)
        return kern::fail(err, kOp, cat("mode ", p.coerce_2d, " is not 0 (one axis) or 1 (axis and after)"));
    return true;
}

size_t scratch_bytes(const Graph&, const Node&) { return 0; }

void run(const KernelArgs& a) {
    const TensorDesc& xd = kern::in_desc(a, 0);
    const SoftmaxParams p = SoftmaxParams::of(*a.node);
    const int axis = static_cast<int>(p.axis);
    const int64_t outer = kern::prod(xd.dims, 0, axis);
    const int64_t n = xd.dims[axis];
    const int64_t inner = kern::prod(xd.dims, axis + 1, xd.ndim);
    if (p.coerce_2d == 1 || inner == 1) softmax_rows(kern::in_f(a, 0), kern::out_f(a, 0), outer, n * inner);
    else softmax_strided(kern::in_f(a, 0), kern::out_f(a, 0), outer, n, inner);
}

}  // namespace

const OpDef kSoftmaxDef = {kOp, validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
