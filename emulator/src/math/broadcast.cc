// broadcast.cc - see broadcast.h: the one broadcast implementation and the binary arithmetic ops on it. The
// broadcast is reduced to as few dims as possible (size-1 dims dropped, dims merged where every operand stays
// contiguous), so the work is an outer odometer around one contiguous inner loop whose operands each have
// stride 1 or 0.
#include "math/broadcast.h"

#include <algorithm>

#include "math/activation.h"
#include "math/int_types.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

template <BinOp OP>
__attribute__((always_inline)) inline float apply(float x, float y) {
    if constexpr (OP == BinOp::Add) return x + y;
    if constexpr (OP == BinOp::Sub) return x - y;
    if constexpr (OP == BinOp::Mul) return x * y;
    if constexpr (OP == BinOp::Div) return x / y;
    if constexpr (OP == BinOp::Pow) return __builtin_powf(x, y);
    if constexpr (OP == BinOp::FMod) return __builtin_fmodf(x, y);
    if constexpr (OP == BinOp::Mod) {  // floored: fmodf's remainder moved to B's sign, a zero taking B's sign
        const float r = __builtin_fmodf(x, y);
        const float f = r != 0.f && (r < 0.f) != (y < 0.f) ? r + y : r;
        return f == 0.f ? __builtin_copysignf(0.f, y) : f;
    }
    // min and max are NaN when either operand is (x != x: x is NaN; a NaN y loses every comparison).
    if constexpr (OP == BinOp::Min) return x < y || x != x ? x : y;
    if constexpr (OP == BinOp::Max) return x > y || x != x ? x : y;
    return 0.f;  // the bit operations, which validate refuses on float32
}

// A functor, not a lambda: only an always-inline function is inlined into code of other FP options (ACCEL_HOT).
template <BinOp OP>
struct Apply {
    ACCEL_INLINE float operator()(float x, float y) const { return apply<OP>(x, y); }
};

// One inner row (binary_row: the stride cases apart, so each loop vectorizes).
template <BinOp OP>
ACCEL_HOT void row(const float* ACCEL_RESTRICT a, int64_t as, const float* ACCEL_RESTRICT b, int64_t bs,
                   float* ACCEL_RESTRICT y, int64_t n) {
    binary_row(a, as, b, bs, y, n, Apply<OP>{});
}

template <BinOp OP>
void run_op(const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const float* A, const float* B, float* Y,
            Act act, float alpha, float beta, const Par& par) {
    const TensorDesc* ins[2] = {&ad, &bd};
    const Bcast c = plan_broadcast(ins, 2, yd);
    const int64_t len = c.nd > 0 ? c.ext[c.nd - 1] : 1, rows = broadcast_rows(c, yd.numel);
    // Activate each row (piece) while it is in cache, unless rows are too short for that to pay.
    const bool act_rows = act != Act::None && len >= 64;
    // Parts: runs of whole rows when there are enough rows, else pieces of rows (whole 64-float runs).
    const int64_t parts = split_parts((yd.numel + 63) / 64, yd.numel, kMinElemsPerPart);
    const int64_t per_row = rows >= parts ? 1 : (parts + rows - 1) / rows;
    const int64_t piece = per_row == 1 ? len : ((len + per_row - 1) / per_row + 63) / 64 * 64;
    const int64_t pieces = (len + piece - 1) / piece;
    const int64_t tasks = per_row == 1 ? parts : rows * pieces;
    par.for_each(tasks, [&](int64_t task, int) {
        if (per_row == 1) {
            int64_t r0, r1;
            part_range(rows, tasks, task, &r0, &r1);
            for_each_row(
                c, yd.numel,
                [&](const int64_t* off, const int64_t* inner, int64_t yo, int64_t n) {
                    row<OP>(A + off[0], inner[0], B + off[1], inner[1], Y + yo, n);
                    if (act_rows) apply_activation(act, alpha, beta, Y + yo, static_cast<size_t>(n));
                },
                r0, r1);
            if (act != Act::None && !act_rows)
                apply_activation(act, alpha, beta, Y + r0 * len, static_cast<size_t>((r1 - r0) * len));
            return;
        }
        const int64_t j0 = task % pieces * piece, m = std::min(piece, len - j0);
        for_each_row(
            c, yd.numel,
            [&](const int64_t* off, const int64_t* inner, int64_t yo, int64_t) {
                row<OP>(A + off[0] + j0 * inner[0], inner[0], B + off[1] + j0 * inner[1], inner[1], Y + yo + j0, m);
                if (act != Act::None) apply_activation(act, alpha, beta, Y + yo + j0, static_cast<size_t>(m));
            },
            task / pieces, task / pieces + 1);
    });
}

