// qim2col.cc - X's panels and the interleaved conv input in portable code (qim2col.h). The portable and
// AVX2 paths use these; the AVX-512 paths have their own copies of the hot loops (qim2col_avx512.cc).
#include "math/qim2col.h"

#include <algorithm>
#include <cstring>

#include "math/math_util.h"

namespace accel_emu {
namespace qk {

namespace {

// The padded extent the taps reach, and its phases.
struct PhaseDims {
    int64_t Hq, Wq;
};
PhaseDims phase_dims(const ConvGeom& q) {
    const int64_t Hp = (q.OH - 1) * q.sh + (q.kh - 1) * q.dh + 1;
    const int64_t Wp = (q.OW - 1) * q.sw + (q.kw - 1) * q.dw + 1;
    return {ceil_div(Hp, q.sh), ceil_div(Wp, q.sw)};
}

inline uint32_t load_u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline void store_u32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

}  // namespace

int64_t conv_xi_bytes(const ConvGeom& q, int64_t Kq) {
    const PhaseDims d = phase_dims(q);
    const int64_t C4 = ceil_div(q.Cg, 4);
    // 64 bytes past the end: vector copies of a run may read a whole vector beyond its last unit.
    return round_up(Kq * 8, kAlign) + q.sh * q.sw * C4 * d.Hq * d.Wq * 4 + kAlign;
}

// Lays out xi and computes the k-group offsets; the phases' contents are the builders' job.
void conv_xi_layout(const Header* h, const ConvGeom& q, void* mem, ConvXi* xi) {
    const PhaseDims d = phase_dims(q);
    xi->Hq = d.Hq, xi->Wq = d.Wq;
    xi->C4 = ceil_div(q.Cg, 4);
    xi->plane = d.Hq * d.Wq * 4;
    xi->phase = xi->C4 * xi->plane;
    xi->OW = q.OW;
    xi->off = static_cast<int64_t*>(mem);
    xi->data = static_cast<uint8_t*>(mem) + round_up(h->Kq * 8, kAlign);
    for (int64_t ki = 0, g = 0; ki < q.kh; ++ki)
        for (int64_t kj = 0; kj < q.kw; ++kj) {
            const int64_t rp = (ki * q.dh) % q.sh, a = (ki * q.dh) / q.sh;
            const int64_t cp = (kj * q.dw) % q.sw, b = (kj * q.dw) / q.sw;
            for (int64_t c4 = 0; c4 < xi->C4; ++c4, ++g)
                xi->off[g] = (rp * q.sw + cp) * xi->phase + c4 * xi->plane + (a * d.Wq + b) * 4;
        }
}

// Does some tap use phase (rp, cp)?
bool conv_phase_used(const ConvGeom& q, int64_t rp, int64_t cp) {
    bool r = false, c = false;
    for (int64_t ki = 0; ki < q.kh && !r; ++ki) r = (ki * q.dh) % q.sh == rp;
    for (int64_t kj = 0; kj < q.kw && !c; ++kj) c = (kj * q.dw) % q.sw == cp;
    return r && c;
}

void conv_xi_build(const Header* h, const ConvGeom& q, const uint8_t* x, void* mem, ConvXi* xi) {
    conv_xi_layout(h, q, mem, xi);
    const uint8_t flip = h->x_flip, pad = h->x_pad;
    const int64_t HW = q.H * q.W;
    for (int64_t rp = 0; rp < q.sh; ++rp)
        for (int64_t cp = 0; cp < q.sw; ++cp) {
            if (!conv_phase_used(q, rp, cp)) continue;
            int64_t lo, hi;  // phase columns j whose input column j * sw + cp - pl is inside
            kern::tap_range(cp - q.pl, q.sw, q.W, xi->Wq, &lo, &hi);
            for (int64_t c4 = 0; c4 < xi->C4; ++c4) {
                const int64_t nch = std::min<int64_t>(4, q.Cg - 4 * c4);
                // The unit of a pixel outside the input: x_pad for real channels, 0 for padding ones.
                uint8_t outside[4] = {0, 0, 0, 0};
                for (int64_t b = 0; b < nch; ++b) outside[b] = pad;
                const uint32_t out_unit = load_u32(outside);
                for (int64_t i = 0; i < xi->Hq; ++i) {
                    uint8_t* d = xi->data + (rp * q.sw + cp) * xi->phase + c4 * xi->plane + i * xi->Wq * 4;
                    const int64_t ih = i * q.sh + rp - q.pt;
                    if (ih < 0 || ih >= q.H) {
                        for (int64_t j = 0; j < xi->Wq; ++j) store_u32(d + 4 * j, out_unit);
                        continue;
                    }
                    for (int64_t j = 0; j < lo; ++j) store_u32(d + 4 * j, out_unit);
                    for (int64_t j = hi; j < xi->Wq; ++j) store_u32(d + 4 * j, out_unit);
                    const int64_t col0 = lo * q.sw + cp - q.pl;
                    const uint8_t* s0 = x + (4 * c4) * HW + ih * q.W + col0;
                    if (nch == 4 && q.sw == 1) {
                        const uint8_t *s1 = s0 + HW, *s2 = s1 + HW, *s3 = s2 + HW;
                        uint8_t* dd = d + 4 * lo;
                        for (int64_t j = 0; j < hi - lo; ++j) {
                            dd[4 * j + 0] = s0[j] ^ flip;
                            dd[4 * j + 1] = s1[j] ^ flip;
                            dd[4 * j + 2] = s2[j] ^ flip;
                            dd[4 * j + 3] = s3[j] ^ flip;
                        }
                        continue;
                    }
                    for (int64_t j = lo; j < hi; ++j) {
                        uint8_t u[4] = {0, 0, 0, 0};
                        for (int64_t b = 0; b < nch; ++b) u[b] = s0[b * HW + (j - lo) * q.sw] ^ flip;
                        std::memcpy(d + 4 * j, u, 4);
                    }
                }
            }
        }
}

int conv_segments(const ConvXi& xi, int64_t p, int64_t n, Segment* seg) {
    int ns = 0;
    int64_t oh = p / xi.OW, ow = p - oh * xi.OW;
    for (int64_t col = 0; col < n;) {
        const int64_t len = std::min(xi.OW - ow, n - col);
        seg[ns++] = {(oh * xi.Wq + ow) * 4, col, len};
        col += len;
        ow = 0, ++oh;
    }
    return ns;
}

void panels_conv(const Header* h, const ConvXi& xi, int64_t p0, int64_t nc, int64_t nr, uint8_t* dst) {
    Segment seg[64];
    for (int64_t j = 0; j < nc; j += nr) {
        const int64_t n = std::min(nr, nc - j);
        uint8_t* panel = dst + j * h->Kg * 4;
        // Runs never exceed a row; a panel wider than 64 columns with rows narrower than its width would
        // need more segments than the array holds, so such panels are split.
        for (int64_t c0 = 0; c0 < n; c0 += 64) {
            const int64_t cn = std::min<int64_t>(64, n - c0);
            const int ns = conv_segments(xi, p0 + j + c0, cn, seg);
            for (int64_t g = 0; g < h->Kq; ++g) {
                const uint8_t* src = xi.data + xi.off[g];
                uint8_t* row = panel + g * nr * 4 + c0 * 4;
                for (int s = 0; s < ns; ++s) {
                    const uint8_t* a = src + seg[s].src;
                    uint8_t* b = row + seg[s].col * 4;
                    for (int64_t u = 0; u < seg[s].n; ++u) store_u32(b + 4 * u, load_u32(a + 4 * u));
                }
            }
        }
        for (int64_t g = 0; g < h->Kq && n < nr; ++g) std::memset(panel + (g * nr + n) * 4, 0, (nr - n) * 4);
        std::memset(panel + h->Kq * nr * 4, 0, (h->Kg - h->Kq) * nr * 4);
    }
}

void panels_rows(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t nr, uint8_t* dst) {
    const uint8_t flip = h->x_flip;
    for (int64_t j = 0; j < nc; j += nr) {
        const int64_t n = std::min(nr, nc - j);
        uint8_t* panel = dst + j * h->Kg * 4;
        for (int64_t g = 0; g < h->Kq; ++g) {
            uint8_t* row = panel + g * nr * 4;
            const int64_t k0 = 4 * g;
            if (k0 + 4 <= h->K) {
                const uint8_t* s0 = x + k0 * ldx + n0 + j;
                const uint8_t *s1 = s0 + ldx, *s2 = s1 + ldx, *s3 = s2 + ldx;
                for (int64_t u = 0; u < n; ++u) {
                    row[4 * u + 0] = s0[u] ^ flip;
                    row[4 * u + 1] = s1[u] ^ flip;
                    row[4 * u + 2] = s2[u] ^ flip;
                    row[4 * u + 3] = s3[u] ^ flip;
                }
            } else {
                for (int64_t u = 0; u < n; ++u)
                    for (int64_t b = 0; b < 4; ++b)
                        row[4 * u + b] = k0 + b < h->K ? x[(k0 + b) * ldx + n0 + j + u] ^ flip : 0;
            }
            std::memset(row + 4 * n, 0, (nr - n) * 4);
        }
        std::memset(panel + h->Kq * nr * 4, 0, (h->Kg - h->Kq) * nr * 4);
    }
}

void panels_cols(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t nr, uint8_t* dst) {
    const uint32_t flip4 = 0x01010101u * h->x_flip;
    const int64_t full = h->K / 4;  // k-groups with 4 real bytes
    for (int64_t j = 0; j < nc; j += nr) {
        const int64_t n = std::min(nr, nc - j);
        uint8_t* panel = dst + j * h->Kg * 4;
        for (int64_t u = 0; u < n; ++u) {
            const uint8_t* src = x + (n0 + j + u) * ldx;
            for (int64_t g = 0; g < full; ++g) store_u32(panel + (g * nr + u) * 4, load_u32(src + 4 * g) ^ flip4);
            if (full < h->Kq) {
                uint8_t t[4] = {0, 0, 0, 0};
                for (int64_t b = 0; 4 * full + b < h->K; ++b) t[b] = src[4 * full + b] ^ h->x_flip;
                std::memcpy(panel + (full * nr + u) * 4, t, 4);
            }
        }
        for (int64_t g = 0; g < h->Kq && n < nr; ++g) std::memset(panel + (g * nr + n) * 4, 0, (nr - n) * 4);
        std::memset(panel + h->Kq * nr * 4, 0, (h->Kg - h->Kq) * nr * 4);
    }
}

void panel_colsums(const Header* h, const uint8_t* panels, int64_t nc, int64_t nr, int32_t* colsum) {
    const bool b_signed = traits(h->isa).b_signed;
    for (int64_t j = 0; j < nc; j += nr) {
        const int64_t n = std::min(nr, nc - j);
        const uint8_t* panel = panels + j * h->Kg * 4;
        for (int64_t u = 0; u < n; ++u) colsum[j + u] = 0;
        for (int64_t g = 0; g < h->Kq; ++g) {
            const uint8_t* row = panel + g * nr * 4;
            for (int64_t u = 0; u < n; ++u) {
                int32_t s = 0;
                for (int b = 0; b < 4; ++b)
                    s += b_signed ? static_cast<int8_t>(row[4 * u + b]) : row[4 * u + b];
                colsum[j + u] += s;
            }
        }
    }
}

}  // namespace qk
}  // namespace accel_emu
