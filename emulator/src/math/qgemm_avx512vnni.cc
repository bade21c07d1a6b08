// qgemm_avx512vnni.cc - the int8 GEMM with AVX-512 VNNI. vpdpbusd adds, per 32-bit lane, four products of
// an unsigned byte of its first source and a signed byte of its second: the lanes are 16 columns of X (a
// panel row's 64 bytes, unsigned), the second source is one weight row's k-group broadcast from memory
// (signed). A register tile is 8 weight rows by 3 vectors (48 columns): 24 accumulators, 3 panel loads and
// 8 broadcasts per k-group, so the loads stay well under the two dot products a cycle the core sustains.
// Weights: [Mp/8][Kg][8 rows][4 bytes] of A = W (int8) or W - 128 (uint8).
#include <algorithm>

#include "math/qgemm_avx512.h"
#include "math/qgemm_impl.h"

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

// c[MR][NR] = sum over Kg k-groups of A's 8 rows times NV 16-column vectors of the panel (row stride
// NR * 4 bytes). Constant loop bounds keep the accumulators in registers.
template <int NV>
ACCEL_VNNI inline void kernel(const int8_t* __restrict__ A, const uint8_t* __restrict__ B, int64_t Kg,
                              int32_t (*__restrict__ c)[NR]) {
    Acc acc[MR][NV];
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) acc[i][v] = Acc{};
    for (int64_t g = 0; g < Kg; ++g) {
        __m512i b[NV];
        for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_si512(B + 64 * v);
        const int32_t* a = reinterpret_cast<const int32_t*>(A);
        for (int i = 0; i < MR; ++i) {
            const __m512i w = _mm512_set1_epi32(a[i]);
            for (int v = 0; v < NV; ++v) acc[i][v] = dot(acc[i][v], b[v], w);
        }
        A += MR * 4;
        B += NR * 4;
    }
    for (int i = 0; i < MR; ++i)
        for (int v = 0; v < NV; ++v) _mm512_store_si512(c[i] + 16 * v, reinterpret_cast<__m512i>(acc[i][v]));
}

// One tile: rows [m0, m0 + rows) by columns [j, j + n) of the block, n <= NV * 16.
template <int NV>
ACCEL_VNNI void tile(const Header* h, const int8_t* A, const uint8_t* B, const int32_t* colsum, int64_t m0,
                     int64_t rows, int64_t j, int64_t n, const Out& out) {
    alignas(64) int32_t acc[MR][NR];
    kernel<NV>(A, B, h->Kg, acc);
    const int64_t e = h->out == QOut::Q8 ? 1 : 4;
    char* y = static_cast<char*>(out.y);
    const int32_t* cs = h->colsum ? colsum + j : nullptr;
    if (!out.xw) {
        for (int i = 0; i < MR; ++i) {
            if (i >= rows) break;
            const RowEpi ep = row_epi(h, m0 + i);
            char* dst = y + ((m0 + i) * out.ldy + j) * e;
            for (int v = 0; v < NV; ++v)
                epi_store(ep, _mm512_load_si512(acc[i] + 16 * v), cs ? cs + 16 * v : nullptr, dst + 16 * v * e,
                          head_mask(n - 16 * v));
        }
        return;
    }
    // y[n][m]: the tile through a staging block, then column by column.
    alignas(64) char stage[MR][NR * 4];
    for (int i = 0; i < MR; ++i) {
        if (i >= rows) break;
        const RowEpi ep = row_epi(h, m0 + i);
        for (int v = 0; v < NV; ++v)
            epi_store(ep, _mm512_load_si512(acc[i] + 16 * v), cs ? cs + 16 * v : nullptr, stage[i] + 16 * v * e,
                     head_mask(n - 16 * v));
    }
    for (int64_t u = 0; u < n; ++u) {
        char* dst = y + ((j + u) * out.ldy + m0) * e;
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t b = 0; b < e; ++b) dst[i * e + b] = stage[i][u * e + b];
    }
}

}  // namespace

void block_vnni(const Header* h, const uint8_t* panels, const int32_t* colsum, int64_t nc, const Out& out) {
    const int8_t* W = static_cast<const int8_t*>(weights(h));
    for (int64_t t = 0; t * MR < h->M; ++t) {
        const int8_t* A = W + t * h->Kg * MR * 4;
        const int64_t m0 = t * MR, rows = std::min(MR, h->M - m0);
        for (int64_t j = 0; j < nc; j += NR) {
            const int64_t n = std::min(NR, nc - j);
            const uint8_t* B = panels + j * h->Kg * 4;
            if (n > 32) tile<3>(h, A, B, colsum, m0, rows, j, n, out);
            else if (n > 16) tile<2>(h, A, B, colsum, m0, rows, j, n, out);
            else tile<1>(h, A, B, colsum, m0, rows, j, n, out);
        }
    }
}

#else  // not x86-64: qisa_select never picks this path, so no blob of it exists

void block_vnni(const Header*, const uint8_t*, const int32_t*, int64_t, const Out&) {}

#endif

}  // namespace qk
}  // namespace accel_emu
