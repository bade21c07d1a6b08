// conv_gemm.cc - the packed conv GEMM (conv_gemm.h) with AVX-512 intrinsics, compiled for AVX-512 by
// target attributes and used only when the CPU has it (the caller checks the model's
// FloatIsa, math/cpu_isa.h).
//
// B comes three ways. Strides 1 and 2 without dilation: from the input's stride phases (stride_phases.h),
// built for one band of output rows at a time, each tap a fixed offset into them (no im2col at all).
// 1x1 stride-1 unpadded: the input as it lies. Otherwise: im2col panels gathered a depth block at a time.
// Loop order: B is taken a block at a time (one depth block of at most kConvDepthBlock rows by a band or by
// as many kConvNR-column panels as fit kBlockFloats) and stays in L2 while each weight panel in turn (kept
// in L1) runs over all of its column panels; partial sums over depth blocks accumulate in the output.
#include "math/conv_gemm.h"

#include <algorithm>

#include "math/activation.h"
#include "math/math_util.h"
#include "math/stride_phases.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/avx512_lanes.h"
#include "math/x86_intrinsics.h"
#define ACCEL_CONV_GEMM 1
#elif defined(__aarch64__)
#include "math/conv_gemm_neon.h"
#define ACCEL_CONV_GEMM 1
#endif

