// im2col.cc - see im2col.h.
#include "math/im2col.h"

#include <algorithm>
#include <cstring>

#include "math/math_util.h"

namespace accel_emu {

void im2col(const ConvGeom& q, const float* x, int64_t p0, int64_t t, float* ACCEL_RESTRICT col) {
    for (int64_t c = 0; c < q.Cg; ++c) {
        const float* xc = x + c * q.H * q.W;
        for (int64_t ki = 0; ki < q.kh; ++ki) {
            for (int64_t kj = 0; kj < q.kw; ++kj) {
                float* dst = col + ((c * q.kh + ki) * q.kw + kj) * t;
                const int64_t off = kj * q.dw - q.pl;
                int64_t lo, hi;
                kern::tap_range(off, q.sw, q.W, q.OW, &lo, &hi);
                for (int64_t p = p0, end = p0 + t; p < end;) {
                    const int64_t oh = p / q.OW, ow0 = p - oh * q.OW;
                    const int64_t ow1 = std::min(q.OW, ow0 + (end - p));
                    const int64_t ih = oh * q.sh - q.pt + ki * q.dh;
                    if (ih < 0 || ih >= q.H) {
                        std::memset(dst, 0, sizeof(float) * (ow1 - ow0));
                    } else {
                        const int64_t a = std::clamp(lo, ow0, ow1), b = std::clamp(hi, a, ow1);
                        float* d = dst + (a - ow0);
                        for (int64_t j = 0; j < a - ow0; ++j) dst[j] = 0.f;
                        if (b > a) {
                            const float* src = xc + ih * q.W + (a * q.sw + off);
                            if (q.sw == 1) std::memcpy(d, src, sizeof(float) * (b - a));
                            else if (q.sw == 2)
                                for (int64_t j = 0; j < b - a; ++j) d[j] = src[2 * j];
                            else
                                for (int64_t j = 0; j < b - a; ++j) d[j] = src[j * q.sw];
                        }
                        for (int64_t j = b - ow0; j < ow1 - ow0; ++j) dst[j] = 0.f;
                    }
                    dst += ow1 - ow0;
                    p += ow1 - ow0;
                }
            }
        }
    }
}

}  // namespace accel_emu
