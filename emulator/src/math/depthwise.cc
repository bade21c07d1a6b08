// depthwise.cc - direct depthwise convolution, one channel plane at a time. Output rows whose whole
// window lies inside the input, for the common 3x3/5x5 kernels with stride 1 or 2 and no dilation, are
// computed in one pass with every tap unrolled (the output row is written once); everything else (edges,
// other shapes) adds one tap at a time over the columns where that tap is in bounds.
#include "math/depthwise.h"

#include "math/math_util.h"

namespace accel_emu {
namespace {

// Adds every in-bounds tap to output columns [c0, c1) of row oh.
ACCEL_INLINE void row_taps(const ConvGeom& q, const kern::TapRanges& tr, const float* x, const float* w, float* yr,
                           int64_t oh, int64_t c0, int64_t c1) {
    for (int64_t ki = 0; ki < q.kh; ++ki) {
        const int64_t ih = oh * q.sh - q.pt + ki * q.dh;
        if (ih < 0 || ih >= q.H) continue;
        for (int64_t kj = 0; kj < q.kw; ++kj) {
            const float wv = w[ki * q.kw + kj];
            const int64_t off = kj * q.dw - q.pl;
            int64_t lo, hi;
            tr.get(kj, &lo, &hi);
            lo = lo > c0 ? lo : c0;
            hi = hi < c1 ? hi : c1;
            if (hi <= lo) continue;
            const float* src = x + ih * q.W + (lo * q.sw + off);
            float* d = yr + lo;
            const int64_t cnt = hi - lo;
            if (q.sw == 1) {
                for (int64_t j = 0; j < cnt; ++j) d[j] += wv * src[j];
            } else if (q.sw == 2) {
                for (int64_t j = 0; j < cnt; ++j) d[j] += wv * src[2 * j];
            } else {
                for (int64_t j = 0; j < cnt; ++j) d[j] += wv * src[j * q.sw];
            }
        }
    }
}

// y[j] = bias + sum over the KxK window starting at column j*S of rows r[0..K), for j < n.
template <int K, int S>
ACCEL_INLINE void interior(const float* const* r, const float* w, float bias, float* ACCEL_RESTRICT y, int64_t n) {
    float wk[K * K];
    for (int i = 0; i < K * K; ++i) wk[i] = w[i];
    const float* ACCEL_RESTRICT r0 = r[0];
    const float* ACCEL_RESTRICT r1 = r[1];
    const float* ACCEL_RESTRICT r2 = r[2];
    const float* ACCEL_RESTRICT r3 = K > 3 ? r[3] : r[0];
    const float* ACCEL_RESTRICT r4 = K > 4 ? r[4] : r[0];
    for (int64_t j = 0; j < n; ++j) {
        float acc = bias;
        for (int kj = 0; kj < K; ++kj) {
            acc += wk[0 * K + kj] * r0[j * S + kj];
            acc += wk[1 * K + kj] * r1[j * S + kj];
            acc += wk[2 * K + kj] * r2[j * S + kj];
            if (K > 3) acc += wk[3 * K + kj] * r3[j * S + kj];
            if (K > 4) acc += wk[4 * K + kj] * r4[j * S + kj];
        }
        y[j] = acc;
    }
}

// The sum of the in-bounds taps for one output (edge columns of the fast path).
ACCEL_INLINE float point(const ConvGeom& q, const float* x, const float* w, int64_t oh, int64_t ow) {
    float acc = 0.f;
    for (int64_t ki = 0; ki < q.kh; ++ki) {
        const int64_t ih = oh * q.sh - q.pt + ki;
        if (ih < 0 || ih >= q.H) continue;
        for (int64_t kj = 0; kj < q.kw; ++kj) {
            const int64_t iw = ow * q.sw - q.pl + kj;
            if (iw >= 0 && iw < q.W) acc += w[ki * q.kw + kj] * x[ih * q.W + iw];
        }
    }
    return acc;
}

ACCEL_HOT void plane(const ConvGeom& q, const float* x, const float* w, float bias, float* y) {
    kern::TapRanges tr;
    tr.init(q.kw, q.dw, q.pl, q.sw, q.W, q.OW);
    const int k = static_cast<int>(q.kh);
    const bool fast_shape = q.kh == q.kw && (k == 3 || k == 5) && (q.sw == 1 || q.sw == 2) && q.dh == 1 && q.dw == 1;
    // Interior columns: the whole kernel row is in bounds, ow*sw - pl >= 0 and ow*sw - pl + kw <= W.
    int64_t a = q.OW, b = q.OW;
    if (fast_shape) {
        a = q.pl / q.sw + (q.pl % q.sw != 0);
        a = a < q.OW ? a : q.OW;
        b = q.W - q.kw + q.pl >= 0 ? (q.W - q.kw + q.pl) / q.sw + 1 : 0;
        b = b < q.OW ? b : q.OW;
        b = b > a ? b : a;
    }
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        float* yr = y + oh * q.OW;
        const int64_t ih0 = oh * q.sh - q.pt;
        if (b > a && ih0 >= 0 && ih0 + q.kh <= q.H) {
            const float* rows[5];
            for (int i = 0; i < k; ++i) rows[i] = x + (ih0 + i) * q.W + (a * q.sw - q.pl);
            const int64_t n = b - a;
            if (k == 3 && q.sw == 1) interior<3, 1>(rows, w, bias, yr + a, n);
            else if (k == 3) interior<3, 2>(rows, w, bias, yr + a, n);
            else if (q.sw == 1) interior<5, 1>(rows, w, bias, yr + a, n);
            else interior<5, 2>(rows, w, bias, yr + a, n);
            for (int64_t ow = 0; ow < a; ++ow) yr[ow] = bias + point(q, x, w, oh, ow);
            for (int64_t ow = b; ow < q.OW; ++ow) yr[ow] = bias + point(q, x, w, oh, ow);
        } else {
            for (int64_t ow = 0; ow < q.OW; ++ow) yr[ow] = bias;
            row_taps(q, tr, x, w, yr, oh, 0, q.OW);
        }
    }
}

}  // namespace

// A plain function in front of the clones: an ifunc symbol would otherwise be exported from the driver.
void depthwise_plane(const ConvGeom& q, const float* x, const float* w, float bias, float* y) {
    plane(q, x, w, bias, y);
}

}  // namespace accel_emu
