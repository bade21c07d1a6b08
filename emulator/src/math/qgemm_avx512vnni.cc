// qgemm_avx512vnni.cc - the int8 GEMM with AVX-512 VNNI. vpdpbusd adds, per 32-bit lane, four products of
// an unsigned byte of its first source and a signed byte of its second: the lanes are 16 columns of X (a
// k-group's 16 units, 64 bytes, unsigned), the second source is one weight row's k-group broadcast from memory
// (signed). A register tile is 8 weight rows by 3 vectors (48 columns): 24 accumulators, 3 unit loads and
// 8 broadcasts per k-group, so the loads stay well under the two dot products a cycle the core sustains.
// Weights: [Mp/8][Kg][8 rows][4 bytes] of A = W (int8) or W - 128 (uint8).
#include <algorithm>
#include <cstring>

#include "math/exact_rounding.h"
#include "math/qgemm_avx512.h"
#include "math/qgemm_impl.h"
#include "math/transpose_x86.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define ACCEL_QGEMM_VNNI 1
#endif

namespace accel_emu {
namespace qk {

namespace {
constexpr int64_t MR = 8, NR = 48;
}  // namespace

void pack_weights_vnni(const AView& a, int64_t Mp, int64_t Kg, void* out) {
    int8_t* o = static_cast<int8_t*>(out);
    for (int64_t t = 0; t < Mp / MR; ++t)
        for (int64_t g = 0; g < Kg; ++g)
            for (int64_t i = 0; i < MR; ++i)
                for (int b = 0; b < 4; ++b) *o++ = static_cast<int8_t>(a.at(t * MR + i, g, b));
}

#if defined(ACCEL_QGEMM_VNNI)

namespace {

#define ACCEL_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

// gcc keeps _mm512_dpbusd_epi32's accumulators in memory when they are __m512i (the intrinsic's casts
// between __m512i and the builtin's int vector defeat scalarization: every k-group stored and reloaded
// 24 vectors); accumulators of the builtin's own type stay in registers.
#if defined(__clang__)
typedef __m512i Acc;
ACCEL_VNNI inline Acc dot(Acc acc, __m512i b, __m512i w) { return _mm512_dpbusd_epi32(acc, b, w); }
#else
typedef int Acc __attribute__((vector_size(64)));
ACCEL_VNNI inline Acc dot(Acc acc, __m512i b, __m512i w) {
    return __builtin_ia32_vpdpbusd_v16si(acc, reinterpret_cast<Acc>(b), reinterpret_cast<Acc>(w));
}
#endif

// The epilogue's constants of one run, and its per-row arrays (computing their addresses per row costs
// more than the epilogue of a short row).
struct Consts {
    __m512 lo, hi;
    __m512i yz;
    const int32_t *rowc, *colc;
    const float *scale, *fbias;
};

// One tile, rows [m0, m0 + rows) by columns [j, j + n) of the block (n <= NV * 16): the sums of A's 8
// rows times NV 16-column vectors of units (k-group g's at B + off[g]), started from the rows' constants,
// then the epilogue straight from the registers. The output kind, the column sums and whether the tile
// goes straight to y (all 8 rows, y[m][n]) are template parameters: the epilogue then has no branch per
// vector or row, every index is a constant, and gcc keeps the accumulators in registers (a test of the
// row count makes it store them all first; so does inlining it into its caller). Other tiles go through a
// staging block.
template <int NV, QOut OUT, bool CS, bool DIRECT>
ACCEL_VNNI __attribute__((noinline)) void tile(const Header* h, const int8_t* __restrict__ A,
                                               const uint8_t* __restrict__ B, const int64_t* __restrict__ off,
                                               const int32_t* colsum, int64_t m0, int64_t rows, int64_t j, int64_t n,
                                               const Out& out, const Consts& k) {
    const int32_t* rc = k.rowc + m0;
    Acc acc[MR][NV];
    for (int i = 0; i < MR; ++i) {
        const __m512i r = _mm512_set1_epi32(rc[i]);  // rows past M have 0
        for (int v = 0; v < NV; ++v) acc[i][v] = reinterpret_cast<Acc>(r);
    }
    // Kg >= 1 (block() makes sure): with a loop that might not run, gcc keeps the accumulators in memory
    // for the path that skips it.
    int64_t g = 0;
    do {
        const uint8_t* bg = B + off[g];
        __m512i b[NV];
        for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_si512(bg + 64 * v);
        const int32_t* a = reinterpret_cast<const int32_t*>(A);
        for (int i = 0; i < MR; ++i) {
            const __m512i w = _mm512_set1_epi32(a[i]);
            for (int v = 0; v < NV; ++v) acc[i][v] = dot(acc[i][v], b[v], w);
        }
        A += MR * 4;
    } while (++g < h->Kg);
    constexpr int64_t e = OUT == QOut::Q8 || OUT == QOut::Fixed ? 1 : 4;
    __mmask16 mask[NV];
    __m512i cs[NV];
    for (int v = 0; v < NV; ++v) {
        mask[v] = DIRECT ? head_mask(n - 16 * v) : static_cast<__mmask16>(0xFFFF);
        cs[v] = CS ? _mm512_loadu_si512(colsum + j + 16 * v) : _mm512_setzero_si512();
    }
    alignas(64) char stage[MR][NR * 4];
    char* y = static_cast<char*>(out.y);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
        const int64_t m = m0 + i;  // rows past M have constants too (zeros)
        char* dst = DIRECT ? y + (m * out.ldy + j) * e : stage[i];
        const __m512 s = _mm512_set1_ps(k.scale[m]);
        FixedEpi fx;
        if constexpr (OUT == QOut::Fixed) fx = fixed_row(h, m);
        for (int v = 0; v < NV; ++v) {
            __m512i a = reinterpret_cast<__m512i>(acc[i][v]);
            if (CS) a = _mm512_add_epi32(a, _mm512_mullo_epi32(_mm512_set1_epi32(k.colc[m]), cs[v]));
            if constexpr (OUT == QOut::Fixed) fixed_vec(a, fx, k.yz, dst + 16 * e * v, mask[v]);
            else
                epi_vec<OUT>(a, s, OUT == QOut::Float ? _mm512_set1_ps(k.fbias[m]) : s, k.lo, k.hi, k.yz,
                             dst + 16 * e * v, mask[v]);
        }
    }
    if (DIRECT) return;
    if (!out.xw) {
        for (int64_t i = 0; i < rows; ++i) std::memcpy(y + ((m0 + i) * out.ldy + j) * e, stage[i], n * e);
        return;
    }
    int64_t u = 0;
    if constexpr (e == 4) {
        // A whole tile's 4-byte sums go out transposed 8 columns at a time (each column's 8 rows are
        // contiguous in y): element by element, the 8 values were gathered through the stack and reloaded as
        // one vector, a store-forwarding stall per column that took a fifth of the GEMM's time.
        if (rows == MR)
            for (; u + 8 <= n; u += 8) {
                __m256i c[8];
                for (int i = 0; i < 8; ++i)
                    c[i] = _mm256_load_si256(reinterpret_cast<const __m256i*>(stage[i] + u * 4));
                transpose8x8_epi32(c);
                for (int t = 0; t < 8; ++t)
                    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + ((j + u + t) * out.ldy + m0) * 4), c[t]);
            }
    }
    for (; u < n; ++u) {
        char* dst = y + ((j + u) * out.ldy + m0) * e;
        for (int64_t i = 0; i < rows; ++i) std::memcpy(dst + i * e, stage[i] + u * e, e);
    }
}

