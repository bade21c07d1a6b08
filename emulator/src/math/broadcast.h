// broadcast.h - numpy broadcasting, once for every elementwise op of two or three operands: the broadcast
// reduced to as few dims as possible (plan_broadcast) and the walk over its rows (for_each_row). On it run
// the binary arithmetic ops (ops/binary.cc: FORMAT.md ops 4-7, 21-23; float32 with a fused activation, or
// one integer dtype) here, and compare, logic and where (math/logic.cc).
#pragma once

#include <cstdint>

#include "graph.h"
#include "math/math_util.h"
#include "op_codes.h"  // BinOp, generated from emulator/op_schema.py
#include "parallel.h"

namespace accel_emu {

// Dim i of `t` with `t` right-aligned to rank r (1 where t has no such dim).
inline int64_t broadcast_dim(const TensorDesc& t, int r, int i) {
    const int j = i - (r - t.ndim);
    return j >= 0 ? t.dims[j] : 1;
}

constexpr int kMaxOperands = 3;

// A broadcast of n operands to an output, reduced to nd dims (size-1 dims of the output dropped, dims merged
// where every operand stays contiguous), outermost first, with each operand's element strides (0: broadcast
// along that dim). The innermost stride of every operand is 0 or 1. nd = 0: the output has one element.
struct Bcast {
    int n = 0, nd = 0;
    int64_t ext[kMaxDims];
    int64_t s[kMaxOperands][kMaxDims];
};

// The broadcast of ins[0..n) (n <= kMaxOperands) to y, whose shape the caller has checked to be theirs.
Bcast plan_broadcast(const TensorDesc* const* ins, int n, const TensorDesc& y);

// y[i] = f(a, b) along one row of two operands whose strides as, bs (each 0 or 1) for_each_row gives: the four
// cases apart, so that each loop vectorizes. Inline: it is compiled into each ISA clone of its caller.
template <typename TA, typename TB, typename TY, class F>
ACCEL_INLINE void binary_row(const TA* ACCEL_RESTRICT a, int64_t as, const TB* ACCEL_RESTRICT b, int64_t bs,
                             TY* ACCEL_RESTRICT y, int64_t n, F f) {
    if (as && bs) {
        for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], b[i]);
    } else if (bs) {
        const TA x = a[0];
        for (int64_t i = 0; i < n; ++i) y[i] = f(x, b[i]);
    } else if (as) {
        const TB v = b[0];
        for (int64_t i = 0; i < n; ++i) y[i] = f(a[i], v);
    } else {
        const TY v = f(a[0], b[0]);
        for (int64_t i = 0; i < n; ++i) y[i] = v;
    }
}

// Calls row(a + off, as, b + off, bs, y + off, len) (a row function of binary_row's form, ACCEL_HOT) for every row
// of a two-operand broadcast; A, B and Y hold elements of TA, TB and TY.
template <typename TA, typename TB, typename TY>
void binary_rows(const Bcast& c, int64_t numel, const void* A, const void* B, void* Y,
                 void (*row)(const TA*, int64_t, const TB*, int64_t, TY*, int64_t));

// The output's rows (for_each_row): its element count over the innermost extent.
inline int64_t broadcast_rows(const Bcast& c, int64_t numel) { return c.nd == 0 ? 1 : numel / c.ext[c.nd - 1]; }

// Calls row(off, inner, y_off, len) for every row of the output in order (or rows [r0, r1) of them): off[k]
// is operand k's element offset at the row's start, inner[k] its stride along the row (0 or 1), y_off the
// output's offset (rows are contiguous in the output) and len the row's length. `numel` is the output's
// element count.
template <typename Row>
void for_each_row(const Bcast& c, int64_t numel, Row&& row, int64_t r0 = 0, int64_t r1 = INT64_MAX) {
    int64_t off[kMaxOperands] = {0, 0, 0};
    int64_t inner[kMaxOperands] = {0, 0, 0};
    if (c.nd == 0) {  // every dim is 1
        if (r0 == 0 && r1 > 0) row(off, inner, int64_t{0}, int64_t{1});
        return;
    }
    const int in = c.nd - 1;
    for (int k = 0; k < c.n; ++k) inner[k] = c.s[k][in];
    const int64_t len = c.ext[in];
    const int64_t rows = r1 < numel / len ? r1 : numel / len;
    int64_t idx[kMaxDims] = {0};
    for (int64_t d = in - 1, rest = r0; d >= 0; --d) {  // the odometer at row r0
        idx[d] = rest % c.ext[d];
        rest /= c.ext[d];
        for (int k = 0; k < c.n; ++k) off[k] += idx[d] * c.s[k][d];
    }
    for (int64_t r = r0; r < rows; ++r) {
        row(off, inner, r * len, len);
        for (int d = in - 1; d >= 0; --d) {  // odometer over the outer dims
            for (int k = 0; k < c.n; ++k) off[k] += c.s[k][d];
            if (++idx[d] < c.ext[d]) break;
            for (int k = 0; k < c.n; ++k) off[k] -= c.s[k][d] * c.ext[d];
            idx[d] = 0;
        }
    }
}

template <typename TA, typename TB, typename TY>
void binary_rows(const Bcast& c, int64_t numel, const void* A, const void* B, void* Y,
                 void (*row)(const TA*, int64_t, const TB*, int64_t, TY*, int64_t)) {
    const TA* a = static_cast<const TA*>(A);
    const TB* b = static_cast<const TB*>(B);
    TY* y = static_cast<TY*>(Y);
    for_each_row(c, numel, [&](const int64_t* off, const int64_t* inner, int64_t yo, int64_t n) {
        row(a + off[0], inner[0], b + off[1], inner[1], y + yo, n);
    });
}

// Float32: Y = act(A op B), A shaped ad and B shaped bd broadcast to Y's shape yd (which the caller has
// checked). Large outputs are split over par's workers: runs of rows, or of 64-float pieces of rows when
// there are few rows, chosen from the shapes alone.
void binary_broadcast(BinOp op, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const float* A,
                      const float* B, float* Y, Act act, float alpha, float beta, const Par& par = Par::serial());

// Integers of one dtype (int8 .. uint64; yd.dtype says which): Y = A op B, op add, sub or mul wrapping (two's
// complement), div truncating toward zero (a zero divisor gives 0, the most negative value over -1 wraps to
// itself), min or max. Pow is not an integer op (nothing is written).
void int_binary_broadcast(BinOp op, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const void* A,
                          const void* B, void* Y);

}  // namespace accel_emu