namespace accel_emu {

namespace {
constexpr int64_t MR = kConvMR, NR = kConvNR;
// The B block (one depth block by one column block) stays in L2 while every weight panel runs over it.
constexpr int64_t kBlockFloats = 128 * 1024;

// Stride-phase bands (stride_phases.h): the phases of every channel for one band of output rows, and the
// band's outputs, each within this many floats (L2).
constexpr int64_t kBandFloats = 64 * 1024;

struct PhasedBand {
    int64_t Wq;     // columns of a phase row (and of a flattened output row)
    int64_t rows;   // output rows per band
    int64_t plane;  // floats per phase plane
    int64_t chan;   // floats per channel (its sh * sw phase planes)
    int64_t ldo;    // floats per output channel of the band's buffer
};

PhasedBand phased_band(const ConvGeom& q) {
    PhasedBand b;
    b.Wq = phase_cols(q);
    const int64_t ext = phase_rows(q, 0);
    const int64_t by_input = kBandFloats / (q.Cg * q.sh * q.sw * b.Wq) - ext;
    const int64_t by_output = kBandFloats / (q.Mg * b.Wq);
    b.rows = std::clamp<int64_t>(std::min(by_input, by_output), 1, q.OH);
    b.plane = phase_plane_floats(q, b.rows, b.rows * b.Wq);
    b.chan = q.sh * q.sw * b.plane;
    b.ldo = (b.rows * b.Wq + 15) / 16 * 16;
    return b;
}

// Does geometry q run over its stride phases (phased_conv_gemm) rather than on gathered im2col panels? Every
// conv the phases can express but 1x1 stride-1 unpadded ones, which are read in place: the phases hold each
// input once, where im2col repeats it once per tap (measured, bench_kernels.py: ResNet-18's 3x3 convs
// 1.3-1.9x -> 1.1-1.4x onnxruntime's time, the 7x7 stem 1.7x -> 1.0x, PP-OCR's 96->24 neck convs
// 1.6-2.2x -> 0.8-1.0x; 1x1 stride-2 about even).
bool phased(const ConvGeom& q) {
    return !q.pointwise && q.dh == 1 && q.dw == 1 && (q.sh == 1 || q.sh == 2) && (q.sw == 1 || q.sw == 2);
}

// Floats of the tap offset table (int64 each), whole vectors.
int64_t offset_floats(const ConvGeom& q) { return (2 * q.K + 15) / 16 * 16; }

// Columns per block: whole panels, within kBlockFloats for one depth block.
int64_t column_block(const ConvGeom& q) {
    const int64_t fit = std::max<int64_t>(1, kBlockFloats / conv_depth_block(q.K) / NR) * NR;
    return std::min(fit, (q.P + NR - 1) / NR * NR);
}
}  // namespace

int64_t conv_depth_block(int64_t K) {
    const int64_t n = (K + kConvDepthBlock - 1) / kConvDepthBlock;
    return (K + n - 1) / n;
}

int64_t conv_packed_weight_floats(int64_t G, int64_t Mg, int64_t K) { return G * ((Mg + MR - 1) / MR) * MR * (K + 1); }

void conv_pack_weights(const float* w, const float* bias, int64_t G, int64_t Mg, int64_t K, float* out) {
    const int64_t panels = (Mg + MR - 1) / MR;
    for (int64_t g = 0; g < G; ++g) {
        for (int64_t row = 0; row < panels * MR; ++row) *out++ = bias && row < Mg ? bias[g * Mg + row] : 0.f;
        for (int64_t ir = 0; ir < panels; ++ir)
            for (int64_t k = 0; k < K; ++k)
                for (int64_t i = 0; i < MR; ++i) {
                    const int64_t row = ir * MR + i;
                    *out++ = row < Mg ? w[(g * Mg + row) * K + k] : 0.f;
                }
    }
}

int64_t conv_gemm_column_blocks(const ConvGeom& q) {
    if (phased(q)) {
        const int64_t rows = phased_band(q).rows;
        return (q.OH + rows - 1) / rows;
    }
    const int64_t nc = column_block(q);
    return (q.P + nc - 1) / nc;
}

int64_t conv_gemm_scratch_floats(const ConvGeom& q) {
    if (phased(q)) {
        const PhasedBand b = phased_band(q);
        return offset_floats(q) + q.Cg * b.chan + q.Mg * b.ldo;
    }
    return q.pointwise ? 0 : conv_depth_block(q.K) * column_block(q);
}

#if defined(ACCEL_CONV_GEMM)

namespace {

#if defined(__x86_64__)
#define ACCEL_AVX512 __attribute__((target("avx512f")))
#define ACCEL_CONV_DRIVER ACCEL_AVX512

// C[MR rows][NV*16 columns, the last vector's lanes by `tail` if kMasked] (+)= A[kc][MR] * B[kc][ldb] (row k of B
// at B + off[k] instead if kOffsets: the taps of a conv over its stride phases, stride_phases.h), starting
// from C if `accumulate`, else from bias[MR] (zeros if null). Every loop has constant bounds so that the
// accumulators stay in registers (a row count known only at run time makes gcc keep them in memory). Full
// panels load unmasked: a masked load in the loop costs a mask move on an FMA port every iteration, which
// more than halves the speed.
template <int NV, bool kMasked, bool kOffsets>
ACCEL_AVX512 void micro(int64_t kc, const float* __restrict__ A, const float* __restrict__ B, int64_t ldb,
                        const int64_t* __restrict__ off, float* __restrict__ C, int64_t ldc, __mmask16 tail,
                        const float* bias, bool accumulate) {
    __m512 acc[MR][NV];
    if (accumulate) {
        for (int i = 0; i < MR; ++i)
            for (int v = 0; v < NV; ++v)
                acc[i][v] = kMasked && v == NV - 1 ? _mm512_maskz_loadu_ps(tail, C + i * ldc + 16 * v)
                                                   : _mm512_loadu_ps(C + i * ldc + 16 * v);
    } else {
        for (int i = 0; i < MR; ++i)
            for (int v = 0; v < NV; ++v) acc[i][v] = bias ? _mm512_set1_ps(bias[i]) : _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < kc; ++k) {
        const float* b = kOffsets ? B + off[k] : B + k * ldb;
        __m512 bv[NV];
        for (int v = 0; v < NV; ++v)
            bv[v] = kMasked && v == NV - 1 ? _mm512_maskz_loadu_ps(tail, b + 16 * v) : _mm512_loadu_ps(b + 16 * v);
        for (int i = 0; i < MR; ++i) {
            const __m512 a = _mm512_set1_ps(A[k * MR + i]);
            for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(a, bv[v], acc[i][v]);
        }
    }
    for (int i = 0; i < MR; ++i) {
        for (int v = 0; v < NV - 1; ++v) _mm512_storeu_ps(C + i * ldc + 16 * v, acc[i][v]);
        if (kMasked) _mm512_mask_storeu_ps(C + i * ldc + 16 * (NV - 1), tail, acc[i][NV - 1]);
        else _mm512_storeu_ps(C + i * ldc + 16 * (NV - 1), acc[i][NV - 1]);
    }
}

// Lanes e of a 16-lane vector with base + e in [lo, hi).
inline __mmask16 lanes(int64_t base, int64_t lo, int64_t hi) { return lanes16::inside(base - lo, hi - lo); }

// One output row's run of a B panel: output positions [ow0, ow0 + n) of row oh, at column `off` of the panel.
struct Segment { int64_t oh, ow0, n, off; };

// Rows [k0, k0 + kc) of im2col(x), columns [p0, p0 + np), into dst[kc][NR] (columns past np unset: the
// kernel's loads mask them). Row k is (channel, kernel row, kernel column); column p is (oh, ow).
ACCEL_AVX512 void pack_panel(const ConvGeom& q, const kern::TapRanges& tr, const float* x, int64_t k0, int64_t kc,
                             int64_t p0, int64_t np, float* __restrict__ dst) {
    Segment seg[NR];
    int64_t ns = 0;
    for (int64_t p = p0; p < p0 + np;) {
        const int64_t oh = p / q.OW, ow0 = p - oh * q.OW;
        const int64_t n = std::min(q.OW - ow0, p0 + np - p);
        seg[ns++] = {oh, ow0, n, p - p0};
        p += n;
    }
    const __m512i kEven = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const int64_t khw = q.kh * q.kw;
    int64_t c = k0 / khw, ki = (k0 % khw) / q.kw, kj = k0 % q.kw;
    for (int64_t k = 0; k < kc; ++k) {
        float* d = dst + k * NR;
        const float* xc = x + c * q.H * q.W;
        int64_t lo, hi;
        tr.get(kj, &lo, &hi);
        const int64_t off = kj * q.dw - q.pl;
        for (int64_t s = 0; s < ns; ++s) {
            const Segment& sg = seg[s];
            float* ds = d + sg.off - sg.ow0;  // indexed by ow
            const int64_t end = sg.ow0 + sg.n;
            const int64_t ih = sg.oh * q.sh - q.pt + ki * q.dh;
            const bool row_in = ih >= 0 && ih < q.H;
            const float* src = xc + ih * q.W + off;  // src[ow * sw] is the input under output ow
            if (!row_in || q.sw <= 2) {
                // 16 outputs at a time: masked loads read only the in-bounds inputs (zeros elsewhere).
                const int64_t a = row_in ? lo : 0, b = row_in ? hi : 0;
                for (int64_t j = sg.ow0; j < end; j += 16) {
                    const __mmask16 st = lanes(j, j, end), in = lanes(j, a, b);
                    __m512 v;
                    if (!in) {
                        v = _mm512_setzero_ps();
                    } else if (q.sw == 1) {
                        v = _mm512_maskz_loadu_ps(in, src + j);
                    } else {  // inputs 2j .. 2j+30, the even ones kept
                        const __m512 v0 = _mm512_maskz_loadu_ps(lanes(2 * j, 2 * a, 2 * b - 1), src + 2 * j);
                        const __m512 v1 = _mm512_maskz_loadu_ps(lanes(2 * j + 16, 2 * a, 2 * b - 1), src + 2 * j + 16);
                        v = _mm512_permutex2var_ps(v0, kEven, v1);
                    }
                    _mm512_mask_storeu_ps(ds + j, st, v);
                }
                continue;
            }
            const int64_t a = std::clamp(lo, sg.ow0, end), b = std::clamp(hi, a, end);
            for (int64_t j = sg.ow0; j < a; ++j) ds[j] = 0.f;
            for (int64_t j = a; j < b; ++j) ds[j] = src[j * q.sw];
            for (int64_t j = b; j < end; ++j) ds[j] = 0.f;
        }
        if (++kj == q.kw) {
            kj = 0;
            if (++ki == q.kh) ki = 0, ++c;
        }
    }
}

// Rows [MR * ir0, min(MR * ir1, Mg)) x columns [0, nc) of C (row stride ldc) = (accumulate ? C : bias, zeros
// if null) + A[:, pc:pc+kc] * B, where A is packed weights ([ceil(Mg/MR)][K][MR]), bias padded to whole panels, and B's
// NR-column panel j starts at B + j * panel_stride, its rows ldb floats apart, or, with `off`, row k at
// off[k] from the panel's start (columns past nc unread).
ACCEL_AVX512 void packed_gemm(const float* A, int64_t Mg, int64_t ir0, int64_t ir1, int64_t K, int64_t pc, int64_t kc,
                              const float* B, int64_t ldb, const int64_t* off, int64_t panel_stride, int64_t nc,
                              const float* bias, bool accumulate, float* C, int64_t ldc) {
    alignas(64) float stage[MR * NR];
    for (int64_t ir = ir0; ir < ir1; ++ir) {
        const float* a = A + (ir * K + pc) * MR;
        const float* b = bias ? bias + ir * MR : nullptr;
        const int64_t m = std::min(MR, Mg - ir * MR);
        for (int64_t j = 0; j * NR < nc; ++j) {
            const int64_t p0 = j * NR, np = std::min(NR, nc - p0);
            const int nv = static_cast<int>((np + 15) / 16);
            const int64_t last = np - 16 * (nv - 1);
            const __mmask16 tail = static_cast<__mmask16>(last == 16 ? 0xFFFF : (1u << last) - 1);
            const float* bj = B + j * panel_stride;
            float* c = C + ir * MR * ldc + p0;
            // A partial last weight panel works on a staging tile, copied in and out around it.
            float* ct = m == MR ? c : stage;
            const int64_t ldt = m == MR ? ldc : NR;
            if (m < MR && accumulate)
                for (int64_t i = 0; i < m; ++i) std::copy_n(c + i * ldc, np, stage + i * NR);
            if (off) {
                if (np == NR) micro<3, false, true>(kc, a, bj, ldb, off, ct, ldt, tail, b, accumulate);
                else if (nv == 3) micro<3, true, true>(kc, a, bj, ldb, off, ct, ldt, tail, b, accumulate);
                else if (nv == 2) micro<2, true, true>(kc, a, bj, ldb, off, ct, ldt, tail, b, accumulate);
                else micro<1, true, true>(kc, a, bj, ldb, off, ct, ldt, tail, b, accumulate);
            } else {
                if (np == NR) micro<3, false, false>(kc, a, bj, ldb, off, ct, ldt, tail, b, accumulate);
                else if (nv == 3) micro<3, true, false>(kc, a, bj, ldb, off, ct, ldt, tail, b, accumulate);
                else if (nv == 2) micro<2, true, false>(kc, a, bj, ldb, off, ct, ldt, tail, b, accumulate);
                else micro<1, true, false>(kc, a, bj, ldb, off, ct, ldt, tail, b, accumulate);
            }
            if (m < MR)
                for (int64_t i = 0; i < m; ++i) std::copy_n(stage + i * NR, np, c + i * ldc);
        }
    }
}

#else  // aarch64: the same driver over conv_gemm_neon.cc's kernels
#define ACCEL_CONV_DRIVER
using conv_neon::pack_panel;
using conv_neon::packed_gemm;
#endif

// One band of output rows (`band`), output channels [MR * ir0, MR * ir1), of conv_gemm over the stride
// phases: B is read where the phases hold it (each input once per band, not once per tap as im2col), its
// flattened rows computed into a band buffer and copied out without the columns past each row's end.
ACCEL_CONV_DRIVER void phased_conv_gemm(const ConvGeom& q, const float* group, const float* x, Act act, float alpha,
                                        float beta, float* y, float* scratch, int64_t band, int64_t ir0, int64_t ir1) {
    const int64_t Mg = q.Mg, K = q.K, P = q.P;
    const float* bias_pad = group;
    const float* packed = group + (Mg + MR - 1) / MR * MR;
    const int64_t kb = conv_depth_block(K);
    const PhasedBand b = phased_band(q);
    int64_t* off = reinterpret_cast<int64_t*>(scratch);
    float* phases = scratch + offset_floats(q);
    float* out = phases + q.Cg * b.chan;
    for (int64_t c = 0, k = 0; c < q.Cg; ++c)
        for (int64_t ki = 0; ki < q.kh; ++ki)
            for (int64_t kj = 0; kj < q.kw; ++kj, ++k) off[k] = c * b.chan + phase_tap_offset(q, ki, kj, b.Wq, b.plane);
    const int64_t o0 = band * b.rows, n = std::min(b.rows, q.OH - o0);
    for (int64_t c = 0; c < q.Cg; ++c)
        build_stride_phases(q, x + c * q.H * q.W, o0, phase_rows(q, n), b.Wq, b.plane, phases + c * b.chan);
    for (int64_t pc = 0; pc < K; pc += kb)
        packed_gemm(packed, Mg, ir0, ir1, K, pc, std::min(kb, K - pc), phases, 0, off + pc, NR, n * b.Wq, bias_pad,
                    pc > 0, out, b.ldo);
    for (int64_t m = ir0 * MR; m < std::min(ir1 * MR, Mg); ++m) {
        float* ym = y + m * P + o0 * q.OW;
        for (int64_t r = 0; r < n; ++r) std::copy_n(out + m * b.ldo + r * b.Wq, q.OW, ym + r * q.OW);
        if (act != Act::None) apply_activation(act, alpha, beta, ym, static_cast<size_t>(n * q.OW));
    }
}

}  // namespace

ACCEL_CONV_DRIVER void conv_gemm(const ConvGeom& q, const float* group, const float* x, Act act, float alpha,
                                 float beta, float* y, float* scratch, int64_t block, int64_t panel0, int64_t panel1) {
    if (phased(q)) {
        phased_conv_gemm(q, group, x, act, alpha, beta, y, scratch, block, panel0, panel1);
        return;
    }
    const int64_t Mg = q.Mg, K = q.K, P = q.P;
    const float* bias_pad = group;
    const float* packed = group + (Mg + MR - 1) / MR * MR;
    const int64_t kb = conv_depth_block(K);
    const int64_t nc_max = column_block(q);
    const int64_t c0 = block * nc_max, nc = std::min(nc_max, P - c0);
    kern::TapRanges tr;
    tr.init(q.kw, q.dw, q.pl, q.sw, q.W, q.OW);
    for (int64_t pc = 0; pc < K; pc += kb) {
        const int64_t kc = std::min(kb, K - pc);
        if (q.pointwise) {
            packed_gemm(packed, Mg, panel0, panel1, K, pc, kc, x + pc * P + c0, P, nullptr, NR, nc, bias_pad, pc > 0,
                        y + c0, P);
            continue;
        }
        for (int64_t j = 0; j * NR < nc; ++j)
            pack_panel(q, tr, x, pc, kc, c0 + j * NR, std::min(NR, nc - j * NR), scratch + j * kc * NR);
        packed_gemm(packed, Mg, panel0, panel1, K, pc, kc, scratch, NR, nullptr, kc * NR, nc, bias_pad, pc > 0, y + c0,
                    P);
    }
    if (act != Act::None)
        for (int64_t r = panel0 * MR; r < std::min(panel1 * MR, Mg); ++r)
            apply_activation(act, alpha, beta, y + r * P + c0, static_cast<size_t>(nc));
}

#else  // neither x86-64 nor aarch64: ops/conv.cc keeps to im2col + sgemm

void conv_gemm(const ConvGeom&, const float*, const float*, Act, float, float, float*, float*, int64_t, int64_t,
               int64_t) {}

#endif

}  // namespace accel_emu
