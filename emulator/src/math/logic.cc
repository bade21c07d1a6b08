// logic.cc - see logic.h: compare, logic and where as inner loops over the rows of math/broadcast.h's walk,
// each loop split by the operands' strides (1 or 0) so that it vectorizes.
#include "math/logic.h"

#include "math/broadcast.h"
#include "math/int_types.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

// ---- compare ----------------------------------------------------------------------------------------

template <CompareFn FN, typename T>
ACCEL_INLINE uint8_t cmp(T x, T y) {
    // C++'s comparisons are IEEE's for floats: every one with a NaN operand is false.
    if constexpr (FN == CompareFn::Equal) return x == y;
    if constexpr (FN == CompareFn::Greater) return x > y;
    if constexpr (FN == CompareFn::GreaterOrEqual) return x >= y;
    if constexpr (FN == CompareFn::Less) return x < y;
    return x <= y;
}

// Functors, not lambdas: only an always-inline function is inlined into code of other FP options (ACCEL_HOT).
template <CompareFn FN, typename T>
struct Cmp {
    ACCEL_INLINE uint8_t operator()(T x, T y) const { return cmp<FN, T>(x, y); }
};

template <CompareFn FN, typename T>
ACCEL_HOT void cmp_row(const T* ACCEL_RESTRICT a, int64_t as, const T* ACCEL_RESTRICT b, int64_t bs,
                       uint8_t* ACCEL_RESTRICT y, int64_t n) {
    binary_row(a, as, b, bs, y, n, Cmp<FN, T>{});
}

template <typename T>
void run_cmp_fn(CompareFn fn, const Bcast& c, int64_t numel, const void* A, const void* B, void* Y) {
    switch (fn) {
        case CompareFn::Equal: return binary_rows(c, numel, A, B, Y, cmp_row<CompareFn::Equal, T>);
        case CompareFn::Greater: return binary_rows(c, numel, A, B, Y, cmp_row<CompareFn::Greater, T>);
        case CompareFn::GreaterOrEqual: return binary_rows(c, numel, A, B, Y, cmp_row<CompareFn::GreaterOrEqual, T>);
        case CompareFn::Less: return binary_rows(c, numel, A, B, Y, cmp_row<CompareFn::Less, T>);
        case CompareFn::LessOrEqual: return binary_rows(c, numel, A, B, Y, cmp_row<CompareFn::LessOrEqual, T>);
    }
}

// ---- logic ------------------------------------------------------------------------------------------

template <LogicFn FN>
ACCEL_INLINE uint8_t logic(uint8_t x, uint8_t y) {
    const uint8_t p = x != 0, q = y != 0;
    if constexpr (FN == LogicFn::And) return p & q;
    if constexpr (FN == LogicFn::Or) return p | q;
    return p ^ q;
}

template <LogicFn FN>
struct Logic {
    ACCEL_INLINE uint8_t operator()(uint8_t x, uint8_t y) const { return logic<FN>(x, y); }
};

template <LogicFn FN>
ACCEL_HOT void logic_row(const uint8_t* ACCEL_RESTRICT a, int64_t as, const uint8_t* ACCEL_RESTRICT b, int64_t bs,
                         uint8_t* ACCEL_RESTRICT y, int64_t n) {
    binary_row(a, as, b, bs, y, n, Logic<FN>{});
}

ACCEL_HOT void not_row(const uint8_t* ACCEL_RESTRICT a, uint8_t* ACCEL_RESTRICT y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] == 0;
}

// ---- where ------------------------------------------------------------------------------------------

