// qgemm_amx.cc - the int8 GEMM with AMX. TDPBUSD adds to each int32 of a C tile (16 rows by 16 columns)
// the dot products of an A tile row's unsigned 4-byte groups with a B tile's signed 4-byte groups, B
// laid out as 16 k-groups of 16 columns: exactly a 16-column slice of an X panel (row stride 128 bytes
// for the 32-column panels used here). So the weights are A, as unsigned bytes (int8 W moves up by 128;
// the column sums fold that back), C comes out as [rows][columns], the NCHW order of a conv's output,
// and no operand is transposed. Weights: [Mp/16][Kg/16] tiles of [16 rows][64 bytes].
//
// A step is up to 2 A tiles by 2 B tiles (4 C tiles, tmm0-3; A in tmm4-5, B in tmm6-7); the C tiles go
// through a small stack block into the AVX-512 epilogue.
#include <algorithm>
#include <cstring>

#include "math/exact_rounding.h"
#include "math/qgemm_avx512.h"
#include "math/qgemm_impl.h"
#include "math/transpose_x86.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define ACCEL_QGEMM_AMX 1
#endif

namespace accel_emu {
namespace qk {

namespace {
constexpr int64_t TM = 16;      // rows of an A or C tile
constexpr int64_t TKB = 64;     // bytes of an A tile row (16 k-groups)
constexpr int64_t NR = 32;      // panel columns
constexpr int64_t kTileBytes = TM * TKB;
}  // namespace

int64_t amx_panel_bytes(const Header* h, int64_t nc) { return ceil_div(nc, NR) * NR * h->Kg * 4; }

void pack_weights_amx(const AView& a, int64_t Mp, int64_t Kg, void* out) {
    uint8_t* o = static_cast<uint8_t*>(out);
    for (int64_t t = 0; t < Mp / TM; ++t)
        for (int64_t c = 0; c < Kg / 16; ++c)
            for (int64_t r = 0; r < TM; ++r)
                for (int64_t g = 16 * c; g < 16 * c + 16; ++g)
                    for (int b = 0; b < 4; ++b) *o++ = static_cast<uint8_t>(a.at(t * TM + r, g, b));
}

#if defined(ACCEL_QGEMM_AMX)

namespace {

#define ACCEL_AMX __attribute__((target("amx-tile,amx-int8,avx512f,avx512bw,avx512vl,avx512dq")))

// ldtilecfg's 64-byte operand, palette 1.
struct TileConfig {
    uint8_t palette_id;
    uint8_t start_row;
    uint8_t reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
};

// C[MA*16][NB*16] of the step into c (row stride NR int32): A tiles at a (the second kTileBytes * Kg/16
// further), B's k-chunks at b (16 panel rows each).
template <int MA, int NB>
ACCEL_AMX void step(const uint8_t* a, const uint8_t* b, int64_t chunks, int32_t* c) {
    const int64_t a_next = chunks * kTileBytes;
    _tile_zero(0);
    if (NB > 1) _tile_zero(1);
    if (MA > 1) _tile_zero(2);
    if (MA > 1 && NB > 1) _tile_zero(3);
    for (int64_t k = 0; k < chunks; ++k) {
        const uint8_t* ak = a + k * kTileBytes;
        const uint8_t* bk = b + k * 16 * NR * 4;
        _tile_loadd(4, ak, TKB);
        _tile_loadd(6, bk, NR * 4);
        _tile_dpbusd(0, 4, 6);
        if (NB > 1) {
            _tile_loadd(7, bk + 64, NR * 4);
            _tile_dpbusd(1, 4, 7);
        }
        if (MA > 1) {
            _tile_loadd(5, ak + a_next, TKB);
            _tile_dpbusd(2, 5, 6);
            if (NB > 1) _tile_dpbusd(3, 5, 7);
        }
    }
    _tile_stored(0, c, NR * 4);
    if (NB > 1) _tile_stored(1, c + 16, NR * 4);
    if (MA > 1) _tile_stored(2, c + TM * NR, NR * 4);
    if (MA > 1 && NB > 1) _tile_stored(3, c + TM * NR + 16, NR * 4);
}

ACCEL_AMX void epilogue(const Header* h, const int32_t* c, const int32_t* colsum, int64_t m0, int64_t rows, int64_t j,
                        int64_t n, const Out& out) {
    const int64_t e = qout_bytes(h->out);
    char* y = static_cast<char*>(out.y);
    const int32_t* cs = h->colsum ? colsum + j : nullptr;
    alignas(64) char stage[2 * TM][NR * 4];
    for (int64_t i = 0; i < rows; ++i) {
        const RowEpi ep = row_epi(h, m0 + i);
        char* dst = out.xw ? stage[i] : y + ((m0 + i) * out.ldy + j) * e;
        for (int64_t v = 0; v * 16 < n; ++v)
            epi_store(ep, _mm512_loadu_si512(c + i * NR + 16 * v), cs ? cs + 16 * v : nullptr, dst + 16 * v * e,
                      head_mask(n - 16 * v));
    }
    if (!out.xw) return;
    if (e == 4) {  // 4-byte elements: 16 x 16 transposes of the staged block
        for (int64_t i0 = 0; i0 < rows; i0 += 16)
            for (int64_t u0 = 0; u0 < n; u0 += 16) {
                __m512i r[16];
                for (int k = 0; k < 16; ++k) r[k] = _mm512_load_si512(stage[i0 + k] + u0 * 4);
                transpose16(r);
                const __mmask16 m = head_mask(rows - i0);
                for (int64_t c = 0; c < std::min<int64_t>(16, n - u0); ++c)
                    _mm512_mask_storeu_epi32(y + ((j + u0 + c) * out.ldy + m0 + i0) * 4, m, r[c]);
            }
        return;
    }
    for (int64_t u = 0; u < n; ++u) {
        char* dst = y + ((j + u) * out.ldy + m0) * e;
        for (int64_t i = 0; i < rows; ++i) dst[i] = stage[i][u];
    }
}

// The block's columns as 32-column panels, [Kg][32] units each: a B tile is then 16 rows of one panel's
// 64-byte halves, 128 bytes apart (tile loads need one stride; the view's k-groups are not evenly spaced).
ACCEL_AMX void build_panels(const Header* h, const View& b, int64_t p0, int64_t nc, uint8_t* panels) {
    for (int64_t j = 0; j < nc; j += NR) {
        uint8_t* panel = panels + j * h->Kg * 4;
        const __mmask16 m0 = head_mask(nc - j), m1 = head_mask(nc - j - 16 > 0 ? nc - j - 16 : 0);
        for (int64_t g = 0; g < h->Kq; ++g) {
            const uint8_t* src = b.base + b.off[g] + 4 * (p0 + j);
            _mm512_store_si512(panel + g * NR * 4, _mm512_maskz_loadu_epi32(m0, src));
            _mm512_store_si512(panel + g * NR * 4 + 64, _mm512_maskz_loadu_epi32(m1, src + 64));
        }
        for (int64_t g = h->Kq; g < h->Kg; ++g) {
            _mm512_store_si512(panel + g * NR * 4, _mm512_setzero_si512());
            _mm512_store_si512(panel + g * NR * 4 + 64, _mm512_setzero_si512());
        }
    }
}

}  // namespace

ACCEL_AMX void block_amx(const Header* h, const View& bv, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out,
                         void* scratch) {
    uint8_t* panels = static_cast<uint8_t*>(scratch);
    build_panels(h, bv, p0, nc, panels);
    alignas(64) TileConfig cfg = {};
    cfg.palette_id = 1;
    for (int t = 0; t < 8; ++t) cfg.rows[t] = TM, cfg.colsb[t] = TKB;
    _tile_loadconfig(&cfg);
    const uint8_t* W = static_cast<const uint8_t*>(weights(h));
    const int64_t chunks = h->Kg / 16;
    alignas(64) int32_t c[2 * TM * NR];
    for (int64_t m0 = 0; m0 < h->M; m0 += 2 * TM) {
        const uint8_t* a = W + (m0 / TM) * chunks * kTileBytes;
        const int64_t rows = std::min(2 * TM, h->M - m0);
        for (int64_t j = 0; j < nc; j += NR) {
            const int64_t n = std::min(NR, nc - j);
            const uint8_t* b = panels + j * h->Kg * 4;
            if (rows > TM) {
                if (n > 16) step<2, 2>(a, b, chunks, c);
                else step<2, 1>(a, b, chunks, c);
            } else {
                if (n > 16) step<1, 2>(a, b, chunks, c);
                else step<1, 1>(a, b, chunks, c);
            }
            epilogue(h, c, colsum, m0, rows, j, n, out);
        }
    }
    _tile_release();
}

#else  // not x86-64: qisa_select never picks this path, so no blob of it exists

void block_amx(const Header*, const View&, int64_t, int64_t, const int32_t*, const Out&, void*) {}

#endif

}  // namespace qk
}  // namespace accel_emu
