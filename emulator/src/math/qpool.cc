// qpool.cc - see qpool.h. Plain loops: the global pool's sum is exact in any order; the windowed pool
// must add in onnxruntime's order (row by row, left to right), so it is written as that loop.
#include "math/qpool.h"

#include <algorithm>
#include <type_traits>

#include "math/exact_rounding.h"

namespace accel_emu {
namespace {

template <typename T>
void global_planes(const T* x, T* y, int64_t planes, int64_t n, const QParams& qx, const QParams& qy) {
    const float mult = qx.scale / (qy.scale * static_cast<float>(n));
    for (int64_t p = 0; p < planes; ++p) {
        const T* v = x + p * n;
        int64_t sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += v[i];
        // int32 as onnxruntime keeps it (it refuses planes of 2^24 elements and more, where it could wrap).
        const auto acc = static_cast<int32_t>(static_cast<uint32_t>(sum - int64_t{qx.zero} * n));
        y[p] = static_cast<T>(requantize_value(acc, mult, qy.zero, qy.is_signed));
    }
}

// f(output index, rows [hs, h1), columns [ws, w1)) for each window of a plane: its part inside the input.
template <class F>
void each_window(const PoolGeom& q, F&& f) {
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        const int64_t h0 = oh * q.sh - q.pt, h1 = std::min(h0 + q.kh, q.H), hs = std::max<int64_t>(h0, 0);
        for (int64_t ow = 0; ow < q.OW; ++ow) {
            const int64_t w0 = ow * q.sw - q.pl, w1 = std::min(w0 + q.kw, q.W), ws = std::max<int64_t>(w0, 0);
            f(oh * q.OW + ow, hs, h1, ws, w1);
        }
    }
}

template <typename T>
void avg_plane(const PoolGeom& q, bool include_pad, const T* x, T* y, const QParams& qx, const QParams& qy) {
    const float yz = static_cast<float>(qy.zero);
    each_window(q, [&](int64_t o, int64_t hs, int64_t h1, int64_t ws, int64_t w1) {
        float acc = 0.f;
        for (int64_t h = hs; h < h1; ++h)
            for (int64_t w = ws; w < w1; ++w) acc += qx.scale * static_cast<float>(x[h * q.W + w] - qx.zero);
        const int64_t count = include_pad ? q.kh * q.kw : (h1 - hs) * (w1 - ws);
        const float mean = acc / static_cast<float>(count);
        y[o] = static_cast<T>(round_saturate(mean / qy.scale + yz, qy.is_signed));
    });
}

template <typename T>
void fixed_plane(const PoolGeom& q, const T* x, T* y, const AvgCoef& c) {
    each_window(q, [&](int64_t o, int64_t hs, int64_t h1, int64_t ws, int64_t w1) {
        int64_t sum = 0;
        for (int64_t h = hs; h < h1; ++h)
            for (int64_t w = ws; w < w1; ++w) sum += x[h * q.W + w];
        y[o] = static_cast<T>(saturate8(shift_round_up(sum * c.mult, c.shift), std::is_signed_v<T>));
    });
}

template <typename T>
void fixed_global(const T* x, T* y, int64_t planes, int64_t n, const AvgCoef& c) {
    for (int64_t p = 0; p < planes; ++p) {
        int64_t sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += x[p * n + i];
        y[p] = static_cast<T>(saturate8(shift_round_up(sum * c.mult, c.shift), std::is_signed_v<T>));
    }
}

}  // namespace

void fixed_avg_pool_plane(const PoolGeom& q, const void* x, void* y, const AvgCoef& c, bool is_signed) {
    if (is_signed) fixed_plane(q, static_cast<const int8_t*>(x), static_cast<int8_t*>(y), c);
    else fixed_plane(q, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), c);
}

void fixed_global_avg_pool(const void* x, void* y, int64_t planes, int64_t n, const AvgCoef& c, bool is_signed) {
    if (is_signed) fixed_global(static_cast<const int8_t*>(x), static_cast<int8_t*>(y), planes, n, c);
    else fixed_global(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), planes, n, c);
}

void qglobal_avg_pool(const void* x, void* y, int64_t planes, int64_t n, const QParams& qx, const QParams& qy) {
    if (qx.is_signed) global_planes(static_cast<const int8_t*>(x), static_cast<int8_t*>(y), planes, n, qx, qy);
    else global_planes(static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), planes, n, qx, qy);
}

void qavg_pool_plane(const PoolGeom& q, bool include_pad, const void* x, void* y, const QParams& qx,
                     const QParams& qy) {
    if (qx.is_signed) avg_plane(q, include_pad, static_cast<const int8_t*>(x), static_cast<int8_t*>(y), qx, qy);
    else avg_plane(q, include_pad, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), qx, qy);
}

}  // namespace accel_emu