// One row of Z = C ? X : Y; cs, xs, ys are the strides (0 or 1). The common cases (everything contiguous, or a
// scalar X or Y) get their own loops; the rest reads through the strides.
template <typename T>
ACCEL_HOT void where_row(const uint8_t* ACCEL_RESTRICT c, int64_t cs, const T* ACCEL_RESTRICT x, int64_t xs,
                         const T* ACCEL_RESTRICT y, int64_t ys, T* ACCEL_RESTRICT z, int64_t n) {
    if (cs && xs && ys) {
        for (int64_t i = 0; i < n; ++i) z[i] = c[i] ? x[i] : y[i];
    } else if (cs && xs) {
        const T v = y[0];
        for (int64_t i = 0; i < n; ++i) z[i] = c[i] ? x[i] : v;
    } else if (cs && ys) {
        const T v = x[0];
        for (int64_t i = 0; i < n; ++i) z[i] = c[i] ? v : y[i];
    } else if (cs) {
        const T u = x[0], v = y[0];
        for (int64_t i = 0; i < n; ++i) z[i] = c[i] ? u : v;
    } else {  // one condition for the whole row: a copy of X's or Y's row (or its one element)
        const T* s = c[0] ? x : y;
        const int64_t ss = c[0] ? xs : ys;
        if (ss) {
            for (int64_t i = 0; i < n; ++i) z[i] = s[i];
        } else {
            const T v = s[0];
            for (int64_t i = 0; i < n; ++i) z[i] = v;
        }
    }
}

template <typename T>
void run_where(const Bcast& b, int64_t numel, const uint8_t* C, const void* X, const void* Y, void* Z) {
    const T* x = static_cast<const T*>(X);
    const T* y = static_cast<const T*>(Y);
    T* z = static_cast<T*>(Z);
    for_each_row(b, numel, [&](const int64_t* off, const int64_t* inner, int64_t zo, int64_t n) {
        where_row<T>(C + off[0], inner[0], x + off[1], inner[1], y + off[2], inner[2], z + zo, n);
    });
}

}  // namespace

void compare_broadcast(CompareFn fn, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const void* A,
                       const void* B, uint8_t* Y) {
    const TensorDesc* ins[2] = {&ad, &bd};
    const Bcast c = plan_broadcast(ins, 2, yd);
    if (ad.dtype == ACCEL_DTYPE_BOOL) return run_cmp_fn<uint8_t>(fn, c, yd.numel, A, B, Y);
    dispatch_numeric(ad.dtype, [&](auto t) { run_cmp_fn<decltype(t)>(fn, c, yd.numel, A, B, Y); });
}

void logic_broadcast(LogicFn fn, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const uint8_t* A,
                     const uint8_t* B, uint8_t* Y) {
    const TensorDesc* ins[2] = {&ad, &bd};
    const Bcast c = plan_broadcast(ins, 2, yd);
    switch (fn) {
        case LogicFn::And: return binary_rows(c, yd.numel, A, B, Y, logic_row<LogicFn::And>);
        case LogicFn::Or: return binary_rows(c, yd.numel, A, B, Y, logic_row<LogicFn::Or>);
        case LogicFn::Xor: return binary_rows(c, yd.numel, A, B, Y, logic_row<LogicFn::Xor>);
        case LogicFn::Not: return;  // one input: logic_not
    }
}

void logic_not(const uint8_t* A, uint8_t* Y, int64_t n) { not_row(A, Y, n); }

void where_broadcast(const TensorDesc& cd, const TensorDesc& xd, const TensorDesc& yd, const TensorDesc& zd,
                     size_t elem_size, const uint8_t* C, const void* X, const void* Y, void* Z) {
    const TensorDesc* ins[3] = {&cd, &xd, &yd};
    const Bcast b = plan_broadcast(ins, 3, zd);
    switch (elem_size) {  // the bytes are copied, not interpreted: one loop per element size
        case 1: return run_where<uint8_t>(b, zd.numel, C, X, Y, Z);
        case 2: return run_where<uint16_t>(b, zd.numel, C, X, Y, Z);
        case 4: return run_where<uint32_t>(b, zd.numel, C, X, Y, Z);
        case 8: return run_where<uint64_t>(b, zd.numel, C, X, Y, Z);
        default: return;
    }
}

}  // namespace accel_emu
