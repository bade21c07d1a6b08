// conv_small.cc - the channel-vectorized conv GEMM for small planes (conv_small.h) with AVX-512 intrinsics,
// compiled for AVX-512 by target attributes and used only when the CPU has it (the caller checks the model's
// FloatIsa, math/cpu_isa.h).
//
// Loop order, per part (a run of channel panels by a range of position blocks): the depth is taken a block of
// whole input channels at a time (about kDepthRows rows of B, gathered once from a padded copy of each channel
// or by im2col, unless B is the input itself) and every panel's weights for that block run over every position block of
// it; the sums live in a position-major buffer (position p's channels contiguous, as the registers hold them) across
// depth blocks. At the end the activation runs over the buffer and it is transposed, 16x16 at a time, into the NCHW
// output.
#include "math/conv_small.h"

#include <algorithm>
#include <array>
#include <utility>

#include "math/activation.h"
#include "math/im2col.h"
#include "math/stride_phases.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/avx512_lanes.h"
#include "math/conv_small_transpose.h"
#include "math/x86_intrinsics.h"
#define ACCEL_CONV_SMALL 1
#endif

namespace accel_emu {

namespace {
constexpr int64_t kLanes = 16;
constexpr int64_t MR = kSmallMR, NR = kSmallNR;
// The largest plane this path takes: 16x16 outputs; past it conv_gemm's 48-wide tiles waste little.
constexpr int64_t kMaxPositions = 256;
// Sums of one part (positions x channels), kept in L2 across depth blocks.
constexpr int64_t kRunFloats = 64 * 1024;
// Rows of B per depth block, about: a block of B for a 14x14 plane is then 200 KiB (L2), a panel's weights
// for it 32 KiB (L1).
constexpr int64_t kDepthRows = 256;

int64_t padded_channels(int64_t Mg) { return (Mg + kLanes - 1) / kLanes * kLanes; }

// Input channels per depth block: B is gathered whole channels (all their taps) at a time.
int64_t depth_channels(const ConvGeom& q) { return std::max<int64_t>(1, kDepthRows / (q.kh * q.kw)); }

// Vectors per output channel of conv_gemm's tiles (3 per 48 columns, then whole vectors) over n columns.
int64_t vectors48(int64_t n) { return n / 48 * 3 + (n % 48 + 15) / 16; }

// Floats of the sums of one part: all positions by the most channels a part takes.
int64_t run_floats(const ConvGeom& q) {
    return (q.P * std::min(padded_channels(q.Mg), conv_small_max_run(q) * MR) + kLanes - 1) / kLanes * kLanes;
}

// Strides 1 and 2 without dilation gather B from a zero-padded copy of one input channel at a time, whole
// vectors per output row (gather_rows); other convs through im2col.
bool padded_gather(const ConvGeom& q) { return q.dh == 1 && q.dw == 1 && (q.sw == 1 || q.sw == 2); }
int64_t plane_rows(const ConvGeom& q) { return (q.OH - 1) * q.sh + q.kh; }
int64_t plane_cols(const ConvGeom& q) { return (q.OW - 1) * q.sw + q.kw; }
// The padded plane, and room past it for a row's last vector (16 * sw floats from its last output).
int64_t plane_floats(const ConvGeom& q) { return (plane_rows(q) * plane_cols(q) + 32 + 15) / 16 * 16; }
}  // namespace

bool conv_small_applies(FloatIsa isa, const ConvGeom& q) {
    if (isa != FloatIsa::Avx512 || q.depthwise || q.P > kMaxPositions) return false;
    // Vector FMAs per output channel and row of K: conv_gemm's over its columns (for a conv over stride phases,
    // the flattened rows, each phase_cols wide: ResNet's 3x3 convs at 7x7 compute 63 columns for 49 outputs,
    // 14x14 ones 224 for 196) against P/16 here, with channels rounded up to whole panels on each side.
    const bool phased = !q.pointwise && q.dh == 1 && q.dw == 1 && (q.sh == 1 || q.sh == 2) && (q.sw == 1 || q.sw == 2);
    const int64_t columns = phased ? q.OH * phase_cols(q) : q.P;
    const int64_t gemm = (q.Mg + 7) / 8 * 8 * vectors48(columns) * kLanes;
    const int64_t small = padded_channels(q.Mg) * q.P;
    // Fewer than 16 positions run as a GEMV on the BLAS otherwise; here they take the same weight stream.
    return q.P < 16 || small < gemm;
}

int64_t conv_small_packed_floats(int64_t G, int64_t Mg, int64_t K) { return G * padded_channels(Mg) * (K + 1); }

void conv_small_pack_weights(const float* w, const float* bias, int64_t G, int64_t Mg, int64_t K, float* out) {
    const int64_t Mp = padded_channels(Mg);
    for (int64_t g = 0; g < G; ++g) {
        for (int64_t m = 0; m < Mp; ++m) *out++ = bias && m < Mg ? bias[g * Mg + m] : 0.f;
        for (int64_t m0 = 0; m0 < Mp; m0 += MR) {
            const int64_t width = std::min(MR, Mp - m0);
            for (int64_t k = 0; k < K; ++k)
                for (int64_t i = 0; i < width; ++i) *out++ = m0 + i < Mg ? w[(g * Mg + m0 + i) * K + k] : 0.f;
        }
    }
}

int64_t conv_small_panels(const ConvGeom& q) { return (padded_channels(q.Mg) + MR - 1) / MR; }

int64_t conv_small_max_run(const ConvGeom& q) {
    return std::clamp<int64_t>(kRunFloats / (q.P * MR), 1, conv_small_panels(q));
}

int64_t conv_small_position_blocks(const ConvGeom& q) { return (q.P + NR - 1) / NR; }

int64_t conv_small_scratch_floats(const ConvGeom& q) {
    if (q.pointwise) return run_floats(q);
    // B's block (each row written in whole vectors: room for the last one past its end), and the plane.
    const int64_t col = (std::min(q.Cg, depth_channels(q)) * q.kh * q.kw * q.P + 16 + 15) / 16 * 16;
    return run_floats(q) + col + (padded_gather(q) ? plane_floats(q) : 0);
}

#if defined(ACCEL_CONV_SMALL)

namespace {

#define ACCEL_AVX512 __attribute__((target("avx512f")))

// The first output position of position block `block`.
int64_t first_position(const ConvGeom& q, int64_t block) { return block * q.P / conv_small_position_blocks(q); }

// Rows [c0 * kh * kw, (c0 + cn) * kh * kw) by columns [pos0, pos0 + np) of im2col(x) into col[.][np] (as
// im2col does, math/im2col.h), for strides 1 and 2 without dilation: each channel is copied once into a
// zero-padded plane, from which every tap's output row is one or two unmasked loads per 16 outputs with no
// bounds check (im2col's copies of a 7-wide row cost more than the GEMM of a narrow conv on it). Each row of
// col is written in whole vectors, up to 15 floats past its end (into the next row, or the room after).
ACCEL_AVX512 void gather_rows(const ConvGeom& q, const float* x, int64_t c0, int64_t cn, int64_t pos0, int64_t np,
                              float* plane, float* col) {
    const __m512i evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const int64_t Hq = plane_rows(q), Wq = plane_cols(q);
    const int64_t rows = std::min(q.H, Hq - q.pt), cols = std::min(q.W, Wq - q.pl);  // inputs any tap reads
    std::fill_n(plane, plane_floats(q), 0.f);
    for (int64_t c = c0; c < c0 + cn; ++c) {
        const float* xc = x + c * q.H * q.W;
        for (int64_t ih = std::max<int64_t>(0, -q.pt); ih < rows; ++ih)
            for (int64_t iw = 0; iw < cols; iw += 16) {
                const __mmask16 m = lanes16::first(cols - iw);
                _mm512_mask_storeu_ps(plane + (ih + q.pt) * Wq + q.pl + iw, m,
                                      _mm512_maskz_loadu_ps(m, xc + ih * q.W + iw));
            }
        for (int64_t ki = 0; ki < q.kh; ++ki)
            for (int64_t kj = 0; kj < q.kw; ++kj) {
                float* d = col + (((c - c0) * q.kh + ki) * q.kw + kj) * np;
                for (int64_t p = pos0, end = pos0 + np; p < end;) {
                    const int64_t oh = p / q.OW, ow0 = p - oh * q.OW, n = std::min(q.OW - ow0, end - p);
                    const float* src = plane + (oh * q.sh + ki) * Wq + ow0 * q.sw + kj;
                    for (int64_t j = 0; j < n; j += 16) {
                        const __m512 v = q.sw == 1 ? _mm512_loadu_ps(src + j)
                                                   : _mm512_permutex2var_ps(_mm512_loadu_ps(src + 2 * j), evens,
                                                                            _mm512_loadu_ps(src + 2 * j + 16));
                        _mm512_storeu_ps(d + (p - pos0) + j, v);
                    }
                    p += n;
                }
            }
    }
}

// T[j][NV*16] (+)= A[kc][NV*16] * B[kc][j] for positions j < NP (row k of B at B + k * ldb), starting from T
// if `accumulate`, else from bias[NV*16]. Constant loop bounds keep the accumulators in registers.
template <int NV, int NP>
ACCEL_AVX512 void micro(int64_t kc, const float* __restrict__ A, const float* __restrict__ B, int64_t ldb,
                        float* __restrict__ T, int64_t ldt, const float* bias, bool accumulate) {
    __m512 acc[NP][NV];
    for (int j = 0; j < NP; ++j)
        for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_loadu_ps(accumulate ? T + j * ldt + 16 * v : bias + 16 * v);
    for (int64_t k = 0; k < kc; ++k) {
        __m512 a[NV];
        for (int v = 0; v < NV; ++v) a[v] = _mm512_loadu_ps(A + k * NV * 16 + 16 * v);
        const float* b = B + k * ldb;
        for (int j = 0; j < NP; ++j) {
            const __m512 bj = _mm512_set1_ps(b[j]);
            for (int v = 0; v < NV; ++v) acc[j][v] = _mm512_fmadd_ps(a[v], bj, acc[j][v]);
        }
    }
    for (int j = 0; j < NP; ++j)
        for (int v = 0; v < NV; ++v) _mm512_storeu_ps(T + j * ldt + 16 * v, acc[j][v]);
}

using Micro = void (*)(int64_t, const float*, const float*, int64_t, float*, int64_t, const float*, bool);

template <int NV, int... NP>
constexpr std::array<Micro, sizeof...(NP)> micros(std::integer_sequence<int, NP...>) {
    return {micro<NV, NP + 1>...};
}
// kMicro[NV - 1][NP - 1]
const std::array<Micro, NR> kMicro[2] = {micros<1>(std::make_integer_sequence<int, NR>()),
                                         micros<2>(std::make_integer_sequence<int, NR>())};

}  // namespace

void conv_small(const ConvGeom& q, const float* group, const float* x, Act act, float alpha, float beta, float* y,
                float* scratch, int64_t panel0, int64_t panel1, int64_t block0, int64_t block1) {
    const int64_t P = q.P, K = q.K, khw = q.kh * q.kw, Mp = padded_channels(q.Mg);
    const float* bias = group;
    const float* packed = group + Mp;
    const int64_t pos0 = first_position(q, block0), np = first_position(q, block1) - pos0;
    const int64_t ch0 = panel0 * MR, ch1 = std::min(panel1 * MR, Mp), ldt = ch1 - ch0;
    float* T = scratch;
    float* col = scratch + run_floats(q);
    float* plane = col + (std::min(q.Cg, depth_channels(q)) * khw * P + 16 + 15) / 16 * 16;
    const int64_t cpb = depth_channels(q);
    for (int64_t c0 = 0; c0 < q.Cg; c0 += cpb) {
        const int64_t k0 = c0 * khw, kc = std::min(cpb, q.Cg - c0) * khw;
        const float* B = x + k0 * P + pos0;
        int64_t ldb = P;
        if (!q.pointwise && padded_gather(q)) {
            gather_rows(q, x, c0, kc / khw, pos0, np, plane, col);
            B = col;
            ldb = np;
        } else if (!q.pointwise) {
            ConvGeom qb = q;
            qb.Cg = kc / khw;
            qb.K = kc;
            im2col(qb, x + c0 * q.H * q.W, pos0, np, col);
            B = col;
            ldb = np;
        }
        for (int64_t panel = panel0; panel < panel1; ++panel) {
            const int64_t m0 = panel * MR, width = std::min(MR, Mp - m0);
            const float* A = packed + m0 * K + k0 * width;
            for (int64_t blk = block0; blk < block1; ++blk) {
                const int64_t b0 = first_position(q, blk) - pos0, bn = first_position(q, blk + 1) - pos0 - b0;
                kMicro[width / kLanes - 1][bn - 1](kc, A, B + b0, ldb, T + b0 * ldt + (m0 - ch0), ldt, bias + m0,
                                                   c0 > 0);
            }
        }
    }
    apply_activation(act, alpha, beta, T, static_cast<size_t>(np * ldt));
    store_transposed(T, ldt, np, std::min(ch1, q.Mg) - ch0, y + ch0 * P + pos0, P);
}

#else  // no AVX-512 build: ops/conv.cc never picks this path

void conv_small(const ConvGeom&, const float*, const float*, Act, float, float, float*, float*, int64_t, int64_t,
                int64_t, int64_t) {}

#endif

}  // namespace accel_emu
