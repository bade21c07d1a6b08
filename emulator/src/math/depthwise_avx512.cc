// depthwise_avx512.cc - depthwise convolution of one channel plane with AVX-512, for strides 1 and 2 and
// no dilation. The plane is first split into its stride phases (sh x sw planes: rows r*sh+a, columns
// c*sw+b of the zero-padded input), each Wq columns wide, so that every tap of a strided conv reads its
// phase plane at stride 1. Then the output is computed over the flattened rows of width Wq: one vector
// holds 16 consecutive positions across row ends, so small planes (7x7, 14x14) fill their vectors as
// large ones do, and no tap needs a bounds check. The Wq - OW columns past each row's end are computed and
// dropped when the rows are copied out. Sums run bias first, then the taps row by row, on every path.
#include <algorithm>
#include <limits>

#include "math/activation.h"
#include "math/depthwise.h"
#include "math/math_util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
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
    int64_t Hq;      // a phase plane's rows for one band
    int64_t stride;  // floats from one phase plane to the next (with room for the last vector's overrun)
    int64_t out;     // band * Wq rounded up to whole vectors: the flattened outputs computed per band
};

PhaseGeom phase_geom(const ConvGeom& q) {
    PhaseGeom g;
    g.Wq = q.OW + (q.kw - 1) / q.sw;
    g.band = std::max<int64_t>(1, std::min(q.OH, kBandFloats / (g.Wq * (q.sh * q.sw + 1))));
    g.Hq = g.band + (q.kh - 1) / q.sh;
    g.out = (g.band * g.Wq + kLanes - 1) / kLanes * kLanes;
    // The last vector of outputs reads up to out - 1 + (the farthest tap's offset); plane rows are built
    // in whole vectors, so a row may write up to kLanes - 1 past Wq.
    const int64_t reach = g.out + ((q.kh - 1) / q.sh) * g.Wq + (q.kw - 1) / q.sw;
    const int64_t built = g.Hq * g.Wq + kLanes;
    g.stride = (std::max(reach, built) + kLanes - 1) / kLanes * kLanes;
    return g;
}
}  // namespace

#if defined(ACCEL_DW_AVX512)

bool depthwise_avx512_applies(FloatIsa isa, const ConvGeom& q) {
    // Beyond this many input columns, 3x3 convs run faster on the row kernel (depthwise.cc), which reads the
    // input where it lies (measured, bench_kernels.py: 320x320 0.97 against 1.27 ms, 160x160 even; 5x5
    // convs gain here at every size).
    constexpr int64_t kRowKernelFrom = 160 * 160;
    if (q.kh * q.kw <= 9 && q.H * q.W > kRowKernelFrom) return false;
    return isa == FloatIsa::Avx512 && q.depthwise && q.dh == 1 && q.dw == 1 && (q.sh == 1 || q.sh == 2) &&
           (q.sw == 1 || q.sw == 2) && q.kh * q.kw <= kMaxTaps;
}

int64_t depthwise_avx512_scratch_floats(const ConvGeom& q) {
    const PhaseGeom g = phase_geom(q);
    return q.sh * q.sw * g.stride + g.out;
}

namespace {

// Lanes i < n set (n may exceed 16 or be negative).
ACCEL_INLINE __mmask16 first_lanes(int64_t n) {
    return n >= kLanes ? static_cast<__mmask16>(0xFFFF) : n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

// Lanes whose index lo + i lies in [0, hi).
ACCEL_INLINE __mmask16 lanes_inside(int64_t lo, int64_t hi) {
    const __mmask16 below = first_lanes(hi - lo);
    const __mmask16 above = lo >= 0 ? 0 : first_lanes(-lo);
    return static_cast<__mmask16>(below & ~above);
}

// Rows [r0, r0 + rows) of the phase planes of row phase a, every column phase at once:
// dst[b][(r - r0) * Wq + c] = x[r * sh + a - pt][c * sw + b - pl], 0 outside the input.
__attribute__((target("avx512f"))) void build_phases(const ConvGeom& q, const PhaseGeom& g, const float* x, int64_t a,
                                                     int64_t r0, int64_t rows, float* dst) {
    const __m512 zero = _mm512_setzero_ps();
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odds = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    const int64_t span = kLanes * q.sw;  // input columns one vector of a phase row takes
    for (int64_t r = r0; r < r0 + rows; ++r) {
        float* d0 = dst + (r - r0) * g.Wq;
        float* d1 = d0 + g.stride;
        const int64_t ih = r * q.sh + a - q.pt;
        if (ih < 0 || ih >= q.H) {
            for (int64_t c = 0; c < g.Wq; c += kLanes) {
                _mm512_storeu_ps(d0 + c, zero);
                if (q.sw == 2) _mm512_storeu_ps(d1 + c, zero);
            }
            continue;
        }
        // Address arithmetic in integers: the masked-off lanes may lie before the row.
        const uintptr_t row = reinterpret_cast<uintptr_t>(x + ih * q.W);
        for (int64_t c = 0; c < g.Wq; c += kLanes) {
            const int64_t iw = c * q.sw - q.pl;  // the input column of lane 0
            const float* src = reinterpret_cast<const float*>(row + static_cast<uintptr_t>(iw) * sizeof(float));
            const bool inside = iw >= 0 && iw + span <= q.W;
            const __m512 lo = inside ? _mm512_loadu_ps(src) : _mm512_maskz_loadu_ps(lanes_inside(iw, q.W), src);
            if (q.sw == 1) {
                _mm512_storeu_ps(d0 + c, lo);
                continue;
            }
            const __m512 hi = inside ? _mm512_loadu_ps(src + kLanes)
                                     : _mm512_maskz_loadu_ps(lanes_inside(iw + kLanes, q.W), src + kLanes);
            _mm512_storeu_ps(d0 + c, _mm512_permutex2var_ps(lo, evens, hi));
            _mm512_storeu_ps(d1 + c, _mm512_permutex2var_ps(lo, odds, hi));
        }
    }
}

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
            const __mmask16 m = first_lanes(q.OW - c);
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
    const PhaseGeom g = phase_geom(q);
    const int64_t taps = q.kh * q.kw, HW = q.H * q.W;
    const float* src[kMaxTaps];
    for (int64_t ki = 0, t = 0; ki < q.kh; ++ki)
        for (int64_t kj = 0; kj < q.kw; ++kj, ++t)
            src[t] = scratch + ((ki % q.sh) * q.sw + kj % q.sw) * g.stride + (ki / q.sh) * g.Wq + kj / q.sw;
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
            for (int64_t a = 0; a < q.sh; ++a)
                build_phases(q, g, xc, a, o0, rows + (q.kh - 1) / q.sh, scratch + a * q.sw * g.stride);
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
