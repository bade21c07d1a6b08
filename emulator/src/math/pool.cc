// pool.cc - see pool.h. Windows are walked row by row: for each kernel tap, the range of output columns
// whose input column is in bounds is computed once, so the inner loops carry no bounds tests and
// vectorize. Taps outside the input never contribute (a max over an empty window is the lowest float, an
// average over one is 0); a NaN in a window makes its max NaN.
#include "math/pool.h"

#include <algorithm>
#include <cfloat>

#include "math/fast_math.h"
#include "math/math_util.h"

namespace accel_emu {
namespace {

// The larger of a window's running max m and a tap v; a NaN in either wins (as NumPy and torch, where
// onnxruntime's MaxPool keeps whichever operand its comparison picks). For integers the test folds away.
template <typename T>
ACCEL_INLINE T max_nan(T m, T v) {
    return (m >= v || m != m) ? m : v;
}

// One input row's taps into one output row: yr[ow] = max(yr[ow], row[ow * sw + kj * dw - pl]) for the taps
// [kj0, kj1) and, for each, the output columns whose input is inside the row (tr).
template <typename T>
ACCEL_INLINE void max_row_taps(const PoolGeom& q, const kern::TapRanges& tr, int64_t kj0, int64_t kj1,
                               const T* ACCEL_RESTRICT row, T* ACCEL_RESTRICT yr) {
    for (int64_t kj = kj0; kj < kj1; ++kj) {
        int64_t lo, hi;
        tr.get(kj, &lo, &hi);
        if (hi <= lo) continue;
        const T* src = row + (lo * q.sw + kj * q.dw - q.pl);
        T* d = yr + lo;
        const int64_t cnt = hi - lo;
        if (q.sw == 1) {
            for (int64_t j = 0; j < cnt; ++j) d[j] = max_nan(d[j], src[j]);
        } else if (q.sw == 2) {
            for (int64_t j = 0; j < cnt; ++j) d[j] = max_nan(d[j], src[2 * j]);
        } else {
            for (int64_t j = 0; j < cnt; ++j) d[j] = max_nan(d[j], src[j * q.sw]);
        }
    }
}

// T: float, int8_t or uint8_t; an empty window gives `lowest`.
template <typename T>
ACCEL_HOT void max_plane(const PoolGeom& q, const T* ACCEL_RESTRICT x, T* ACCEL_RESTRICT y, T lowest) {
    kern::TapRanges tr;
    tr.init(q.kw, q.dw, q.pl, q.sw, q.W, q.OW);
    int64_t kj0, kj1;
    kern::useful_taps(q.kw, q.dw, q.pl, q.sw, q.W, q.OW, &kj0, &kj1);
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        T* yr = y + oh * q.OW;
        for (int64_t ow = 0; ow < q.OW; ++ow) yr[ow] = lowest;
        int64_t ki0, ki1;
        kern::useful_taps(q.kh, q.dh, q.pt - oh * q.sh, 1, q.H, 1, &ki0, &ki1);
        for (int64_t ki = ki0; ki < ki1; ++ki)
            max_row_taps(q, tr, kj0, kj1, x + (oh * q.sh - q.pt + ki * q.dh) * q.W, yr);
    }
}

// The same for integers, separably: each output row's window rows are reduced to one row first (a max over
// whole input rows, kh vectors of W lanes), then that row's windows along the width: kh + kw steps an output
// instead of kh * kw (SPPF's 5x5 windows on 20x20 planes: 10 instead of 25, the first 10 on wide rows). A max
// of integers is the same in any order. Rows wider than the stack row take the direct walk.
template <typename T>
ACCEL_HOT void max_plane_separable(const PoolGeom& q, const T* ACCEL_RESTRICT x, T* ACCEL_RESTRICT y, T lowest) {
    constexpr int64_t kRow = 4096;
    if (q.W > kRow) return max_plane(q, x, y, lowest);
    T row[kRow];
    kern::TapRanges tr;
    tr.init(q.kw, q.dw, q.pl, q.sw, q.W, q.OW);
    int64_t kj0, kj1;
    kern::useful_taps(q.kw, q.dw, q.pl, q.sw, q.W, q.OW, &kj0, &kj1);
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        T* yr = y + oh * q.OW;
        for (int64_t ow = 0; ow < q.OW; ++ow) yr[ow] = lowest;
        int64_t ki0, ki1;
        kern::useful_taps(q.kh, q.dh, q.pt - oh * q.sh, 1, q.H, 1, &ki0, &ki1);
        if (ki1 <= ki0) continue;
        const int64_t ih0 = oh * q.sh - q.pt;
        std::copy_n(x + (ih0 + ki0 * q.dh) * q.W, q.W, row);
        for (int64_t ki = ki0 + 1; ki < ki1; ++ki) {
            const T* src = x + (ih0 + ki * q.dh) * q.W;
            for (int64_t j = 0; j < q.W; ++j) row[j] = max_nan(row[j], src[j]);
        }
        max_row_taps(q, tr, kj0, kj1, row, yr);
    }
}

