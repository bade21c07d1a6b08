// qbinary_row.h - the rows of the quantized binary ops (qbinary.cc walks the broadcast, a row at a time):
// onnxruntime's QLinearAdd and QLinearMul rules as constants, and the row loop in a portable form and an
// AVX-512 one, which give the same bytes.
#pragma once

#include <cstdint>

#include "math/fixpoint.h"
#include "math/qbinary.h"

namespace accel_emu {

// The constants of one op. Add: v = fma(a, ra, fma(b, rb, f)). Mul: v = float32((a - za) * (b - zb)) * r + zy.
// v is then rounded half to even and saturated to Y's dtype.
// With `fixed` (the devices' rules, math/fixpoint.h): fixed_binary of the integers.
struct QBinRule {
    QBinOp op;
    bool is_signed;  // the dtype of A, B and Y: int8 (else uint8)
    float ra, rb, f;
    float r, zy;
    int32_t za, zb;
    bool fixed;
    FixedBinary fx;
};

QBinRule qbinary_rule(QBinOp op, const QParams& a, const QParams& b, const QParams& y);
// The op with a device's integer rule (math/fixpoint.h).
QBinRule qbinary_fixed_rule(QBinOp op, const FixedBinary& fx, bool is_signed);

// y[j] = rule(a[j * sa], b[j * sb]) for j < n; sa and sb are 0 (one value for the row) or 1.
using QBinRow = void (*)(const QBinRule& rule, const void* a, int64_t sa, const void* b, int64_t sb, void* y,
                         int64_t n);
void qbinary_row_portable(const QBinRule& rule, const void* a, int64_t sa, const void* b, int64_t sb, void* y,
                          int64_t n);
// Only on a CPU with AVX-512F, BW and VL (nullptr where the build has no x86 variant).
extern const QBinRow qbinary_row_avx512;

}  // namespace accel_emu
