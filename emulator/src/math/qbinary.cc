// qbinary.cc - see qbinary.h. The broadcast is walked as rows of Y's last dim, A and B each read with a
// stride of 0 or 1 along it, so the inner loop is a plain elementwise loop the compiler vectorizes.
#include "math/qbinary.h"

#include <cmath>

#include "math/broadcast.h"

namespace accel_emu {
namespace {

// QLinearAdd (MlasQLinearAdd, FMA): v = fma(a, rA, fma(b, rB, F)) with rA = sA / sY, rB = sB / sY and
// F = zY - fma(rA, zA, rB * zB). The operands' order matters; the compiler gives them in onnxruntime's.
struct AddRule {
    float ra, rb, f;
    bool is_signed;
    AddRule(const QParams& a, const QParams& b, const QParams& y)
        : ra(a.scale / y.scale),
          rb(b.scale / y.scale),
          f(float(y.zero) - std::fma(ra, float(a.zero), rb * float(b.zero))),
          is_signed(y.is_signed) {}
    int32_t operator()(int32_t a, int32_t b) const {
        return round_saturate(std::fma(float(a), ra, std::fma(float(b), rb, f)), is_signed);
    }
};

// QLinearMul (MlasQLinearMul): v = float32((a - zA) * (b - zB)) * r + zY, r = (sA * sB) / sY, a multiply
// and an add (no FMA).
struct MulRule {
    float r, zy;
    int32_t za, zb;
    bool is_signed;
    MulRule(const QParams& a, const QParams& b, const QParams& y)
        : r(a.scale * b.scale / y.scale), zy(float(y.zero)), za(a.zero), zb(b.zero), is_signed(y.is_signed) {}
    int32_t operator()(int32_t a, int32_t b) const {
        const float p = float((a - za) * (b - zb)) * r;
        return round_saturate(p + zy, is_signed);
    }
};

template <typename T, class Rule>
void run(const Rule& rule, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const T* A, const T* B,
         T* Y) {
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
    const int64_t rows = yd.numel / inner;
    int64_t idx[kMaxDims] = {0};
    int64_t oa = 0, ob = 0;
    for (int64_t row = 0; row < rows; ++row) {
        T* y = Y + row * inner;
        const T* a = A + oa;
        const T* b = B + ob;
        for (int64_t j = 0; j < inner; ++j) y[j] = static_cast<T>(rule(a[j * ia], b[j * ib]));
        for (int d = r - 2; d >= 0; --d) {  // odometer over the outer dims
            oa += sa[d];
            ob += sb[d];
            if (++idx[d] < yd.dims[d]) break;
            oa -= sa[d] * yd.dims[d];
            ob -= sb[d] * yd.dims[d];
            idx[d] = 0;
        }
    }
}

template <class Rule>
void dispatch(const Rule& rule, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, bool is_signed,
              const void* A, const void* B, void* Y) {
    if (is_signed)
        run(rule, ad, bd, yd, static_cast<const int8_t*>(A), static_cast<const int8_t*>(B), static_cast<int8_t*>(Y));
    else
        run(rule, ad, bd, yd, static_cast<const uint8_t*>(A), static_cast<const uint8_t*>(B), static_cast<uint8_t*>(Y));
}

}  // namespace

void qbinary_broadcast(QBinOp op, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const QParams& qa,
                       const QParams& qb, const QParams& qy, const void* A, const void* B, void* Y) {
    if (op == QBinOp::Add) dispatch(AddRule(qa, qb, qy), ad, bd, yd, qy.is_signed, A, B, Y);
    else dispatch(MulRule(qa, qb, qy), ad, bd, yd, qy.is_signed, A, B, Y);
}

}  // namespace accel_emu