// Number of window positions [s, s+k) counted along one axis: clipped to the input, or (include_pad) to
// the padded input [-pad_lo, in + pad_hi), which is what onnxruntime does for ceil_mode windows.
inline int64_t window_count(int64_t s, int64_t k, int64_t in, int64_t pad_hi, bool include_pad) {
    int64_t e = s + k;
    if (include_pad) return std::min(e, in + pad_hi) - s;
    return std::max<int64_t>(0, std::min(e, in) - std::max<int64_t>(s, 0));
}

ACCEL_HOT void avg_plane(const PoolGeom& q, bool include_pad, const float* ACCEL_RESTRICT x, float* ACCEL_RESTRICT y) {
    kern::TapRanges tr;
    tr.init(q.kw, 1, q.pl, q.sw, q.W, q.OW);
    int64_t kj0, kj1;
    kern::useful_taps(q.kw, 1, q.pl, q.sw, q.W, q.OW, &kj0, &kj1);
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        float* yr = y + oh * q.OW;
        for (int64_t ow = 0; ow < q.OW; ++ow) yr[ow] = 0.f;
        const int64_t hs = oh * q.sh - q.pt;
        int64_t ki0, ki1;
        kern::useful_taps(q.kh, 1, -hs, 1, q.H, 1, &ki0, &ki1);
        for (int64_t ki = ki0; ki < ki1; ++ki) {
            const int64_t ih = hs + ki;
            for (int64_t kj = kj0; kj < kj1; ++kj) {
                const int64_t off = kj - q.pl;
                int64_t lo, hi;
                tr.get(kj, &lo, &hi);
                if (hi <= lo) continue;
                const float* src = x + ih * q.W + (lo * q.sw + off);
                float* d = yr + lo;
                const int64_t cnt = hi - lo;
                if (q.sw == 1) {
                    for (int64_t j = 0; j < cnt; ++j) d[j] += src[j];
                } else {
                    for (int64_t j = 0; j < cnt; ++j) d[j] += src[j * q.sw];
                }
            }
        }
        const int64_t ch = window_count(hs, q.kh, q.H, q.pb, include_pad);
        for (int64_t ow = 0; ow < q.OW; ++ow) {
            const int64_t cnt = ch * window_count(ow * q.sw - q.pl, q.kw, q.W, q.pr, include_pad);
            yr[ow] = cnt > 0 ? yr[ow] / static_cast<float>(cnt) : 0.f;
        }
    }
}

ACCEL_HOT void global_avg(const float* x, float* y, int64_t planes, int64_t n) {
    const float inv = 1.f / static_cast<float>(n);
    for (int64_t p = 0; p < planes; ++p) y[p] = kern::sum_reduce(x + p * n, n) * inv;
}

}  // namespace

// Plain functions in front of the clones: an ifunc symbol would otherwise be exported from the driver.
void max_pool_plane(const PoolGeom& q, const float* x, float* y) { max_plane(q, x, y, -FLT_MAX); }
void max_pool_plane(const PoolGeom& q, const int8_t* x, int8_t* y) { max_plane_separable<int8_t>(q, x, y, INT8_MIN); }
void max_pool_plane(const PoolGeom& q, const uint8_t* x, uint8_t* y) { max_plane_separable<uint8_t>(q, x, y, 0); }

void avg_pool_plane(const PoolGeom& q, bool include_pad, const float* x, float* y) { avg_plane(q, include_pad, x, y); }

void global_avg_pool(const float* x, float* y, int64_t planes, int64_t n) { global_avg(x, y, planes, n); }

}  // namespace accel_emu