// ---- integers ---------------------------------------------------------------------------------------

template <BinOp OP, typename T>
ACCEL_INLINE T apply_int(T x, T y) {
    using W = Wide<T>;
    if constexpr (OP == BinOp::Add) return wrapping_add(x, y);
    if constexpr (OP == BinOp::Sub) return static_cast<T>(static_cast<W>(x) - static_cast<W>(y));
    if constexpr (OP == BinOp::Mul) return static_cast<T>(static_cast<W>(x) * static_cast<W>(y));
    if constexpr (OP == BinOp::Div) {
        if (y == 0) return T(0);  // defined here (C leaves it undefined; the kernel must not trap)
        if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return static_cast<T>(W(0) - static_cast<W>(x));  // min / -1 wraps to min
        }
        return static_cast<T>(x / y);  // truncates toward zero
    }
    if constexpr (OP == BinOp::FMod || OP == BinOp::Mod) {
        // y == 0 defined here (C leaves it undefined; the kernel must not trap), and min % -1 is 0 though C's
        // x % y would trap computing min / -1.
        if (y == 0) return T(0);
        if constexpr (std::is_signed_v<T>) {
            if (y == T(-1)) return T(0);
            const T r = static_cast<T>(x % y);  // truncated: A's sign
            // floored: B's sign, r + y cannot overflow as |r| < |y| with r and y of opposite signs
            if (OP == BinOp::Mod && r != 0 && ((r < 0) != (y < 0))) return static_cast<T>(r + y);
            return r;
        }
        return static_cast<T>(x % y);
    }
    if constexpr (OP == BinOp::BitAnd) return static_cast<T>(x & y);
    if constexpr (OP == BinOp::BitOr) return static_cast<T>(x | y);
    if constexpr (OP == BinOp::BitXor) return static_cast<T>(x ^ y);
    if constexpr (OP == BinOp::Shl || OP == BinOp::Shr) {
        // A shift by a negative amount or by the width or more is defined as ONNX defines it (C leaves it
        // undefined): the sign extension alone. Right shifts of signed values are arithmetic (gcc and clang
        // define them so, and C++20 requires it).
        const bool outside = y >= static_cast<T>(sizeof(T) * 8) || (std::is_signed_v<T> && y < T(0));
        if (OP == BinOp::Shl) return outside ? T(0) : static_cast<T>(static_cast<W>(x) << y);
        if (outside) return std::is_signed_v<T> && x < T(0) ? static_cast<T>(-1) : T(0);
        return static_cast<T>(x >> y);
    }
    if constexpr (OP == BinOp::Min) return x < y ? x : y;
    if constexpr (OP == BinOp::Max) return x > y ? x : y;
    return T(0);
}

template <BinOp OP, typename T>
struct ApplyInt {
    ACCEL_INLINE T operator()(T x, T y) const { return apply_int<OP, T>(x, y); }
};

template <BinOp OP, typename T>
ACCEL_HOT void int_row(const T* ACCEL_RESTRICT a, int64_t as, const T* ACCEL_RESTRICT b, int64_t bs,
                       T* ACCEL_RESTRICT y, int64_t n) {
    binary_row(a, as, b, bs, y, n, ApplyInt<OP, T>{});
}

