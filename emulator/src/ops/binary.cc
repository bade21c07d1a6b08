// binary.cc - add, sub, mul, div, pow, min, max, mod, fmod, bitand, bitor, bitxor, shl, shr with numpy
// broadcasting (FORMAT.md ops 4-7, 21-23, 52-58): the shape and dtype checks, and a run through the one
// broadcast implementation (math/broadcast.cc): float32 with a fused activation (all but the bit operations),
// or one integer dtype without one (all but pow).
#include "math/broadcast.h"
#include "math/int_types.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

// The bit operations have no float32 form, pow no integer one (op_schema.py's dtypes).
bool is_bit_op(BinOp op) {
    return op == BinOp::BitAnd || op == BinOp::BitOr || op == BinOp::BitXor || op == BinOp::Shl || op == BinOp::Shr;
}

const char* dtypes_of(BinOp op) {
    return op == BinOp::Pow ? "float32" : is_bit_op(op) ? "an integer dtype" : "float32 or an integer dtype";
}

bool computes_on(BinOp op, int64_t dtype) {
    if (dtype == ACCEL_DTYPE_FLOAT32) return !is_bit_op(op);
    return op != BinOp::Pow && is_integer_dtype(dtype);
}

bool validate_op(BinOp op, const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* nm = op_name(op_of(op));
    if (!kern::check_common(g, n, kern::DTypeRule::Any, err)) return false;  // the dtypes: below
    const TensorDesc& a = *kern::input(g, n, 0);
    const TensorDesc& b = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    if (!kern::same_dtype(a, y, nm, "input 0", err) || !kern::same_dtype(b, y, nm, "input 1", err)) return false;
    if (!computes_on(op, y.dtype))
        return kern::fail(err, nm, cat("dtype ", dtype_name(y.dtype), " is not supported (", dtypes_of(op), ")"));
    if (y.dtype != ACCEL_DTYPE_FLOAT32) {
        if (n.act != Act::None)
            return kern::fail(err, nm,
                              cat("fused activation ", static_cast<uint32_t>(n.act), " on ", dtype_name(y.dtype),
                                  " (integer arithmetic takes none)"));
    }
    return kern::check_broadcast(a, b, y, nm, err);
}

template <BinOp OP>
bool validate(const Graph& g, const Node& n, std::string* err) {
    return validate_op(OP, g, n, err);
}

template <BinOp OP>
void run_op(const KernelArgs& args) {
    const Node& n = *args.node;
    if (kern::out_desc(args, 0).dtype != ACCEL_DTYPE_FLOAT32) {
        int_binary_broadcast(OP, kern::in_desc(args, 0), kern::in_desc(args, 1), kern::out_desc(args, 0), args.in[0],
                             args.in[1], args.out[0]);
        return;
    }
    binary_broadcast(OP, kern::in_desc(args, 0), kern::in_desc(args, 1), kern::out_desc(args, 0), kern::in_f(args, 0),
                     kern::in_f(args, 1), kern::out_f(args, 0), n.act, n.act_alpha, n.act_beta, *args.par);
}

size_t scratch_bytes(const Graph&, const Node&) { return 0; }

}  // namespace

const OpDef kAddDef = {"add", validate<BinOp::Add>, scratch_bytes, run_op<BinOp::Add>, nullptr, nullptr};
const OpDef kSubDef = {"sub", validate<BinOp::Sub>, scratch_bytes, run_op<BinOp::Sub>, nullptr, nullptr};
const OpDef kMulDef = {"mul", validate<BinOp::Mul>, scratch_bytes, run_op<BinOp::Mul>, nullptr, nullptr};
const OpDef kDivDef = {"div", validate<BinOp::Div>, scratch_bytes, run_op<BinOp::Div>, nullptr, nullptr};
const OpDef kPowDef = {"pow", validate<BinOp::Pow>, scratch_bytes, run_op<BinOp::Pow>, nullptr, nullptr};
const OpDef kMinDef = {"min", validate<BinOp::Min>, scratch_bytes, run_op<BinOp::Min>, nullptr, nullptr};
const OpDef kMaxDef = {"max", validate<BinOp::Max>, scratch_bytes, run_op<BinOp::Max>, nullptr, nullptr};
const OpDef kModDef = {"mod", validate<BinOp::Mod>, scratch_bytes, run_op<BinOp::Mod>, nullptr, nullptr};
const OpDef kFModDef = {"fmod", validate<BinOp::FMod>, scratch_bytes, run_op<BinOp::FMod>, nullptr, nullptr};
const OpDef kBitAndDef = {"bitand", validate<BinOp::BitAnd>, scratch_bytes, run_op<BinOp::BitAnd>, nullptr, nullptr};
const OpDef kBitOrDef = {"bitor", validate<BinOp::BitOr>, scratch_bytes, run_op<BinOp::BitOr>, nullptr, nullptr};
const OpDef kBitXorDef = {"bitxor", validate<BinOp::BitXor>, scratch_bytes, run_op<BinOp::BitXor>, nullptr, nullptr};
const OpDef kShlDef = {"shl", validate<BinOp::Shl>, scratch_bytes, run_op<BinOp::Shl>, nullptr, nullptr};
const OpDef kShrDef = {"shr", validate<BinOp::Shr>, scratch_bytes, run_op<BinOp::Shr>, nullptr, nullptr};

}  // namespace accel_emu
