// qgemm_neon.cc - the int8 GEMM on aarch64. Both paths read signed bytes: B = X (int8 X) or X ^ 0x80
// (uint8 X), A = W (int8 W) or W - 128 (uint8 W); qgemm_impl.h's corrections make the sums those of the
// portable path, modulo 2^32 as there. Weights: [Mp/8][Kg][8 rows][4 bytes] int8, so that one k-group of a
// tile is two 128-bit registers, lane r the 4 bytes of row r (of 4).
//   NeonDot (SDOT, Armv8.2's dot product): acc(row, 4 columns) += SDOT(4 units, A's lane), a register tile
//     of 8 rows by 12 columns (24 accumulators, 3 unit vectors, 2 weight vectors of the 32 registers).
//     A block's last tile reads the units past its last column (qgemm_impl.h allows 16) and drops them.
//   Neon (Armv8.0): each unit vector (4 columns x 4 bytes) times the row's 4 bytes repeated, widened to
//     int16 (SMULL, SMULL2: |product| <= 2^14) and added pairwise into int32 (SADALP), two accumulators per
//     row holding (k0 + k1, k2 + k3) per column, folded by one ADDP at the end; 8 rows by 4 columns.
// The epilogue is the scalar one (epilogue_row), which defines the bytes.
#include <algorithm>

#include "math/exact_rounding.h"
#include "math/qgemm_impl.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#define ACCEL_QGEMM_NEON 1
#endif

