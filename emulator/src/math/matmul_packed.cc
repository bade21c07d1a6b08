// matmul_packed.cc - MatMul against a packed constant B (matmul_packed.h) over conv_gemm.h's kernel.
//
// The kernel computes C = A * B with A packed as [kc][kConvMR] panels and B as kConvNR-column panels: here A
// is a block of X's rows (packed per call, one depth block at a time: at most kRowBlock rows) and B is W's
// packed panels, read in place. Loop order: a block of rows, a depth block, a block of W's columns (which stays
// in L2), then the rows a kernel panel at a time (in L1) over all of its column panels.
#include "math/matmul_packed.h"

#include <algorithm>

#include "math/conv_gemm.h"

namespace accel_emu {

namespace {
constexpr int64_t MR = kConvMR, NR = kConvNR;
// Rows per block (a multiple of MR): the packed rows of one depth block (kRowBlock x kConvDepthBlock floats)
// stay in L2.
constexpr int64_t kRowBlock = 128;
// W's columns per block: one depth block of them (kConvDepthBlock x this many floats) within L2's half.
constexpr int64_t kColumnFloats = 128 * 1024;
}  // namespace

int64_t matmul_packed_b_floats(int64_t K, int64_t N) { return (N + NR - 1) / NR * NR * K; }

void matmul_pack_b(const float* w, int64_t K, int64_t N, float* out) {
    for (int64_t j = 0; j < (N + NR - 1) / NR; ++j)
        for (int64_t k = 0; k < K; ++k)
            for (int64_t c = 0; c < NR; ++c) *out++ = j * NR + c < N ? w[k * N + j * NR + c] : 0.f;
}

int64_t matmul_column_block(int64_t K, int64_t N) {
    const int64_t fit = std::max<int64_t>(1, kColumnFloats / conv_depth_block(K) / NR) * NR;
    return std::min(fit, (N + NR - 1) / NR * NR);
}

int64_t matmul_packed_scratch_floats(int64_t M, int64_t K) {
    return std::min(kRowBlock, (M + MR - 1) / MR * MR) * conv_depth_block(K);
}

void matmul_packed(FloatIsa isa, const float* x, int64_t K, int64_t N, const float* packed_b, float* y, float* scratch,
                   int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    const int64_t kb = conv_depth_block(K), cb = matmul_column_block(K, N);
    for (int64_t rr = r0; rr < r1; rr += kRowBlock) {
        const int64_t rows = std::min(kRowBlock, r1 - rr), panels = (rows + MR - 1) / MR;
        for (int64_t pc = 0; pc < K; pc += kb) {
            const int64_t kc = std::min(kb, K - pc);
            // The rows' depth block as the kernel's A: [panels][kc][MR], rows past the block's end zero.
            for (int64_t ir = 0; ir < panels; ++ir) {
                float* a = scratch + ir * kc * MR;
                for (int64_t i = 0; i < MR; ++i) {
                    const int64_t r = rr + ir * MR + i;
                    if (r < rr + rows)
                        for (int64_t k = 0; k < kc; ++k) a[k * MR + i] = x[r * K + pc + k];
                    else
                        for (int64_t k = 0; k < kc; ++k) a[k * MR + i] = 0.f;
                }
            }
            // W's columns a block at a time (c0 is a whole panel's first column, and so is each block's).
            for (int64_t cc = c0; cc < c1; cc += cb)
                conv_packed_gemm(isa, scratch, rows, 0, panels, kc, 0, kc, packed_b + cc * K + pc * NR, NR, K * NR,
                                 std::min(cb, c1 - cc), nullptr, pc > 0, y + rr * N + cc, N);
        }
    }
}

}  // namespace accel_emu
