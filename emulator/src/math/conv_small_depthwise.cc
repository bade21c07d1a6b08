// conv_small_depthwise.cc - depthwise convolution of small planes (at most 32x32 outputs) with AVX-512, 16
// channels to a vector. A plane-at-a-time kernel (depthwise_avx512.cc) pays a set-up for every channel (its
// stride phases, the weights broadcast, the rows copied out) that costs more than the taps of a 7x7 plane;
// here that is done once for 16 channels: their planes are transposed into a zero-padded position-major
// buffer (position (r, c) holds the 16 channels' inputs), every tap of an output is then one vector FMA with
// no bounds check, and the outputs are transposed back into NCHW. Sums run bias first, then the taps row by
// row, the padding's included as zeros: the operations of depthwise_avx512.cc's flattened kernel, so the two
// give the same bits.
#include <algorithm>

#include "math/activation.h"
#include "math/depthwise.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/avx512_lanes.h"
#include "math/conv_small_transpose.h"
#include "math/x86_intrinsics.h"
#define ACCEL_DW_SMALL 1
#endif

namespace accel_emu {

namespace {
constexpr int64_t kLanes = 16;
// Up to 32x32 outputs, from up to 64x64 padded inputs (a 56x56 plane of stride 2: 200 KiB for 16 channels, in
// L2). Measured, in a loop over the kernel alone against the plane-at-a-time one: MobileNetV2's 7x7 planes take
// 0.36x its time, 14x14 0.6x, 28x28 and 56x56 of stride 2 0.85x; 28x28 of 32 channels even.
constexpr int64_t kMaxOutputs = 1024;
constexpr int64_t kMaxPadded = 4096;

// The padded input an output plane reads: rows and columns from the top-left tap of the first output to the
// bottom-right tap of the last.
int64_t padded_rows(const ConvGeom& q) { return (q.OH - 1) * q.sh + (q.kh - 1) * q.dh + 1; }
int64_t padded_cols(const ConvGeom& q) { return (q.OW - 1) * q.sw + (q.kw - 1) * q.dw + 1; }
}  // namespace

bool depthwise_small_applies(const ConvGeom& q) {
    return q.depthwise && q.P <= kMaxOutputs && padded_rows(q) * padded_cols(q) <= kMaxPadded;
}

int64_t depthwise_small_scratch_floats(const ConvGeom& q) {
    // The padded inputs, the outputs, the weights and bias of 16 channels; then where each input position and
    // each output position lies in the padded inputs, and each tap from its output (int32 each).
    return (padded_rows(q) * padded_cols(q) + q.P + q.kh * q.kw + 1) * kLanes + q.H * q.W + q.P + q.kh * q.kw;
}

#if defined(ACCEL_DW_SMALL)

namespace {

#define ACCEL_AVX512 __attribute__((target("avx512f")))

// out[j] = bias + sum over taps t of wt[t] * xp[at[j] + tap[t]] for the NB outputs j of a block (16 floats per
// position, as in wt and out), the taps in order.
template <int NB>
ACCEL_AVX512 void outputs(const float* xp, const int32_t* at, const int32_t* tap, int64_t taps, const float* wt,
                          __m512 bias, float* out) {
    __m512 acc[NB];
    const float* s[NB];
    for (int j = 0; j < NB; ++j) acc[j] = bias, s[j] = xp + at[j];
    for (int64_t t = 0; t < taps; ++t) {
        const __m512 w = _mm512_loadu_ps(wt + t * kLanes);
        for (int j = 0; j < NB; ++j) acc[j] = _mm512_fmadd_ps(w, _mm512_loadu_ps(s[j] + tap[t]), acc[j]);
    }
    for (int j = 0; j < NB; ++j) _mm512_storeu_ps(out + j * kLanes, acc[j]);
}

using Outputs = void (*)(const float*, const int32_t*, const int32_t*, int64_t, const float*, __m512, float*);
constexpr int kBlock = 8;  // outputs per block: independent sums enough to cover the FMA latency
const Outputs kOutputs[kBlock] = {outputs<1>, outputs<2>, outputs<3>, outputs<4>,
                                  outputs<5>, outputs<6>, outputs<7>, outputs<8>};

}  // namespace

ACCEL_AVX512 void depthwise_small(const ConvGeom& q, const float* x, const float* w, const float* bias, Act act,
                                  float alpha, float beta, int64_t c0, int64_t c1, float* y, float* scratch) {
    const int64_t Hp = padded_rows(q), Wp = padded_cols(q), HW = q.H * q.W, taps = q.kh * q.kw;
    float* xp = scratch;                  // [Hp][Wp][16]
    float* out = xp + Hp * Wp * kLanes;   // [P][16]
    float* wt = out + q.P * kLanes;       // [taps][16]
    float* bv = wt + taps * kLanes;       // [16]
    int32_t* in_at = reinterpret_cast<int32_t*>(bv + kLanes);  // [H*W], -1 where no output reads it
    int32_t* out_at = in_at + HW;                               // [P]
    int32_t* tap_at = out_at + q.P;                             // [taps]
    for (int64_t p = 0; p < HW; ++p) {
        const int64_t ih = p / q.W + q.pt, iw = p % q.W + q.pl;
        in_at[p] = ih < Hp && iw < Wp ? static_cast<int32_t>((ih * Wp + iw) * kLanes) : -1;
    }
    for (int64_t p = 0; p < q.P; ++p)
        out_at[p] = static_cast<int32_t>((p / q.OW * q.sh * Wp + p % q.OW * q.sw) * kLanes);
    for (int64_t ki = 0, t = 0; ki < q.kh; ++ki)
        for (int64_t kj = 0; kj < q.kw; ++kj, ++t)
            tap_at[t] = static_cast<int32_t>((ki * q.dh * Wp + kj * q.dw) * kLanes);
    // The padding is zeroed once (each pass writes the positions inside the input only): the rows above and
    // below the input, the columns left and right of it.
    const int64_t r1 = std::min(Hp, q.pt + q.H), w1 = std::min(Wp, q.pl + q.W);
    for (int64_t r = 0; r < Hp; ++r) {
        float* row = xp + r * Wp * kLanes;
        if (r < q.pt || r >= r1) {
            std::fill_n(row, Wp * kLanes, 0.f);
        } else {
            std::fill_n(row, q.pl * kLanes, 0.f);
            std::fill_n(row + w1 * kLanes, (Wp - w1) * kLanes, 0.f);
        }
    }
    for (int64_t c = c0; c < c1; c += kLanes) {
        const int64_t n = std::min(kLanes, c1 - c);
        for (int64_t t = 0; t < taps; ++t)
            for (int64_t i = 0; i < kLanes; ++i) wt[t * kLanes + i] = i < n ? w[(c + i) * taps + t] : 0.f;
        for (int64_t i = 0; i < kLanes; ++i) bv[i] = i < n && bias ? bias[c + i] : 0.f;
        // The inputs, 16 positions of the 16 channels at a time, each position's channels to its padded place.
        for (int64_t p = 0; p < HW; p += kLanes) {
            const __mmask16 m = lanes16::first(HW - p);
            __m512 r[16];
            for (int64_t i = 0; i < kLanes; ++i)
                r[i] = i < n ? _mm512_maskz_loadu_ps(m, x + (c + i) * HW + p) : _mm512_setzero_ps();
            transpose16(r);
            const int64_t np = std::min(kLanes, HW - p);
            for (int64_t j = 0; j < np; ++j)
                if (in_at[p + j] >= 0) _mm512_storeu_ps(xp + in_at[p + j], r[j]);
        }
        const __m512 b = _mm512_loadu_ps(bv);
        for (int64_t p = 0; p < q.P; p += kBlock) {
            const int64_t nb = std::min<int64_t>(kBlock, q.P - p);
            kOutputs[nb - 1](xp, out_at + p, tap_at, taps, wt, b, out + p * kLanes);
        }
        apply_activation(act, alpha, beta, out, static_cast<size_t>(q.P * kLanes));
        store_transposed(out, kLanes, q.P, n, y + c * q.P, q.P);
    }
}

#else

void depthwise_small(const ConvGeom&, const float*, const float*, const float*, Act, float, float, int64_t, int64_t,
                     float*, float*) {}

#endif

}  // namespace accel_emu
