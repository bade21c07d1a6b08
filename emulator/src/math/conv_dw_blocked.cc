// conv_dw_blocked.cc - depthwise convolution of small planes, 16 channels at a time (AVX-512): the
// channels are interleaved into a zero-padded buffer ([rows][cols][16], so that no tap needs a bounds
// check), each output position is one vector per tap, and the result is de-interleaved into the output
// planes. A small plane has too few outputs per row for the row-vectorized kernel (depthwise.cc) to pay
// for its per-row and per-plane set-up; here that cost is paid once per 16 channels.
#include <algorithm>

#include "math/depthwise.h"

#include "math/activation.h"
#include "math/math_util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define ACCEL_DW_BLOCKED 1
#endif

namespace accel_emu {

namespace {
constexpr int64_t kLanes = kDepthwiseBlock;
constexpr int64_t kMaxTaps = 49;
// Input planes at most this narrow and this big take the blocked path: the interleaving is scalar, so
// it pays only where the row kernel's per-row set-up dominates (measured: 14x14 and 7x7 gain 1.5-3x;
// 28x28, and rows of 80 or 96, lose).
constexpr int64_t kNarrowRow = 16;
constexpr int64_t kSmallPlane = 256;

// The padded input extent the taps reach: rows and columns ([[maybe_unused]]: the blocked path that
// uses them is built on x86-64 only).
[[maybe_unused]] int64_t padded_rows(const ConvGeom& q) { return (q.OH - 1) * q.sh + (q.kh - 1) * q.dh + 1; }
[[maybe_unused]] int64_t padded_cols(const ConvGeom& q) { return (q.OW - 1) * q.sw + (q.kw - 1) * q.dw + 1; }
}  // namespace

#if defined(ACCEL_DW_BLOCKED)

bool depthwise_blocked_applies(FloatIsa isa, const ConvGeom& q) {
    return isa == FloatIsa::Avx512 && q.depthwise && q.W <= kNarrowRow && q.H * q.W <= kSmallPlane &&
           q.kh * q.kw <= kMaxTaps;
}

int64_t depthwise_blocked_scratch_floats(const ConvGeom& q) { return (padded_rows(q) * padded_cols(q) + q.P) * kLanes; }

__attribute__((target("avx512f"))) void depthwise_blocked(const ConvGeom& q, const float* x, const float* w,
                                                          const float* bias, Act act, float alpha, float beta, float* y,
                                                          float* scratch, int64_t block0, int64_t block1) {
    const int64_t Hp = padded_rows(q), Wp = padded_cols(q), HW = q.H * q.W, taps = q.kh * q.kw;
    float* buf = scratch;
    float* out = scratch + Hp * Wp * kLanes;
    // Rows and columns of the input inside the padded extent.
    const int64_t r0 = std::max<int64_t>(0, -q.pt), r1 = std::min(q.H, Hp - q.pt);
    const int64_t c0 = std::max<int64_t>(0, -q.pl), c1 = std::min(q.W, Wp - q.pl);
    std::fill_n(buf, Hp * Wp * kLanes, 0.f);  // padding; the interior is overwritten for each block
    for (int64_t cb = block0 * kLanes; cb < std::min(q.C, block1 * kLanes); cb += kLanes) {
        const int64_t nc = std::min(kLanes, q.C - cb);
        for (int64_t c = 0; c < nc; ++c) {
            const float* xc = x + (cb + c) * HW;
            for (int64_t ih = r0; ih < r1; ++ih)
                for (int64_t iw = c0; iw < c1; ++iw)
                    buf[((ih + q.pt) * Wp + iw + q.pl) * kLanes + c] = xc[ih * q.W + iw];
        }
        if (nc < kLanes)  // stale channels of the previous block would be harmless, but keep lanes defined
            for (int64_t i = 0; i < Hp * Wp; ++i) std::fill_n(buf + i * kLanes + nc, kLanes - nc, 0.f);
        __m512 wv[kMaxTaps];
        for (int64_t t = 0; t < taps; ++t) {
            alignas(64) float lane[kLanes] = {};
            for (int64_t c = 0; c < nc; ++c) lane[c] = w[(cb + c) * taps + t];
            wv[t] = _mm512_load_ps(lane);
        }
        alignas(64) float bl[kLanes] = {};
        for (int64_t c = 0; c < nc && bias; ++c) bl[c] = bias[cb + c];
        const __m512 bv = _mm512_load_ps(bl);
        for (int64_t oh = 0; oh < q.OH; ++oh)
            for (int64_t ow = 0; ow < q.OW; ++ow) {
                const float* base = buf + (oh * q.sh * Wp + ow * q.sw) * kLanes;
                __m512 acc = bv;
                for (int64_t ki = 0, t = 0; ki < q.kh; ++ki)
                    for (int64_t kj = 0; kj < q.kw; ++kj, ++t)
                        acc =
                            _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(base + (ki * q.dh * Wp + kj * q.dw) * kLanes), acc);
                _mm512_storeu_ps(out + (oh * q.OW + ow) * kLanes, acc);
            }
        apply_activation(act, alpha, beta, out, static_cast<size_t>(q.P * kLanes));
        for (int64_t c = 0; c < nc; ++c) {
            float* yc = y + (cb + c) * q.P;
            for (int64_t p = 0; p < q.P; ++p) yc[p] = out[p * kLanes + c];
        }
    }
}

#else

bool depthwise_blocked_applies(FloatIsa, const ConvGeom&) { return false; }
int64_t depthwise_blocked_scratch_floats(const ConvGeom&) { return 0; }
void depthwise_blocked(const ConvGeom&, const float*, const float*, const float*, Act, float, float, float*, float*,
                       int64_t, int64_t) {}

#endif

}  // namespace accel_emu