namespace accel_emu {
namespace qk {

namespace {
constexpr int64_t MR = 8, NR = 12;
}  // namespace

void pack_weights_neon(const AView& a, int64_t Mp, int64_t Kg, void* out) {
    int8_t* o = static_cast<int8_t*>(out);
    for (int64_t t = 0; t < Mp / MR; ++t)
        for (int64_t g = 0; g < Kg; ++g)
            for (int64_t i = 0; i < MR; ++i)
                for (int b = 0; b < 4; ++b) *o++ = static_cast<int8_t>(a.at(t * MR + i, g, b));
}

#if defined(ACCEL_QGEMM_NEON)

namespace {

#if defined(__clang__)
#define ACCEL_DOTPROD __attribute__((target("dotprod")))
#else
#define ACCEL_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))
#endif

// The sums are named variables: gcc keeps an array of them in memory, storing every one at every k-group.
// acc[r][v] = sums of A's 8 rows times units [4v, 4v + 4) of B (k-group g at B + off[g]), v < 3.
#define ACCEL_ROW_DOT(r, a, lane)                    \
    s##r##0 = vdotq_laneq_s32(s##r##0, b0, a, lane); \
    s##r##1 = vdotq_laneq_s32(s##r##1, b1, a, lane); \
    s##r##2 = vdotq_laneq_s32(s##r##2, b2, a, lane)
#define ACCEL_ROW_SUMS(r) int32x4_t s##r##0 = vdupq_n_s32(0), s##r##1 = s##r##0, s##r##2 = s##r##0
#define ACCEL_ROW_OUT(r) acc[r][0] = s##r##0, acc[r][1] = s##r##1, acc[r][2] = s##r##2

ACCEL_DOTPROD void kernel_dot(const int8_t* __restrict__ A, const uint8_t* __restrict__ B, const int64_t* off,
                              int64_t Kg, int32x4_t (&acc)[MR][3]) {
    ACCEL_ROW_SUMS(0);
    ACCEL_ROW_SUMS(1);
    ACCEL_ROW_SUMS(2);
    ACCEL_ROW_SUMS(3);
    ACCEL_ROW_SUMS(4);
    ACCEL_ROW_SUMS(5);
    ACCEL_ROW_SUMS(6);
    ACCEL_ROW_SUMS(7);
    for (int64_t g = 0; g < Kg; ++g) {
        const int8_t* bg = reinterpret_cast<const int8_t*>(B + off[g]);
        const int8x16_t b0 = vld1q_s8(bg), b1 = vld1q_s8(bg + 16), b2 = vld1q_s8(bg + 32);
        const int8x16_t a0 = vld1q_s8(A), a1 = vld1q_s8(A + 16);
        A += 4 * MR;
        ACCEL_ROW_DOT(0, a0, 0);
        ACCEL_ROW_DOT(1, a0, 1);
        ACCEL_ROW_DOT(2, a0, 2);
        ACCEL_ROW_DOT(3, a0, 3);
        ACCEL_ROW_DOT(4, a1, 0);
        ACCEL_ROW_DOT(5, a1, 1);
        ACCEL_ROW_DOT(6, a1, 2);
        ACCEL_ROW_DOT(7, a1, 3);
    }
    ACCEL_ROW_OUT(0);
    ACCEL_ROW_OUT(1);
    ACCEL_ROW_OUT(2);
    ACCEL_ROW_OUT(3);
    ACCEL_ROW_OUT(4);
    ACCEL_ROW_OUT(5);
    ACCEL_ROW_OUT(6);
    ACCEL_ROW_OUT(7);
}

// One row's term: its 4 bytes (lane `lane` of a) repeated over the 4 columns of b, the products of the low
// and high two columns added pairwise into lo##r and hi##r.
#define ACCEL_ROW_PAIRS(r, a, lane)                                                               \
    do {                                                                                          \
        const int8x16_t w = vreinterpretq_s8_s32(vdupq_laneq_s32(vreinterpretq_s32_s8(a), lane)); \
        lo##r = vpadalq_s16(lo##r, vmull_s8(vget_low_s8(b), vget_low_s8(w)));                     \
        hi##r = vpadalq_s16(hi##r, vmull_high_s8(b, w));                                          \
    } while (0)
#define ACCEL_ROW_PAIR_SUMS(r) int32x4_t lo##r = vdupq_n_s32(0), hi##r = lo##r
#define ACCEL_ROW_FOLD(r) acc[r][v] = vpaddq_s32(lo##r, hi##r)

// acc[r][v] as kernel_dot's, 4 columns (one unit vector) per pass over the depth.
void kernel_plain(const int8_t* __restrict__ A, const uint8_t* __restrict__ B, const int64_t* off, int64_t Kg,
                  int32x4_t (&acc)[MR][3]) {
    for (int v = 0; v < 3; ++v) {
        ACCEL_ROW_PAIR_SUMS(0);
        ACCEL_ROW_PAIR_SUMS(1);
        ACCEL_ROW_PAIR_SUMS(2);
        ACCEL_ROW_PAIR_SUMS(3);
        ACCEL_ROW_PAIR_SUMS(4);
        ACCEL_ROW_PAIR_SUMS(5);
        ACCEL_ROW_PAIR_SUMS(6);
        ACCEL_ROW_PAIR_SUMS(7);
        const int8_t* a = A;
        for (int64_t g = 0; g < Kg; ++g) {
            const int8x16_t b = vld1q_s8(reinterpret_cast<const int8_t*>(B + off[g]) + 16 * v);
            const int8x16_t a0 = vld1q_s8(a), a1 = vld1q_s8(a + 16);
            a += 4 * MR;
            ACCEL_ROW_PAIRS(0, a0, 0);
            ACCEL_ROW_PAIRS(1, a0, 1);
            ACCEL_ROW_PAIRS(2, a0, 2);
            ACCEL_ROW_PAIRS(3, a0, 3);
            ACCEL_ROW_PAIRS(4, a1, 0);
            ACCEL_ROW_PAIRS(5, a1, 1);
            ACCEL_ROW_PAIRS(6, a1, 2);
            ACCEL_ROW_PAIRS(7, a1, 3);
        }
        ACCEL_ROW_FOLD(0);
        ACCEL_ROW_FOLD(1);
        ACCEL_ROW_FOLD(2);
        ACCEL_ROW_FOLD(3);
        ACCEL_ROW_FOLD(4);
        ACCEL_ROW_FOLD(5);
        ACCEL_ROW_FOLD(6);
        ACCEL_ROW_FOLD(7);
    }
}
#undef ACCEL_ROW_DOT
#undef ACCEL_ROW_SUMS
#undef ACCEL_ROW_OUT
#undef ACCEL_ROW_PAIRS
#undef ACCEL_ROW_PAIR_SUMS
#undef ACCEL_ROW_FOLD

using Kernel = void (*)(const int8_t*, const uint8_t*, const int64_t*, int64_t, int32x4_t (&)[MR][3]);

}  // namespace

void block_neon(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out) {
    const Kernel kernel = h->isa == QIsa::NeonDot ? kernel_dot : kernel_plain;
    const int8_t* W = static_cast<const int8_t*>(weights(h));
    const int64_t e = qout_bytes(h->out);
    char* y = static_cast<char*>(out.y);
    int32x4_t acc[MR][3];
    int32_t row[NR];
    for (int64_t t = 0; t * MR < h->M; ++t) {
        const int8_t* A = W + t * h->Kg * MR * 4;
        const int64_t m0 = t * MR, rows = std::min(MR, h->M - m0);
        for (int64_t j = 0; j < nc; j += NR) {
            const int64_t n = std::min(NR, nc - j);
            kernel(A, b.base + 4 * (p0 + j), b.off, h->Kg, acc);
            // The tile's column sums, zeros past n (colsum holds nc of them).
            int32x4_t cs[3] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
            if (h->colsum) {
                int32_t tail[NR] = {};
                std::copy_n(colsum + j, n, tail);
                for (int v = 0; v < 3; ++v) cs[v] = vld1q_s32(tail + 4 * v);
            }
            for (int64_t i = 0; i < rows; ++i) {
                const int64_t m = m0 + i;
                // corrected() in vectors: the same sums modulo 2^32 (vector adds and multiplies wrap).
                const int32x4_t rc = vdupq_n_s32(rowc(h)[m]), cc = vdupq_n_s32(colc(h)[m]);
                for (int v = 0; v < 3; ++v) {
                    int32x4_t a = vaddq_s32(acc[i][v], rc);
                    if (h->colsum) a = vmlaq_s32(a, cc, cs[v]);
                    vst1q_s32(row + 4 * v, a);
                }
                if (out.xw) epilogue_row(h, m, row, n, y + (j * out.ldy + m) * e, out.ldy);
                else epilogue_row(h, m, row, n, y + (m * out.ldy + j) * e, 1);
            }
        }
    }
}

#else  // not aarch64: qisa_select never picks this path, so no blob of it exists

void block_neon(const Header*, const View&, int64_t, int64_t, const int32_t*, const Out&) {}

#endif

}  // namespace qk
}  // namespace accel_emu
