// depthwise_avx512.cc - depthwise convolution of one channel plane with AVX-512, for strides 1 and 2 and
// no dilation. The plane is first split into its stride phases (sh x sw planes: rows r*sh+a, columns
// c*sw+b of the zero-padded input), each Wq columns wide, so that every tap of a strided conv reads its
// phase plane at stride 1. Then the output is computed over the flattened rows of width Wq: one vector
// holds 16 consecutive positions across row ends, so small planes (7x7, 14x14) fill their vectors as
// large ones do, and no tap needs a bounds check. The Wq - OW columns past each row's end are computed and
// dropped when the rows are copied out. Sums run bias first, then the taps row by row (the padding's taps
// included, as zeros); the row kernel (depthwise.cc) sums in another order, so the two agree to rounding
// (test_float_paths holds every path against the portable one and against onnxruntime). Planes of at most
// 32x32 outputs go to conv_small_depthwise.cc, which takes 16 channels at a time.
#include <algorithm>
#include <limits>

#include "math/activation.h"
#include "math/depthwise.h"
#include "math/math_util.h"
#include "math/stride_phases.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/avx512_lanes.h"
#include "math/x86_intrinsics.h"
#define ACCEL_DW_AVX512 1
#endif

namespace accel_emu {

namespace {
constexpr int64_t kLanes = 16;
constexpr int64_t kMaxTaps = 49;  // 7x7

// Output rows are computed in bands whose phase planes and flattened outputs stay in L1 (a 320x320 plane
// whole would not fit in L2).
constexpr int64_t kBandFloats = 8192;

struct PhaseGeom {
    int64_t Wq;      // a phase plane's columns
    int64_t band;    // output rows per band
    int64_t stride;  // floats from one phase plane to the next (with room for the last vector's overrun)
    int64_t out;     // band * Wq rounded up to whole vectors: the flattened outputs computed per band
};

[[maybe_unused]] PhaseGeom phase_geom(const ConvGeom& q) {  // only the x86 paths use it
    PhaseGeom g;
    g.Wq = phase_cols(q);
    g.band = std::max<int64_t>(1, std::min(q.OH, kBandFloats / (g.Wq * (q.sh * q.sw + 1))));
    g.out = (g.band * g.Wq + kLanes - 1) / kLanes * kLanes;
    g.stride = phase_plane_floats(q, g.band, g.out);
    return g;
}
}  // namespace

#if defined(ACCEL_DW_AVX512)

bool depthwise_avx512_applies(FloatIsa isa, const ConvGeom& q) {
    // Past this many input positions, 3x3 convs run faster on the row kernel (depthwise.cc), which reads the
    // input where it lies (measured, bench_kernels.py: 320x320 0.97 against 1.27 ms, 160x160 even; 5x5
    // convs gain here at every size).
    constexpr int64_t kRowKernelFrom = 160 * 160;
    if (q.kh * q.kw <= 9 && q.H * q.W > kRowKernelFrom) return false;
    return isa == FloatIsa::Avx512 && q.depthwise && q.dh == 1 && q.dw == 1 && (q.sh == 1 || q.sh == 2) &&
           (q.sw == 1 || q.sw == 2) && q.kh * q.kw <= kMaxTaps;
}

int64_t depthwise_avx512_scratch_floats(const ConvGeom& q) {
    if (depthwise_small_applies(q)) return depthwise_small_scratch_floats(q);
    const PhaseGeom g = phase_geom(q);
    return q.sh * q.sw * g.stride + g.out;
}

namespace {

// out[p] = bias + sum over taps t of wt[t] * src[t][p], for p < n (a multiple of 16), 4 vectors at a time.
__attribute__((target("avx512f"))) void flat_taps(const float* const* src, const float* wt, int64_t taps, float bias,
                                                  float* out, int64_t n) {
    __m512 wv[kMaxTaps];
    for (int64_t t = 0; t < taps; ++t) wv[t] = _mm512_set1_ps(wt[t]);
    const __m512 bv = _mm512_set1_ps(bias);
    int64_t p = 0;
    for (; p + 4 * kLanes <= n; p += 4 * kLanes) {
        __m512 a0 = bv, a1 = bv, a2 = bv, a3 = bv;
        for (int64_t t = 0; t < taps; ++t) {
            const float* s = src[t] + p;
            a0 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(s), a0);
            a1 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(s + kLanes), a1);
            a2 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(s + 2 * kLanes), a2);
            a3 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(s + 3 * kLanes), a3);
        }
        _mm512_storeu_ps(out + p, a0);
        _mm512_storeu_ps(out + p + kLanes, a1);
        _mm512_storeu_ps(out + p + 2 * kLanes, a2);
        _mm512_storeu_ps(out + p + 3 * kLanes, a3);
    }
    for (; p < n; p += kLanes) {
        __m512 a0 = bv;
        for (int64_t t = 0; t < taps; ++t) a0 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(src[t] + p), a0);
        _mm512_storeu_ps(out + p, a0);
    }
}

