// binary.cc - add, sub, mul, div, pow, min, max with numpy broadcasting (FORMAT.md ops 4-7, 21-23),
// all through one broadcast implementation. The broadcast is reduced
// to as few dims as possible (size-1 dims dropped, dims merged where both operands stay contiguous), so
// the work is an outer odometer around one contiguous inner loop whose operands each have stride 1 or 0.
#include "kernel_util.h"
#include "op_defs.h"

namespace accel_emu {
namespace {

enum class BinOp { Add, Sub, Mul, Div, Pow, Min, Max };

const char* name_of(BinOp op) {
    switch (op) {
        case BinOp::Add: return "add";
        case BinOp::Sub: return "sub";
        case BinOp::Mul: return "mul";
        case BinOp::Div: return "div";
        case BinOp::Pow: return "pow";
        case BinOp::Min: return "min";
        case BinOp::Max: return "max";
    }
    return "?";
}

// Dim i of `t` with `t` right-aligned to rank r (1 where t has no such dim).
inline int64_t aligned_dim(const TensorDesc& t, int r, int i) {
    const int j = i - (r - t.ndim);
    return j >= 0 ? t.dims[j] : 1;
}

bool validate_op(BinOp op, const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    const char* nm = name_of(op);
    if (!kern::check_common(g, n, nm, {2, 2, 2, 1}, kern::DTypeRule::Float32, kern::ActRule::Fused, err)) return false;
    const TensorDesc& a = *kern::input(g, n, 0);
    const TensorDesc& b = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const int r = a.ndim > b.ndim ? a.ndim : b.ndim;
    if (y.ndim != r)
        return kern::fail(
            err, nm,
            cat("output rank ", y.ndim, " is not ", r, " (A ", kern::dims_str(a), ", B ", kern::dims_str(b), ")"));
    for (int i = 0; i < r; ++i) {
        const int64_t da = aligned_dim(a, r, i), db = aligned_dim(b, r, i);
        if (da != db && da != 1 && db != 1)
            return kern::fail(err, nm,
                              cat("shapes ", kern::dims_str(a), " and ", kern::dims_str(b), " do not broadcast (dim ",
                                  i, ": ", da, " vs ", db, ")"));
        if (y.dims[i] != (da > db ? da : db))
            return kern::fail(err, nm,
                              cat("output shape ", kern::dims_str(y), " is not the broadcast of ", kern::dims_str(a),
                                  " and ", kern::dims_str(b)));
    }
    return true;
}

// The broadcast reduced to nd dims, outermost first, with A's and B's element strides (0: broadcast).
struct Bcast {
    int nd = 0;
    int64_t ext[kMaxDims], sa[kMaxDims], sb[kMaxDims];
};

Bcast reduce(const TensorDesc& a, const TensorDesc& b, const TensorDesc& y) {
    const int r = y.ndim;
    int64_t da[kMaxDims], db[kMaxDims], ta[kMaxDims], tb[kMaxDims];
    int64_t sa = 1, sb = 1;
    for (int i = r - 1; i >= 0; --i) {
        da[i] = aligned_dim(a, r, i), db[i] = aligned_dim(b, r, i);
        ta[i] = da[i] == 1 ? 0 : sa;
        tb[i] = db[i] == 1 ? 0 : sb;
        sa *= da[i];
        sb *= db[i];
    }
    Bcast c;
    for (int i = 0; i < r; ++i) {
        if (y.dims[i] == 1) continue;
        if (c.nd > 0) {
            const int p = c.nd - 1;
            if (c.sa[p] == ta[i] * y.dims[i] && c.sb[p] == tb[i] * y.dims[i]) {
                c.ext[p] *= y.dims[i];
                c.sa[p] = ta[i];
                c.sb[p] = tb[i];
                continue;
            }
        }
        c.ext[c.nd] = y.dims[i], c.sa[c.nd] = ta[i], c.sb[c.nd] = tb[i];
        ++c.nd;
    }
    return c;
}

template <BinOp OP>
__attribute__((always_inline)) inline float apply(float x, float y) {
    if constexpr (OP == BinOp::Add) return x + y;
    if constexpr (OP == BinOp::Sub) return x - y;
    if constexpr (OP == BinOp::Mul) return x * y;
    if constexpr (OP == BinOp::Div) return x / y;
    if constexpr (OP == BinOp::Pow) return __builtin_powf(x, y);
    // min and max are NaN when either operand is (x != x: x is NaN; a NaN y loses every comparison).
    if constexpr (OP == BinOp::Min) return x < y || x != x ? x : y;
    return x > y || x != x ? x : y;
}

// One inner row; as/bs are the operands' strides (each 0 or 1), cases split so each loop vectorizes.
template <BinOp OP>
ACCEL_HOT void row(const float* ACCEL_RESTRICT a, int64_t as, const float* ACCEL_RESTRICT b, int64_t bs,
                   float* ACCEL_RESTRICT y, int64_t n) {
    if (as && bs) {
        for (int64_t i = 0; i < n; ++i) y[i] = apply<OP>(a[i], b[i]);
    } else if (bs) {
        const float x = a[0];
        for (int64_t i = 0; i < n; ++i) y[i] = apply<OP>(x, b[i]);
    } else if (as) {
        const float v = b[0];
        for (int64_t i = 0; i < n; ++i) y[i] = apply<OP>(a[i], v);
    } else {
        const float v = apply<OP>(a[0], b[0]);
        for (int64_t i = 0; i < n; ++i) y[i] = v;
    }
}

template <BinOp OP>
void run_op(const KernelArgs& args) {
    const Node& n = *args.node;
    const TensorDesc& yd = kern::out_desc(args, 0);
    const Bcast c = reduce(kern::in_desc(args, 0), kern::in_desc(args, 1), yd);
    const float* A = kern::in_f(args, 0);
    const float* B = kern::in_f(args, 1);
    float* Y = kern::out_f(args, 0);
    if (c.nd == 0) {  // every dim is 1
        Y[0] = apply<OP>(A[0], B[0]);
        apply_activation(n.act, n.act_alpha, n.act_beta, Y, 1);
        return;
    }
    const int inner = c.nd - 1;
    const int64_t len = c.ext[inner];
    const int64_t rows = yd.numel / len;
    // Activate each row while it is in cache, unless rows are too short for that to pay.
    const bool act_rows = n.act != Act::None && len >= 64;
    int64_t idx[kMaxDims] = {0};
    int64_t oa = 0, ob = 0;
    float* y = Y;
    for (int64_t r = 0; r < rows; ++r, y += len) {
        row<OP>(A + oa, c.sa[inner], B + ob, c.sb[inner], y, len);
        if (act_rows) apply_activation(n.act, n.act_alpha, n.act_beta, y, static_cast<size_t>(len));
        for (int d = inner - 1; d >= 0; --d) {  // odometer over the outer dims
            oa += c.sa[d];
            ob += c.sb[d];
            if (++idx[d] < c.ext[d]) break;
            oa -= c.sa[d] * c.ext[d];
            ob -= c.sb[d] * c.ext[d];
            idx[d] = 0;
        }
    }
    if (n.act != Act::None && !act_rows)
        apply_activation(n.act, n.act_alpha, n.act_beta, Y, static_cast<size_t>(yd.numel));
}

template <BinOp OP>
bool validate(const Graph& g, const Node& n, std::string* err) {
    return validate_op(OP, g, n, err);
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

}  // namespace accel_emu
