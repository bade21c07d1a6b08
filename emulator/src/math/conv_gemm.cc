// conv_gemm.cc - the packed conv GEMM (conv_gemm.h): the weight packing, the blocking and the B sources,
// written once over the register tile and input copies of the path the model runs (conv_gemm_kernels.h:
// conv_gemm_avx512.cc, conv_gemm_avx2.cc, conv_gemm_neon.cc; the caller checks the model's FloatIsa, math/cpu_isa.h).
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
#include "math/conv_gemm_kernels.h"
#include "math/math_util.h"
#include "math/stride_phases.h"

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

namespace {

const ConvGemmKernels* kernels_for(FloatIsa isa) {
    switch (isa) {
        case FloatIsa::Avx512: return conv_gemm_avx512_kernels();
        case FloatIsa::Avx2: return conv_gemm_avx2_kernels();
        case FloatIsa::Neon: return conv_gemm_neon_kernels();
        case FloatIsa::Portable: break;
    }
    return nullptr;
}

// Rows [MR * ir0, min(MR * ir1, Mg)) x columns [0, nc) of C (row stride ldc) = (accumulate ? C : bias, zeros
// if null) + A[:, pc:pc+kc] * B, where A is packed weights ([ceil(Mg/MR)][K][MR]), bias padded to whole panels, and B's
// NR-column panel j starts at B + j * panel_stride, its rows ldb floats apart, or, with `off`, row k at
// off[k] from the panel's start (columns past nc unread).
void packed_gemm(const ConvGemmKernels& kernels, const float* A, int64_t Mg, int64_t ir0, int64_t ir1, int64_t K,
                 int64_t pc, int64_t kc, const float* B, int64_t ldb, const int64_t* off, int64_t panel_stride,
                 int64_t nc, const float* bias, bool accumulate, float* C, int64_t ldc) {
    alignas(64) float stage[MR * NR];
    for (int64_t ir = ir0; ir < ir1; ++ir) {
        const float* a = A + (ir * K + pc) * MR;
        const float* b = bias ? bias + ir * MR : nullptr;
        const int64_t m = std::min(MR, Mg - ir * MR);
        for (int64_t j = 0; j * NR < nc; ++j) {
            const int64_t p0 = j * NR, np = std::min(NR, nc - p0);
            float* c = C + ir * MR * ldc + p0;
            // A partial last weight panel works on a staging tile, copied in and out around it.
            float* ct = m == MR ? c : stage;
            const int64_t ldt = m == MR ? ldc : NR;
            if (m < MR && accumulate)
                for (int64_t i = 0; i < m; ++i) std::copy_n(c + i * ldc, np, stage + i * NR);
            kernels.tile(kc, a, B + j * panel_stride, ldb, off, ct, ldt, m, np, b, accumulate);
            if (m < MR)
                for (int64_t i = 0; i < m; ++i) std::copy_n(stage + i * NR, np, c + i * ldc);
        }
    }
}

// One band of output rows (`band`), output channels [MR * ir0, MR * ir1), of conv_gemm over the stride
// phases: B is read where the phases hold it (each input once per band, not once per tap as im2col), its
// flattened rows computed into a band buffer and copied out without the columns past each row's end.
void phased_conv_gemm(const ConvGemmKernels& kernels, const ConvGeom& q, const float* group, const float* x, Act act,
                      float alpha, float beta, float* y, float* scratch, int64_t band, int64_t ir0, int64_t ir1) {
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
        kernels.phases(q, x + c * q.H * q.W, o0, phase_rows(q, n), b.Wq, b.plane, phases + c * b.chan);
    for (int64_t pc = 0; pc < K; pc += kb)
        packed_gemm(kernels, packed, Mg, ir0, ir1, K, pc, std::min(kb, K - pc), phases, 0, off + pc, NR, n * b.Wq,
                    bias_pad, pc > 0, out, b.ldo);
    for (int64_t m = ir0 * MR; m < std::min(ir1 * MR, Mg); ++m) {
        float* ym = y + m * P + o0 * q.OW;
        for (int64_t r = 0; r < n; ++r) std::copy_n(out + m * b.ldo + r * b.Wq, q.OW, ym + r * q.OW);
        if (act != Act::None) apply_activation(act, alpha, beta, ym, static_cast<size_t>(n * q.OW));
    }
}

}  // namespace

bool conv_gemm_applies(FloatIsa isa) { return kernels_for(isa) != nullptr; }

void conv_gemm(FloatIsa isa, const ConvGeom& q, const float* group, const float* x, Act act, float alpha, float beta,
               float* y, float* scratch, int64_t block, int64_t panel0, int64_t panel1) {
    const ConvGemmKernels& kernels = *kernels_for(isa);
    if (phased(q)) {
        phased_conv_gemm(kernels, q, group, x, act, alpha, beta, y, scratch, block, panel0, panel1);
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
            packed_gemm(kernels, packed, Mg, panel0, panel1, K, pc, kc, x + pc * P + c0, P, nullptr, NR, nc, bias_pad,
                        pc > 0, y + c0, P);
            continue;
        }
        for (int64_t j = 0; j * NR < nc; ++j)
            kernels.pack_panel(q, tr, x, pc, kc, c0 + j * NR, std::min(NR, nc - j * NR), scratch + j * kc * NR);
        packed_gemm(kernels, packed, Mg, panel0, panel1, K, pc, kc, scratch, NR, nullptr, kc * NR, nc, bias_pad, pc > 0,
                    y + c0, P);
    }
    if (act != Act::None)
        for (int64_t r = panel0 * MR; r < std::min(panel1 * MR, Mg); ++r)
            apply_activation(act, alpha, beta, y + r * P + c0, static_cast<size_t>(nc));
}

void conv_packed_gemm(FloatIsa isa, const float* A, int64_t Mg, int64_t ir0, int64_t ir1, int64_t K, int64_t pc,
                      int64_t kc, const float* B, int64_t ldb, int64_t panel_stride, int64_t nc, const float* bias,
                      bool accumulate, float* C, int64_t ldc) {
    packed_gemm(*kernels_for(isa), A, Mg, ir0, ir1, K, pc, kc, B, ldb, nullptr, panel_stride, nc, bias, accumulate, C,
                ldc);
}

}  // namespace accel_emu