template <int NV, QOut OUT, bool CS>
ACCEL_VNNI inline void tile_any(const Header* h, const int8_t* A, const uint8_t* B, const int64_t* off,
                                const int32_t* colsum, int64_t m0, int64_t rows, int64_t j, int64_t n, const Out& out,
                                const Consts& k) {
    if (rows == MR && !out.xw) tile<NV, OUT, CS, true>(h, A, B, off, colsum, m0, rows, j, n, out, k);
    else tile<NV, OUT, CS, false>(h, A, B, off, colsum, m0, rows, j, n, out, k);
}

// A block's last R (< 8) columns the other way round: the lanes are the tile's 8 rows (one k-group's 32
// weight bytes, a ymm), each column's unit broadcast. That costs one dot product per column and k-group
// instead of a 16-lane vector per row (8), which matters where N leaves a few columns (7x7 outputs: 49).
#if defined(__clang__)
typedef __m256i Acc8;
ACCEL_VNNI inline Acc8 dot8(Acc8 acc, __m256i b, __m256i w) { return _mm256_dpbusd_epi32(acc, b, w); }
#else
typedef int Acc8 __attribute__((vector_size(32)));
ACCEL_VNNI inline Acc8 dot8(Acc8 acc, __m256i b, __m256i w) {
    return __builtin_ia32_vpdpbusd_v8si(acc, reinterpret_cast<Acc8>(b), reinterpret_cast<Acc8>(w));
}
#endif

