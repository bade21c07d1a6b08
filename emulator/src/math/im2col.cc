// im2col.cc - see im2col.h.
#include "math/im2col.h"

#include <algorithm>
#include <cstring>

#include "math/math_util.h"

namespace accel_emu {

namespace {

// T: float or a byte (int8 and uint8 move as bytes); taps outside the input read `pad`.
template <typename T>
void gather(const ConvGeom& q, const T* x, int64_t p0, int64_t t, T pad, T* ACCEL_RESTRICT col) {
    for (int64_t c = 0; c < q.Cg; ++c) {
        const T* xc = x + c * q.H * q.W;
        for (int64_t ki = 0; ki < q.kh; ++ki) {
            for (int64_t kj = 0; kj < q.kw; ++kj) {
                T* dst = col + ((c * q.kh + ki) * q.kw + kj) * t;
                const int64_t off = kj * q.dw - q.pl;
                int64_t lo, hi;
                kern::tap_range(off, q.sw, q.W, q.OW, &lo, &hi);
                for (int64_t p = p0, end = p0 + t; p < end;) {
                    const int64_t oh = p / q.OW, ow0 = p - oh * q.OW;
                    const int64_t ow1 = std::min(q.OW, ow0 + (end - p));
                    const int64_t ih = oh * q.sh - q.pt + ki * q.dh;
                    if (ih < 0 || ih >= q.H) {
                        std::fill_n(dst, ow1 - ow0, pad);
                    } else {
                        const int64_t a = std::clamp(lo, ow0, ow1), b = std::clamp(hi, a, ow1);
                        T* d = dst + (a - ow0);
                        for (int64_t j = 0; j < a - ow0; ++j) dst[j] = pad;
                        if (b > a) {
                            const T* src = xc + ih * q.W + (a * q.sw + off);
                            if (q.sw == 1) std::memcpy(d, src, sizeof(T) * (b - a));
                            else if (q.sw == 2)
                                for (int64_t j = 0; j < b - a; ++j) d[j] = src[2 * j];
                            else
                                for (int64_t j = 0; j < b - a; ++j) d[j] = src[j * q.sw];
                        }
                        for (int64_t j = b - ow0; j < ow1 - ow0; ++j) dst[j] = pad;
                    }
                    dst += ow1 - ow0;
                    p += ow1 - ow0;
                }
            }
        }
    }
}

}  // namespace

void im2col(const ConvGeom& q, const float* x, int64_t p0, int64_t t, float* col) { gather(q, x, p0, t, 0.f, col); }

void im2col(const ConvGeom& q, const uint8_t* x, int64_t p0, int64_t t, uint8_t pad, uint8_t* col) {
    gather(q, x, p0, t, pad, col);
}

}  // namespace accel_emu