template <typename T>
void run_int_op(BinOp op, const Bcast& c, int64_t numel, const void* A, const void* B, void* Y) {
    switch (op) {
        case BinOp::Add: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Add, T>);
        case BinOp::Sub: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Sub, T>);
        case BinOp::Mul: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Mul, T>);
        case BinOp::Div: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Div, T>);
        case BinOp::Min: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Min, T>);
        case BinOp::Max: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Max, T>);
        case BinOp::Mod: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Mod, T>);
        case BinOp::FMod: return binary_rows(c, numel, A, B, Y, int_row<BinOp::FMod, T>);
        case BinOp::BitAnd: return binary_rows(c, numel, A, B, Y, int_row<BinOp::BitAnd, T>);
        case BinOp::BitOr: return binary_rows(c, numel, A, B, Y, int_row<BinOp::BitOr, T>);
        case BinOp::BitXor: return binary_rows(c, numel, A, B, Y, int_row<BinOp::BitXor, T>);
        case BinOp::Shl: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Shl, T>);
        case BinOp::Shr: return binary_rows(c, numel, A, B, Y, int_row<BinOp::Shr, T>);
        case BinOp::Pow: return;
    }
}

}  // namespace

Bcast plan_broadcast(const TensorDesc* const* ins, int n, const TensorDesc& y) {
    const int r = y.ndim;
    int64_t t[kMaxOperands][kMaxDims];  // each operand's element stride per dim of y (0: broadcast)
    for (int k = 0; k < n; ++k) {
        int64_t s = 1;
        for (int i = r - 1; i >= 0; --i) {
            const int64_t d = broadcast_dim(*ins[k], r, i);
            t[k][i] = d == 1 ? 0 : s;
            s *= d;
        }
    }
    Bcast c;
    c.n = n;
    for (int i = 0; i < r; ++i) {
        if (y.dims[i] == 1) continue;
        if (c.nd > 0) {  // merge into the previous dim if every operand continues contiguously
            const int p = c.nd - 1;
            bool merge = true;
            for (int k = 0; k < n; ++k) merge = merge && c.s[k][p] == t[k][i] * y.dims[i];
            if (merge) {
                c.ext[p] *= y.dims[i];
                for (int k = 0; k < n; ++k) c.s[k][p] = t[k][i];
                continue;
            }
        }
        c.ext[c.nd] = y.dims[i];
        for (int k = 0; k < n; ++k) c.s[k][c.nd] = t[k][i];
        ++c.nd;
    }
    return c;
}

void binary_broadcast(BinOp op, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const float* A,
                      const float* B, float* Y, Act act, float alpha, float beta, const Par& par) {
    switch (op) {
        case BinOp::Add: return run_op<BinOp::Add>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::Sub: return run_op<BinOp::Sub>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::Mul: return run_op<BinOp::Mul>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::Div: return run_op<BinOp::Div>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::Pow: return run_op<BinOp::Pow>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::Min: return run_op<BinOp::Min>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::Max: return run_op<BinOp::Max>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::FMod: return run_op<BinOp::FMod>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::Mod: return run_op<BinOp::Mod>(ad, bd, yd, A, B, Y, act, alpha, beta, par);
        case BinOp::BitAnd:
        case BinOp::BitOr:
        case BinOp::BitXor:
        case BinOp::Shl:
        case BinOp::Shr: return;  // integers only: validate refuses float32
    }
}

void int_binary_broadcast(BinOp op, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const void* A,
                          const void* B, void* Y) {
    const TensorDesc* ins[2] = {&ad, &bd};
    const Bcast c = plan_broadcast(ins, 2, yd);
    // validate admits the integer dtypes only
    dispatch_integer(yd.dtype, [&](auto t) { run_int_op<decltype(t)>(op, c, yd.numel, A, B, Y); });
}

}  // namespace accel_emu