// Q partial sums per column over alternating k-groups, enough that about 8 or more chains of dot products
// are in flight: one chain would wait on its own latency every k-group.
template <int R>
ACCEL_VNNI void tail_kernel(const int8_t* __restrict__ A, const int32_t* __restrict__ T, int64_t Kg,
                            int32_t (*__restrict__ c)[MR]) {
    constexpr int Q = R <= 2 ? 8 : R <= 4 ? 4 : 2;
    Acc8 acc[R][Q];
    for (int u = 0; u < R; ++u)
        for (int q = 0; q < Q; ++q) acc[u][q] = Acc8{};
    int64_t g = 0;
    for (; g + Q <= Kg; g += Q) {
        for (int q = 0; q < Q; ++q) {
            const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(A + q * MR * 4));
            const int32_t* b = T + (g + q) * MR;
            for (int u = 0; u < R; ++u) acc[u][q] = dot8(acc[u][q], _mm256_set1_epi32(b[u]), w);
        }
        A += Q * MR * 4;
    }
    for (; g < Kg; ++g) {
        const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(A));
        const int32_t* b = T + g * MR;
        for (int u = 0; u < R; ++u) acc[u][0] = dot8(acc[u][0], _mm256_set1_epi32(b[u]), w);
        A += MR * 4;
    }
    for (int u = 0; u < R; ++u) {
        __m256i s = reinterpret_cast<__m256i>(acc[u][0]);
        for (int q = 1; q < Q; ++q) s = _mm256_add_epi32(s, reinterpret_cast<__m256i>(acc[u][q]));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(c[u]), s);
    }
}

// Columns [j, j + r) of the block (their units gathered in T, [Kg][8]), r < 8, rows [m0, m0 + rows).
ACCEL_VNNI void tail(const Header* h, const int8_t* A, const int32_t* T, int64_t r, const int32_t* colsum, int64_t m0,
                     int64_t rows, int64_t j, const Out& out) {
    alignas(32) int32_t c[MR - 1][MR];
    switch (r) {
        case 1: tail_kernel<1>(A, T, h->Kg, c); break;
        case 2: tail_kernel<2>(A, T, h->Kg, c); break;
        case 3: tail_kernel<3>(A, T, h->Kg, c); break;
        case 4: tail_kernel<4>(A, T, h->Kg, c); break;
        case 5: tail_kernel<5>(A, T, h->Kg, c); break;
        case 6: tail_kernel<6>(A, T, h->Kg, c); break;
        default: tail_kernel<7>(A, T, h->Kg, c); break;
    }
    const int64_t e = qout_bytes(h->out);
    char* y = static_cast<char*>(out.y);
    const __mmask16 lanes = head_mask(rows);
    const RowEpi ep = lanes_epi(h, m0, lanes);
    alignas(64) char stage[MR * 4];
    for (int64_t u = 0; u < r; ++u) {
        __m512i s = _mm512_maskz_loadu_epi32(lanes, c[u]);
        if (h->colsum) s = _mm512_add_epi32(s, _mm512_mullo_epi32(ep.colc, _mm512_set1_epi32(colsum[j + u])));
        if (out.xw) {
            epi_store(ep, s, nullptr, y + ((j + u) * out.ldy + m0) * e, lanes);
            continue;
        }
        epi_store(ep, s, nullptr, stage, lanes);
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t b = 0; b < e; ++b) y[((m0 + i) * out.ldy + j + u) * e + b] = stage[i * e + b];
    }
}

