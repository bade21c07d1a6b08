// broadcast.cc - see broadcast.h: every binary op through one broadcast implementation. The broadcast is
// reduced to as few dims as possible (size-1 dims dropped, dims merged where both operands stay
// contiguous), so the work is an outer odometer around one contiguous inner loop whose operands each have
// stride 1 or 0.
#include "math/broadcast.h"

#include "math/activation.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

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
        da[i] = broadcast_dim(a, r, i), db[i] = broadcast_dim(b, r, i);
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
void run_op(const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const float* A, const float* B, float* Y,
            Act act, float alpha, float beta) {
    const Bcast c = reduce(ad, bd, yd);
    if (c.nd == 0) {  // every dim is 1
        Y[0] = apply<OP>(A[0], B[0]);
        apply_activation(act, alpha, beta, Y, 1);
        return;
    }
    const int inner = c.nd - 1;
    const int64_t len = c.ext[inner];
    const int64_t rows = yd.numel / len;
    // Activate each row while it is in cache, unless rows are too short for that to pay.
    const bool act_rows = act != Act::None && len >= 64;
    int64_t idx[kMaxDims] = {0};
    int64_t oa = 0, ob = 0;
    float* y = Y;
    for (int64_t r = 0; r < rows; ++r, y += len) {
        row<OP>(A + oa, c.sa[inner], B + ob, c.sb[inner], y, len);
        if (act_rows) apply_activation(act, alpha, beta, y, static_cast<size_t>(len));
        for (int d = inner - 1; d >= 0; --d) {  // odometer over the outer dims
            oa += c.sa[d];
            ob += c.sb[d];
            if (++idx[d] < c.ext[d]) break;
            oa -= c.sa[d] * c.ext[d];
            ob -= c.sb[d] * c.ext[d];
            idx[d] = 0;
        }
    }
    if (act != Act::None && !act_rows) apply_activation(act, alpha, beta, Y, static_cast<size_t>(yd.numel));
}

}  // namespace

void binary_broadcast(BinOp op, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const float* A,
                      const float* B, float* Y, Act act, float alpha, float beta) {
    switch (op) {
        case BinOp::Add: return run_op<BinOp::Add>(ad, bd, yd, A, B, Y, act, alpha, beta);
        case BinOp::Sub: return run_op<BinOp::Sub>(ad, bd, yd, A, B, Y, act, alpha, beta);
        case BinOp::Mul: return run_op<BinOp::Mul>(ad, bd, yd, A, B, Y, act, alpha, beta);
        case BinOp::Div: return run_op<BinOp::Div>(ad, bd, yd, A, B, Y, act, alpha, beta);
        case BinOp::Pow: return run_op<BinOp::Pow>(ad, bd, yd, A, B, Y, act, alpha, beta);
        case BinOp::Min: return run_op<BinOp::Min>(ad, bd, yd, A, B, Y, act, alpha, beta);
        case BinOp::Max: return run_op<BinOp::Max>(ad, bd, yd, A, B, Y, act, alpha, beta);
    }
}

}  // namespace accel_emu
