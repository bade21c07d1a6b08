// qbinary.cc - see qbinary.h. The broadcast is walked as rows of Y's last dim, A and B each read with a
// stride of 0 or 1 along it; a row is one call of the portable row or its AVX-512 twin (qbinary_avx512.cc).
#include "math/qbinary.h"

#include <cmath>

#include "math/broadcast.h"
#include "math/exact_rounding.h"
#include "math/qbinary_row.h"

namespace accel_emu {

QBinRule qbinary_rule(QBinOp op, const QParams& a, const QParams& b, const QParams& y) {
    QBinRule r{};
    r.op = op;
    r.is_signed = y.is_signed;
    // QLinearAdd (MlasQLinearAdd, FMA): v = fma(a, rA, fma(b, rB, F)) with rA = sA / sY, rB = sB / sY and
    // F = zY - fma(rA, zA, rB * zB). The operands' order matters; the compiler gives them in onnxruntime's.
    r.ra = a.scale / y.scale;
    r.rb = b.scale / y.scale;
    r.f = float(y.zero) - std::fma(r.ra, float(a.zero), r.rb * float(b.zero));
    // QLinearMul (MlasQLinearMul): v = float32((a - zA) * (b - zB)) * r + zY, r = (sA * sB) / sY, a multiply
    // and an add (no FMA).
    r.r = a.scale * b.scale / y.scale;
    r.zy = float(y.zero);
    r.za = a.zero;
    r.zb = b.zero;
    return r;
}

QBinRule qbinary_fixed_rule(QBinOp op, const FixedBinary& fx, bool is_signed) {
    QBinRule r{};
    r.op = op;
    r.is_signed = is_signed;
    r.fixed = true;
    r.fx = fx;
    return r;
}

namespace {

template <typename T>
void fixed_row(const QBinRule& rule, const T* a, int64_t sa, const T* b, int64_t sb, T* y, int64_t n) {
    const bool add = rule.op == QBinOp::Add;
    for (int64_t j = 0; j < n; ++j)
        y[j] = static_cast<T>(fixed_binary(add, rule.fx, a[j * sa], b[j * sb], rule.is_signed));
}

template <typename T, QBinOp OP>
void row(const QBinRule& rule, const T* a, int64_t sa, const T* b, int64_t sb, T* y, int64_t n) {
    for (int64_t j = 0; j < n; ++j) {
        const int32_t x = a[j * sa], z = b[j * sb];
        float v;
        if constexpr (OP == QBinOp::Add) {
            v = std::fma(float(x), rule.ra, std::fma(float(z), rule.rb, rule.f));
        } else {
            const float p = float((x - rule.za) * (z - rule.zb)) * rule.r;
            v = p + rule.zy;
        }
        y[j] = static_cast<T>(round_saturate(v, rule.is_signed));
    }
}

template <typename T>
void typed_row(const QBinRule& rule, const void* a, int64_t sa, const void* b, int64_t sb, void* y, int64_t n) {
    const T* pa = static_cast<const T*>(a);
    const T* pb = static_cast<const T*>(b);
    T* py = static_cast<T*>(y);
    if (rule.fixed) fixed_row<T>(rule, pa, sa, pb, sb, py, n);
    else if (rule.op == QBinOp::Add) row<T, QBinOp::Add>(rule, pa, sa, pb, sb, py, n);
    else row<T, QBinOp::Mul>(rule, pa, sa, pb, sb, py, n);
}

}  // namespace

void qbinary_row_portable(const QBinRule& rule, const void* a, int64_t sa, const void* b, int64_t sb, void* y,
                          int64_t n) {
    if (rule.is_signed) typed_row<int8_t>(rule, a, sa, b, sb, y, n);
    else typed_row<uint8_t>(rule, a, sa, b, sb, y, n);
}

int64_t qbinary_rows(const TensorDesc& yd) {
    const int64_t inner = yd.ndim ? yd.dims[yd.ndim - 1] : 1;
    return inner > 0 ? yd.numel / inner : 0;
}

void qbinary_broadcast(const QBinRule& rule, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd,
                       const void* A, const void* B, void* Y, bool vector) {
    qbinary_broadcast_rows(rule, ad, bd, yd, A, B, Y, vector, 0, qbinary_rows(yd));
}

void qbinary_broadcast_rows(const QBinRule& rule, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd,
                            const void* A, const void* B, void* Y, bool vector, int64_t row0, int64_t row1) {
    const QBinRow row_fn = vector && !rule.fixed && qbinary_row_avx512 ? qbinary_row_avx512 : qbinary_row_portable;
    const auto* a8 = static_cast<const uint8_t*>(A);
    const auto* b8 = static_cast<const uint8_t*>(B);
    auto* y8 = static_cast<uint8_t*>(Y);
    const int r = yd.ndim;
    int64_t sa[kMaxDims] = {0}, sb[kMaxDims] = {0};  // element strides in Y's index space (0: broadcast)
    int64_t acc_a = 1, acc_b = 1;
    for (int i = r - 1; i >= 0; --i) {
        const int64_t da = broadcast_dim(ad, r, i), db = broadcast_dim(bd, r, i);
        sa[i] = da == 1 ? 0 : acc_a;
        sb[i] = db == 1 ? 0 : acc_b;
        acc_a *= da;
        acc_b *= db;
    }
    const int64_t inner = r ? yd.dims[r - 1] : 1;
    const int64_t ia = r ? sa[r - 1] : 0, ib = r ? sb[r - 1] : 0;
    // The odometer over the outer dims, started at row0.
    int64_t idx[kMaxDims] = {0};
    int64_t oa = 0, ob = 0;
    for (int64_t d = r - 2, rest = row0; d >= 0; --d) {
        idx[d] = rest % yd.dims[d];
        rest /= yd.dims[d];
        oa += idx[d] * sa[d];
        ob += idx[d] * sb[d];
    }
    for (int64_t row = row0; row < row1; ++row) {  // every element is one byte
        row_fn(rule, a8 + oa, ia, b8 + ob, ib, y8 + row * inner, inner);
        for (int d = r - 2; d >= 0; --d) {
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < yd.dims[d]) break;
            oa -= sa[d] * yd.dims[d];
            ob -= sb[d] * yd.dims[d];
            idx[d] = 0;
        }
    }
}

}  // namespace accel_emu