template <QOut OUT, bool CS>
ACCEL_VNNI void block(const Header* h, const View& bv, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out,
                      int32_t* T) {
    const int8_t* W = static_cast<const int8_t*>(weights(h));
    const Consts k{_mm512_set1_ps(h->lo),
                   _mm512_set1_ps(h->hi),
                   _mm512_set1_epi32(h->y_zero),
                   rowc(h),
                   colc(h),
                   scale(h),
                   fbias(h)};
    if (h->Kg == 0) {  // no depth: every sum is its row's constant, which the tail computes for any width
        static const int32_t zero[MR] = {};
        for (int64_t t = 0; t * MR < h->M; ++t)
            for (int64_t j = 0; j < nc; j += MR - 1)
                tail(h, W, zero, std::min(MR - 1, nc - j), colsum, t * MR, std::min(MR, h->M - t * MR), j, out);
        return;
    }
    // The last few columns (fewer than 8 past a multiple of 16) go by rows of weights (tail), their units
    // gathered once for all weight tiles: each sits in its own line of every k-group's row, which the
    // tail would otherwise fetch from L2 one latency at a time for each tile.
    const int64_t r = nc % NR % 16, nt = r > 0 && r < 8 ? r : 0;
    for (int64_t g = 0; g < h->Kg && nt; ++g)
        for (int64_t u = 0; u < MR; ++u)
            std::memcpy(T + g * MR + u, bv.base + bv.off[g] + 4 * (p0 + std::min(nc - nt + u, nc - 1)), 4);
    for (int64_t t = 0; t * MR < h->M; ++t) {
        const int8_t* A = W + t * h->Kg * MR * 4;
        const int64_t m0 = t * MR, rows = std::min(MR, h->M - m0);
        for (int64_t j = 0; j < nc - nt; j += NR) {
            const int64_t n = std::min(NR, nc - nt - j);
            const uint8_t* B = bv.base + 4 * (p0 + j);
            if (n > 32) tile_any<3, OUT, CS>(h, A, B, bv.off, colsum, m0, rows, j, n, out, k);
            else if (n > 16) tile_any<2, OUT, CS>(h, A, B, bv.off, colsum, m0, rows, j, n, out, k);
            else tile_any<1, OUT, CS>(h, A, B, bv.off, colsum, m0, rows, j, n, out, k);
        }
        if (nt) tail(h, A, T, nt, colsum, m0, rows, nc - nt, out);
    }
}

}  // namespace

void block_vnni(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out,
                void* scratch) {
    int32_t* T = static_cast<int32_t*>(scratch);
    switch (h->out) {
        case QOut::Q8:
            if (h->colsum) block<QOut::Q8, true>(h, b, p0, nc, colsum, out, T);
            else block<QOut::Q8, false>(h, b, p0, nc, colsum, out, T);
            return;
        case QOut::Int32:
            if (h->colsum) block<QOut::Int32, true>(h, b, p0, nc, colsum, out, T);
            else block<QOut::Int32, false>(h, b, p0, nc, colsum, out, T);
            return;
        case QOut::Float:
            if (h->colsum) block<QOut::Float, true>(h, b, p0, nc, colsum, out, T);
            else block<QOut::Float, false>(h, b, p0, nc, colsum, out, T);
            return;
        case QOut::Fixed:
            if (h->colsum) block<QOut::Fixed, true>(h, b, p0, nc, colsum, out, T);
            else block<QOut::Fixed, false>(h, b, p0, nc, colsum, out, T);
            return;
    }
}

#else  // not x86-64: qisa_select never picks this path, so no blob of it exists

void block_vnni(const Header*, const View&, int64_t, int64_t, const int32_t*, const Out&, void*) {}

#endif

}  // namespace qk
}  // namespace accel_emu
