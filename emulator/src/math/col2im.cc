// col2im.cc - see col2im.h. Rows of col are added (or stored) into output rows through each kernel tap;
// the output columns a tap reaches are computed once per plane (kern::TapRanges), so the inner loops
// carry no bounds tests.
#include "math/col2im.h"

#include <algorithm>

#include "math/math_util.h"

namespace accel_emu {
namespace {

// dst[j*s] += src[j] for j < cnt: one input row's contributions through one kernel tap.
ACCEL_INLINE void add_row(const float* ACCEL_RESTRICT src, float* ACCEL_RESTRICT dst, int64_t cnt, int64_t s) {
    if (s == 1) {
        for (int64_t j = 0; j < cnt; ++j) dst[j] += src[j];
    } else if (s == 2) {
        for (int64_t j = 0; j < cnt; ++j) dst[2 * j] += src[j];
    } else {
        for (int64_t j = 0; j < cnt; ++j) dst[j * s] += src[j];
    }
}

// Adds the col tile of input rows [ih0, ih0 + rows) into the output planes of one group. col row
// (m, ki, kj) holds, per input pixel (ih, iw), its contribution to output (ih*sh - pt + ki*dh,
// iw*sw - pl + kj*dw) of channel m.
ACCEL_HOT void add_patches(const ConvTransposeGeom& q, const float* col, int64_t ih0, int64_t rows, float* y) {
    kern::TapRanges tr;  // input columns whose tap kj lands inside the output row
    tr.init(q.kw, q.dw, q.pl, q.sw, q.OW, q.W);
    const int64_t t = rows * q.W;
    for (int64_t m = 0; m < q.Mg; ++m) {
        for (int64_t ki = 0; ki < q.kh; ++ki) {
            for (int64_t kj = 0; kj < q.kw; ++kj) {
                const float* src = col + ((m * q.kh + ki) * q.kw + kj) * t;
                int64_t lo, hi;
                tr.get(kj, &lo, &hi);
                if (hi <= lo) continue;
                float* yk = y + m * q.OP + lo * q.sw + (kj * q.dw - q.pl);
                for (int64_t r = 0; r < rows; ++r) {
                    const int64_t oh = (ih0 + r) * q.sh - q.pt + ki * q.dh;
                    if (oh >= 0 && oh < q.OH) add_row(src + r * q.W + lo, yk + oh * q.OW, hi - lo, q.sw);
                }
            }
        }
    }
}

// dst[j*KW + kj] = src[kj*ld + j] + bias for j < n, kj < KW: kw col rows interleaved into one output row.
template <int KW>
ACCEL_INLINE void zip_rows(const float* ACCEL_RESTRICT src, int64_t ld, float* ACCEL_RESTRICT dst, int64_t n,
                           float bias) {
    for (int64_t j = 0; j < n; ++j)
        for (int kj = 0; kj < KW; ++kj) dst[j * KW + kj] = src[kj * ld + j] + bias;
}

// col2im when every output gets exactly one contribution (kernel == stride, see axis_covered): output
// row (m, oh) is the kw col rows (m, ki, 0..kw-1) of one input row interleaved, stored with the bias, so
// the output needs no zero fill and is written once, in order.
ACCEL_HOT void store_patches(const ConvTransposeGeom& q, const float* col, int64_t ih0, int64_t rows, const float* bias,
                             float* y) {
    const int64_t kw = q.kw, t = rows * q.W;
    // Input columns [a, b) have their whole patch inside the output row; the rest go tap by tap.
    const int64_t a = std::min(q.W, (q.pl + kw - 1) / kw);
    const int64_t last = q.OW + q.pl - kw;
    const int64_t b = std::clamp<int64_t>(last >= 0 ? last / kw + 1 : 0, a, q.W);
    kern::TapRanges tr;
    tr.init(kw, 1, q.pl, kw, q.OW, q.W);
    for (int64_t m = 0; m < q.Mg; ++m) {
        const float bv = bias ? bias[m] : 0.f;
        for (int64_t r = 0; r < rows; ++r) {
            for (int64_t ki = 0; ki < q.kh; ++ki) {
                const int64_t oh = (ih0 + r) * q.sh - q.pt + ki;
                if (oh < 0 || oh >= q.OH) continue;
                const float* src = col + (m * q.kh + ki) * kw * t + r * q.W;
                float* yr = y + m * q.OP + oh * q.OW;  // yr[iw*kw + kj - pl]: tap kj of input column iw
                float* mid = yr + (a * kw - q.pl);
                if (kw == 2) zip_rows<2>(src + a, t, mid, b - a, bv);
                else if (kw == 1) zip_rows<1>(src + a, t, mid, b - a, bv);
                else
                    for (int64_t kj = 0; kj < kw; ++kj)
                        for (int64_t j = 0; j < b - a; ++j) mid[j * kw + kj] = src[kj * t + a + j] + bv;
                for (int64_t kj = 0; kj < kw; ++kj) {
                    int64_t lo, hi;
                    tr.get(kj, &lo, &hi);
                    for (int64_t iw = lo; iw < std::min(hi, a); ++iw) yr[iw * kw + kj - q.pl] = src[kj * t + iw] + bv;
                    for (int64_t iw = std::max(lo, b); iw < hi; ++iw) yr[iw * kw + kj - q.pl] = src[kj * t + iw] + bv;
                }
            }
        }
    }
}

// One input channel per group: y[m] += w[m, ki, kj] * x shifted to each tap, without a GEMM.
ACCEL_HOT void scatter_taps(const ConvTransposeGeom& q, const float* x, const float* w, float* y) {
    kern::TapRanges tr;
    tr.init(q.kw, q.dw, q.pl, q.sw, q.OW, q.W);
    for (int64_t m = 0; m < q.Mg; ++m) {
        float* ym = y + m * q.OP;
        for (int64_t ki = 0; ki < q.kh; ++ki) {
            for (int64_t ih = 0; ih < q.H; ++ih) {
                const int64_t oh = ih * q.sh - q.pt + ki * q.dh;
                if (oh < 0 || oh >= q.OH) continue;
                const float* xr = x + ih * q.W;
                float* yr = ym + oh * q.OW;
                for (int64_t kj = 0; kj < q.kw; ++kj) {
                    const float wv = w[(m * q.kh + ki) * q.kw + kj];
                    int64_t lo, hi;
                    tr.get(kj, &lo, &hi);
                    if (hi <= lo) continue;
                    float* d = yr + lo * q.sw + (kj * q.dw - q.pl);
                    const float* s = xr + lo;
                    const int64_t cnt = hi - lo;
                    if (q.sw == 1)
                        for (int64_t j = 0; j < cnt; ++j) d[j] += wv * s[j];
                    else
                        for (int64_t j = 0; j < cnt; ++j) d[j * q.sw] += wv * s[j];
                }
            }
        }
    }
}

}  // namespace

void convtranspose_fill_bias(const ConvTransposeGeom& q, const float* b, float* y) {
    for (int64_t m = 0; m < q.Mg; ++m) std::fill(y + m * q.OP, y + (m + 1) * q.OP, b ? b[m] : 0.f);
}

// Plain functions in front of the clones: an ifunc symbol would otherwise be exported from the driver.
void col2im_add(const ConvTransposeGeom& q, const float* col, int64_t ih0, int64_t rows, float* y) {
    add_patches(q, col, ih0, rows, y);
}

void col2im_cover(const ConvTransposeGeom& q, const float* col, int64_t ih0, int64_t rows, const float* bias,
                  float* y) {
    store_patches(q, col, ih0, rows, bias, y);
}

void convtranspose_direct(const ConvTransposeGeom& q, const float* x, const float* w, float* y) {
    scatter_taps(q, x, w, y);
}

}  // namespace accel_emu