// y[oh * OW + ow] = act(flat[oh * Wq + ow]) for oh < rows: the rows without the columns past their end,
// with the activation in registers where it is a clamp (lo <= x <= hi; NaN stays NaN as in activation.cc).
__attribute__((target("avx512f"))) void drop_row_ends(const ConvGeom& q, const PhaseGeom& g, const float* flat,
                                                      int64_t rows, bool clamp, float lo, float hi, float* y) {
    const __m512 lov = _mm512_set1_ps(lo), hiv = _mm512_set1_ps(hi);
    for (int64_t oh = 0; oh < rows; ++oh) {
        const float* s = flat + oh * g.Wq;
        float* d = y + oh * q.OW;
        for (int64_t c = 0; c < q.OW; c += kLanes) {
            const __mmask16 m = lanes16::first(q.OW - c);
            __m512 v = _mm512_maskz_loadu_ps(m, s + c);
            if (clamp) {
                // x < lo: lo; then x > hi: hi (NaN compares false both times and stays NaN).
                v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lov, _CMP_LT_OQ), lov);
                v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hiv, _CMP_GT_OQ), hiv);
            }
            _mm512_mask_storeu_ps(d + c, m, v);
        }
    }
}

}  // namespace

void depthwise_avx512(const ConvGeom& q, const float* x, const float* w, const float* bias, Act act, float alpha,
                      float beta, int64_t c0, int64_t c1, float* y, float* scratch) {
    if (depthwise_small_applies(q)) {
        depthwise_small(q, x, w, bias, act, alpha, beta, c0, c1, y, scratch);
        return;
    }
    const PhaseGeom g = phase_geom(q);
    const int64_t taps = q.kh * q.kw, HW = q.H * q.W;
    const float* src[kMaxTaps];
    for (int64_t ki = 0, t = 0; ki < q.kh; ++ki)
        for (int64_t kj = 0; kj < q.kw; ++kj, ++t) src[t] = scratch + phase_tap_offset(q, ki, kj, g.Wq, g.stride);
    float* flat = scratch + q.sh * q.sw * g.stride;
    // Relu and Clip are clamps done while the rows are copied out; other activations run on each band of
    // rows after, while it is in cache.
    const bool clamp = act == Act::Relu || act == Act::Clip;
    const float lo = act == Act::Clip ? alpha : 0.f;
    const float hi = act == Act::Clip ? beta : std::numeric_limits<float>::infinity();
    for (int64_t c = c0; c < c1; ++c) {
        const float* xc = x + c * HW;
        float* yc = y + c * q.P;
        for (int64_t o0 = 0; o0 < q.OH; o0 += g.band) {
            const int64_t rows = std::min(g.band, q.OH - o0);
            build_stride_phases(q, xc, o0, phase_rows(q, rows), g.Wq, g.stride, scratch);
            flat_taps(src, w + c * taps, taps, bias ? bias[c] : 0.f, flat,
                      (rows * g.Wq + kLanes - 1) / kLanes * kLanes);
            drop_row_ends(q, g, flat, rows, clamp, lo, hi, yc + o0 * q.OW);
            if (!clamp && act != Act::None)
                apply_activation(act, alpha, beta, yc + o0 * q.OW, static_cast<size_t>(rows * q.OW));
        }
    }
}

#else

bool depthwise_avx512_applies(FloatIsa, const ConvGeom&) { return false; }
int64_t depthwise_avx512_scratch_floats(const ConvGeom&) { return 0; }
void depthwise_avx512(const ConvGeom&, const float*, const float*, const float*, Act, float, float, int64_t, int64_t,
                      float*, float*) {}

#endif

}  // namespace accel_emu
