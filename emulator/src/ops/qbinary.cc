// qbinary.cc - qadd and qmul (FORMAT.md ops 32, 33): the checks, and a run through math/qbinary.cc.
#include "math/qbinary.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/quant_util.h"

namespace accel_emu {
namespace {

template <QBinOp OP>
bool validate(const Graph& g, const Node& n, std::string* err) {
    const char* op = OP == QBinOp::Add ? "qadd" : "qmul";
    if (!kern::check_common(g, n, op, {2, 2, 2, 1}, kern::DTypeRule::Any, kern::ActRule::MustBeNone, err)) return false;
    const TensorDesc& a = *kern::input(g, n, 0);
    const TensorDesc& b = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const auto per_tensor = kern::QuantShape::PerTensor;
    if (!kern::check_quantized(a, op, "input A", per_tensor, -1, false, err) ||
        !kern::check_quantized(b, op, "input B", per_tensor, -1, false, err) ||
        !kern::check_quantized(y, op, "output", per_tensor, -1, false, err))
        return false;
    if (!kern::same_dtype(a, y, op, "input A", err) || !kern::same_dtype(b, y, op, "input B", err)) return false;
    return kern::check_broadcast(a, b, y, op, err);
}

template <QBinOp OP>
void run(const KernelArgs& a) {
    const TensorDesc &ad = kern::in_desc(a, 0), &bd = kern::in_desc(a, 1), &yd = kern::out_desc(a, 0);
    qbinary_broadcast(OP, ad, bd, yd, kern::qparams(ad), kern::qparams(bd), kern::qparams(yd), a.in[0], a.in[1],
                      a.out[0], kern::vector_path(a));
}

size_t no_scratch(const Graph&, const Node&) { return 0; }

}  // namespace

const OpDef kQAddDef = {"qadd",           validate<QBinOp::Add>, no_scratch,
                        run<QBinOp::Add>, kern::path_bytes,      kern::record_path};
const OpDef kQMulDef = {"qmul",           validate<QBinOp::Mul>, no_scratch,
                        run<QBinOp::Mul>, kern::path_bytes,      kern::record_path};

}  // namespace accel_emu
