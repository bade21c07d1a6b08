// qim2col.cc - X in the kernels' layout, portable code (qim2col.h). The portable path uses these, the AVX2
// path all but the conv copies (qim2col_avx2.cc); the AVX-512 paths have their own copies of the hot loops
// (qim2col_avx512.cc).
#include "math/qim2col.h"

#include <algorithm>
#include <cstring>

#include "math/exact_rounding.h"
#include "math/math_util.h"

namespace accel_emu {
namespace qk {

namespace {

// Slack after the copies: a kernel's last vector may read 16 units past the last output.
constexpr int64_t kSlack = 128;
// Copies bigger than twice this are held a band at a time.
constexpr int64_t kBandBytes = 1024 * 1024;

// Bytes of one row of every copy.
int64_t row_bytes(const ConvGeom& q) { return q.sh * q.kw * ceil_div(q.Cg, 4) * q.OW * 4; }

// Rows of each copy held at once by a run over `rows` output rows: a band's, and its halo's.
int64_t held_rows(const ConvGeom& q, int64_t rows) { return conv_x_band(q, rows) + conv_x_halo(q); }

// Bytes of one 4-channel plane of a copy. A pointwise conv's planes start 64 bytes apart, as qgemm_wx's rows
// of units do: its kernels' loads of a plane's units are then whole cache lines (any other conv's taps
// start anywhere in a row anyway).
int64_t plane_bytes(const ConvGeom& q, int64_t rows) {
    const int64_t bytes = held_rows(q, rows) * q.OW * 4;
    return q.pointwise ? round_up(bytes, 64) : bytes;
}

// Units a kernel's last vector of a band may read past the band's last output (kSlack's bytes).
constexpr int64_t kReadPast = kSlack / 4;

}  // namespace

int64_t conv_x_halo(const ConvGeom& q) { return (q.kh - 1) * q.dh / q.sh; }

// A copy has OH + halo rows (the padded rows the taps reach, split by the row stride); a band of `rows`
// output rows reads rows + halo of them.
int64_t conv_x_band(const ConvGeom& q, int64_t rows) {
    rows = std::clamp<int64_t>(rows, 1, std::max<int64_t>(q.OH, 1));
    if (row_bytes(q) * (rows + conv_x_halo(q)) <= 2 * kBandBytes) return rows;
    const int64_t fit = kBandBytes / row_bytes(q) - conv_x_halo(q);
    return std::clamp<int64_t>(std::max(fit, 4 * conv_x_halo(q)), 1, rows);
}

int64_t conv_x_stage_bytes(const ConvGeom& q) { return round_up(q.H * q.W * 4 + kAlign, kAlign); }

int64_t conv_x_bytes(const ConvGeom& q, int64_t Kq, int64_t rows) {
    const int64_t C4 = ceil_div(q.Cg, 4);
    // Then one 4-channel plane of units, the AVX-512 builder's staging.
    return round_up(Kq * 8, kAlign) + round_up(q.sh * q.kw * C4 * plane_bytes(q, rows) + kSlack, kAlign) +
           conv_x_stage_bytes(q);
}

void conv_x_place(const Header* h, const ConvGeom& q, int64_t rows, void* mem, ConvX* cx) {
    cx->Hq = held_rows(q, rows);
    cx->row0 = 0;
    cx->C4 = ceil_div(q.Cg, 4);
    cx->plane = plane_bytes(q, rows);
    cx->copy = cx->C4 * cx->plane;
    cx->off = static_cast<int64_t*>(mem);
    cx->data = static_cast<uint8_t*>(mem) + round_up(h->Kq * 8, kAlign);
    cx->stage = cx->data + round_up(q.sh * q.kw * cx->copy + kSlack, kAlign);
}

void conv_x_layout(const Header* h, const ConvGeom& q, int64_t rows, void* mem, ConvX* cx) {
    conv_x_place(h, q, rows, mem, cx);
    for (int64_t ki = 0, g = 0; ki < q.kh; ++ki)
        for (int64_t kj = 0; kj < q.kw; ++kj) {
            const int64_t rp = (ki * q.dh) % q.sh, a = (ki * q.dh) / q.sh;
            for (int64_t c4 = 0; c4 < cx->C4; ++c4, ++g)
                cx->off[g] = (rp * q.kw + kj) * cx->copy + c4 * cx->plane + a * q.OW * 4;
        }
    // The slack is never stored, only read into lanes whose results are dropped: defined bytes anyway.
    std::memset(cx->data + q.sh * q.kw * cx->copy, 0, kSlack);
}

void conv_x_clear_after(const ConvGeom& q, const ConvX& cx, int64_t end) {
    const int64_t r0 = end - cx.row0;
    const int64_t r1 = std::min(cx.Hq, r0 + ceil_div(kReadPast, std::max<int64_t>(q.OW, 1)));
    if (r0 >= r1) return;
    for (int64_t c = 0; c < q.sh * q.kw; ++c)
        for (int64_t c4 = 0; c4 < cx.C4; ++c4)
            std::memset(cx.data + c * cx.copy + c4 * cx.plane + r0 * q.OW * 4, 0,
                        static_cast<size_t>((r1 - r0) * q.OW * 4));
}

void conv_x_slice(const ConvGeom& q, const ConvX& cx, int64_t u0, int64_t u1, uint8_t* stage, ConvGeom* qs,
                  ConvX* csx) {
    *qs = q;
    qs->Cg = std::min(q.Cg - 4 * u0, 4 * (u1 - u0));  // the builders take each unit's channel count from Cg
    *csx = cx;
    csx->C4 = u1 - u0;
    csx->data = cx.data + u0 * cx.plane;
    csx->stage = stage;
}

bool conv_phase_used(const ConvGeom& q, int64_t rp) {
    for (int64_t ki = 0; ki < q.kh; ++ki)
        if ((ki * q.dh) % q.sh == rp) return true;
    return false;
}

void conv_x_build(const Header* h, const ConvGeom& q, const uint8_t* x, const ConvX& cx, int64_t i0, int64_t i1) {
    const uint8_t flip = h->x_flip;
    const int64_t HW = q.H * q.W;
    for (int64_t c4 = 0; c4 < cx.C4; ++c4) {
        const int64_t nch = std::min<int64_t>(4, q.Cg - 4 * c4);
        // A pixel outside the input: x_pad for real channels, 0 for padding ones.
        uint8_t outside[4] = {0, 0, 0, 0};
        for (int64_t b = 0; b < nch; ++b) outside[b] = h->x_pad;
        const uint8_t* xc = x + 4 * c4 * HW;
        for (int64_t rp = 0; rp < q.sh; ++rp) {
            if (!conv_phase_used(q, rp)) continue;
            for (int64_t kj = 0; kj < q.kw; ++kj) {
                int64_t lo, hi;  // outputs whose input column ow * sw + kj * dw - pl is inside
                kern::tap_range(kj * q.dw - q.pl, q.sw, q.W, q.OW, &lo, &hi);
                for (int64_t i = i0; i < i1; ++i) {
                    uint8_t* d = cx.data + (rp * q.kw + kj) * cx.copy + c4 * cx.plane + (i - cx.row0) * q.OW * 4;
                    const int64_t ih = i * q.sh + rp - q.pt;
                    const bool in = ih >= 0 && ih < q.H;
                    const int64_t a = in ? lo : q.OW, b = in ? hi : q.OW;
                    for (int64_t ow = 0; ow < a; ++ow) std::memcpy(d + 4 * ow, outside, 4);
                    for (int64_t ow = b; ow < q.OW; ++ow) std::memcpy(d + 4 * ow, outside, 4);
                    const uint8_t* s = xc + ih * q.W + kj * q.dw - q.pl;
                    for (int64_t ow = a; ow < b; ++ow) {
                        uint8_t* u = d + 4 * ow;
                        for (int64_t c = 0; c < 4; ++c) u[c] = c < nch ? s[c * HW + ow * q.sw] ^ flip : 0;
                    }
                }
            }
        }
    }
}

void rows_to_units(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld, uint8_t* dst) {
    const uint8_t flip = h->x_flip;
    for (int64_t g = 0; g < h->Kq; ++g) {
        uint8_t* row = dst + g * ld * 4;
        const int64_t k0 = 4 * g;
        const uint8_t* s0 = x + k0 * ldx + n0;
        if (k0 + 4 <= h->K) {
            const uint8_t *s1 = s0 + ldx, *s2 = s1 + ldx, *s3 = s2 + ldx;
            for (int64_t u = 0; u < nc; ++u) {
                row[4 * u + 0] = s0[u] ^ flip;
                row[4 * u + 1] = s1[u] ^ flip;
                row[4 * u + 2] = s2[u] ^ flip;
                row[4 * u + 3] = s3[u] ^ flip;
            }
            continue;
        }
        for (int64_t u = 0; u < nc; ++u)
            for (int64_t b = 0; b < 4; ++b) row[4 * u + b] = k0 + b < h->K ? s0[b * ldx + u] ^ flip : 0;
    }
}

void cols_to_units(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld, uint8_t* dst) {
    const uint8_t flip = h->x_flip;
    const int64_t full = h->K / 4;  // k-groups with 4 real bytes
    for (int64_t u = 0; u < nc; ++u) {
        const uint8_t* src = x + (n0 + u) * ldx;
        for (int64_t g = 0; g < full; ++g)
            for (int b = 0; b < 4; ++b) dst[(g * ld + u) * 4 + b] = src[4 * g + b] ^ flip;
    }
    cols_to_units_tail(h, x, ldx, n0, nc, ld, dst);
}

void cols_to_units_tail(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld,
                        uint8_t* dst) {
    const uint8_t flip = h->x_flip;
    for (int64_t u = 0; u < nc; ++u) {
        const uint8_t* src = x + (n0 + u) * ldx;
        for (int64_t g = h->K / 4; g < h->Kq; ++g)
            for (int64_t b = 0; b < 4; ++b) dst[(g * ld + u) * 4 + b] = 4 * g + b < h->K ? src[4 * g + b] ^ flip : 0;
    }
}

void view_colsums(const Header* h, const View& b, int64_t p0, int64_t nc, int32_t* colsum) {
    const bool b_signed = traits(h->isa).b_signed;
    for (int64_t j = 0; j < nc; ++j) colsum[j] = 0;
    for (int64_t g = 0; g < h->Kq; ++g) {
        const uint8_t* row = b.base + b.off[g] + 4 * p0;
        for (int64_t j = 0; j < nc; ++j) {
            int32_t s = 0;
            for (int c = 0; c < 4; ++c) s += b_signed ? static_cast<int8_t>(row[4 * j + c]) : row[4 * j + c];
            colsum[j] += s;
        }
    }
}

}  // namespace qk
}  // namespace accel_emu
