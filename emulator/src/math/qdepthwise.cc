// qdepthwise.cc - the quantized depthwise conv (qgemm.h), one channel at a time.
//
// Every isa packs the same form: the VNNI path's operand spaces (A = W, or W - 128 for uint8 weights; B =
// X, or X ^ 0x80 for int8 activations) with the per-channel constants of qgemm_impl.h, and A as [Mp][K]
// bytes. The portable loops (also the AVX2 path's: the work is too small per channel to pay for a kernel)
// add A * B per tap over a row of the padded copy; the AVX-512 kernel reads the input in place and takes
// 16 outputs of a row per vector: for each kernel row, the 4-byte windows of up to 4 taps under each
// output (a dword permute then a byte shuffle of one load) are dotted with that row's weights by one
// vpdpbusd. Kernel rows wider than 8, dilated columns and column strides past 2 use the portable loops.
#include <algorithm>
#include <cstring>

#include "math/exact_rounding.h"
#include "math/math_util.h"
#include "math/qgemm_avx512.h"
#include "math/qgemm_impl.h"

namespace accel_emu {

namespace {

// The packed form takes the VNNI path's operand spaces on every isa.
constexpr QIsa kSpaces = QIsa::Avx512Vnni;
constexpr int64_t kRowTile = 16;
constexpr int64_t kSlack = 128;  // vector loads of a row's last windows read past the plane

const qk::Header* header(const void* packed) { return static_cast<const qk::Header*>(packed); }

int64_t padded_rows(const ConvGeom& q) { return (q.OH - 1) * q.sh + (q.kh - 1) * q.dh + 1; }
int64_t padded_cols(const ConvGeom& q) { return (q.OW - 1) * q.sw + (q.kw - 1) * q.dw + 1; }
int64_t plane_bytes(const ConvGeom& q) { return qk::round_up(padded_rows(q) * padded_cols(q) + kSlack, qk::kAlign); }

// Channel c's plane in B's space, padded, rows padded_cols apart.
ACCEL_HOT void fill_plane(const qk::Header* h, const ConvGeom& q, const uint8_t* xc, uint8_t* P) {
    const int64_t Hp = padded_rows(q), Wp = padded_cols(q);
    const uint8_t flip = h->x_flip, pad = h->x_pad;
    const int64_t c0 = std::clamp<int64_t>(q.pl, 0, Wp), c1 = std::clamp<int64_t>(q.pl + q.W, c0, Wp);
    for (int64_t r = 0; r < Hp; ++r) {
        uint8_t* d = P + r * Wp;
        const int64_t ih = r - q.pt;
        if (ih < 0 || ih >= q.H) {
            std::memset(d, pad, static_cast<size_t>(Wp));
            continue;
        }
        std::memset(d, pad, static_cast<size_t>(c0));
        const uint8_t* s = xc + ih * q.W + (c0 - q.pl);
        for (int64_t j = 0; j < c1 - c0; ++j) d[c0 + j] = s[j] ^ flip;
        std::memset(d + c1, pad, static_cast<size_t>(Wp - c1));
    }
    std::memset(P + Hp * Wp, 0, kSlack);
}

// One output row of a K x K kernel, stride S, no dilation (rows r[0..K) of the padded copy, from the
// row's first window): every tap in registers per output, the loop over outputs vectorized. A product of
// A (int8) and B (uint8) fits int16 (|A * B| <= 128 * 255), so it is made in int16 (one instruction per 8
// or 16 lanes on every SIMD ISA) and widened into the sum.
template <int K, int S>
ACCEL_INLINE void row_kxk(const int16_t* w, const uint8_t* const* r, int64_t n, uint32_t rc, uint32_t cc, bool colsum,
                          int32_t* ACCEL_RESTRICT out) {
    int16_t wk[K * K];
    for (int t = 0; t < K * K; ++t) wk[t] = w[t];
    for (int64_t j = 0; j < n; ++j) {
        uint32_t acc = rc;
        for (int ki = 0; ki < K; ++ki)
            for (int kj = 0; kj < K; ++kj)
                acc += static_cast<uint32_t>(
                    static_cast<int16_t>(wk[ki * K + kj] * static_cast<int16_t>(r[ki][j * S + kj])));
        out[j] = static_cast<int32_t>(acc);
    }
    if (!colsum) return;
    for (int64_t j = 0; j < n; ++j) {
        uint32_t c = 0;
        for (int ki = 0; ki < K; ++ki)
            for (int kj = 0; kj < K; ++kj) c += r[ki][j * S + kj];
        out[j] = static_cast<int32_t>(static_cast<uint32_t>(out[j]) + cc * c);
    }
}

// Channel m: all output rows from the padded copy P. acc, cs and row hold OW values each. The AVX2 path
// runs this too (its clone).
ACCEL_HOT void channel_portable(const qk::Header* h, const ConvGeom& q, int64_t m, const uint8_t* P, uint32_t* acc,
                                uint32_t* cs, int32_t* row, uint8_t* y) {
    const int8_t* A = static_cast<const int8_t*>(qk::weights(h)) + m * h->K;
    const int64_t Wp = padded_cols(q), e = qout_bytes(h->out), OW = q.OW;
    const uint32_t rc = static_cast<uint32_t>(qk::rowc(h)[m]), cc = static_cast<uint32_t>(qk::colc(h)[m]);
    const int k = static_cast<int>(q.kh);
    const bool square =
        q.kh == q.kw && (k == 3 || k == 5) && q.sh == q.sw && (q.sw == 1 || q.sw == 2) && q.dh == 1 && q.dw == 1;
    int16_t w[25];
    for (int64_t t = 0; t < q.kh * q.kw && t < 25; ++t) w[t] = A[t];
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        if (square) {
            const uint8_t* r[5];
            for (int i = 0; i < k; ++i) r[i] = P + (oh * q.sh + i) * Wp;
            if (k == 3 && q.sw == 1) row_kxk<3, 1>(w, r, OW, rc, cc, h->colsum, row);
            else if (k == 3) row_kxk<3, 2>(w, r, OW, rc, cc, h->colsum, row);
            else if (q.sw == 1) row_kxk<5, 1>(w, r, OW, rc, cc, h->colsum, row);
            else row_kxk<5, 2>(w, r, OW, rc, cc, h->colsum, row);
            qk::epilogue_row(h, m, row, OW, y + (m * q.P + oh * OW) * e, 1);
            continue;
        }
        for (int64_t j = 0; j < OW; ++j) acc[j] = 0, cs[j] = 0;
        for (int64_t ki = 0; ki < q.kh; ++ki)
            for (int64_t kj = 0; kj < q.kw; ++kj) {
                const int16_t a = A[ki * q.kw + kj];
                const uint8_t* ACCEL_RESTRICT src = P + (oh * q.sh + ki * q.dh) * Wp + kj * q.dw;
                for (int64_t j = 0; j < OW; ++j)
                    acc[j] += static_cast<uint32_t>(static_cast<int16_t>(a * static_cast<int16_t>(src[j * q.sw])));
                if (h->colsum)
                    for (int64_t j = 0; j < OW; ++j) cs[j] += src[j * q.sw];
            }
        for (int64_t j = 0; j < OW; ++j) row[j] = static_cast<int32_t>(acc[j] + rc + cc * cs[j]);
        qk::epilogue_row(h, m, row, OW, y + (m * q.P + oh * OW) * e, 1);
    }
}

[[maybe_unused]] bool vector_shape(const ConvGeom& q) {  // only the x86 paths use it
    return q.kw <= 8 && q.kh <= 8 && q.dw == 1 && (q.sw == 1 || q.sw == 2);
}

#if defined(__x86_64__) && defined(__GNUC__)

#define ACCEL_DW_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

// Lane p (0..15) = bytes [p * S, p * S + 4) of v: dwords to each 128-bit lane (vpermd), then each lane's
// four windows (vpshufb).
template <int S>
ACCEL_DW_VNNI inline __m512i windows(__m512i v) {
    const __m512i perm = S == 1 ? _mm512_setr_epi32(0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4)
                                : _mm512_setr_epi32(0, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 6, 7, 8, 8);
    const __m128i lane = S == 1 ? _mm_setr_epi8(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6)
                                : _mm_setr_epi8(0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9);
    return _mm512_shuffle_epi8(_mm512_permutexvar_epi32(perm, v), _mm512_broadcast_i32x4(lane));
}

// The kernel rows' weights of channel m in 4-tap groups (taps past kw zero), and the ones that count real
// taps (the column sums).
struct DwWeights { __m512i w[8][2], ones[2]; };
ACCEL_DW_VNNI inline void dw_weights(const qk::Header* h, const ConvGeom& q, int64_t m, DwWeights* d) {
    const int8_t* A = static_cast<const int8_t*>(qk::weights(h)) + m * h->K;
    for (int64_t qq = 0; qq < (q.kw + 3) / 4; ++qq) {
        int8_t o[4] = {0, 0, 0, 0};
        for (int64_t b = 0; b < 4 && 4 * qq + b < q.kw; ++b) o[b] = 1;
        int32_t v;
        std::memcpy(&v, o, 4);
        d->ones[qq] = _mm512_set1_epi32(v);
        for (int64_t ki = 0; ki < q.kh; ++ki) {
            int8_t t[4] = {0, 0, 0, 0};
            for (int64_t b = 0; b < 4 && 4 * qq + b < q.kw; ++b) t[b] = A[ki * q.kw + 4 * qq + b];
            std::memcpy(&v, t, 4);
            d->w[ki][qq] = _mm512_set1_epi32(v);
        }
    }
}

// Channel m, read straight from its input plane xc: a 64-byte load per input row and 4-tap group, its
// bytes outside the row replaced by x_zero (a masked load over a vector of it), so no padded copy is made.
// Columns outer, rows inner: a column of vectors shares its load masks. With KH > 0 (a KH x KH kernel,
// both strides S, no row dilation) R = 4 output rows are done at once: each input row's windows are made
// once for the up to KH of them that use it, instead of once per output row. KH == 0: any kernel rows,
// one output row at a time.
template <int S, int KH, QOut OUT, bool CS, bool FLIP>
ACCEL_DW_VNNI void channel_vnni(const qk::Header* h, const ConvGeom& q, int64_t m, const uint8_t* xc, uint8_t* y) {
    constexpr int R = KH ? 4 : 1;
    constexpr int64_t e = OUT == QOut::Q8 ? 1 : 4;
    const int64_t nq = KH ? (KH + 3) / 4 : (q.kw + 3) / 4, kh = KH ? KH : q.kh;
    const int64_t H = q.H, W = q.W, OW = q.OW, OH = q.OH, sh = KH ? S : q.sh, dh = KH ? 1 : q.dh, pt = q.pt;
    DwWeights d;
    dw_weights(h, q, m, &d);
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(h->x_flip));
    const __m512i padB = _mm512_set1_epi8(static_cast<char>(h->x_pad));              // in B's space
    const __m512i padX = _mm512_set1_epi8(static_cast<char>(h->x_pad ^ h->x_flip));  // in X's
    const __m512i rc = _mm512_set1_epi32(qk::rowc(h)[m]), cc = _mm512_set1_epi32(qk::colc(h)[m]);
    const __m512 s = _mm512_set1_ps(qk::scale(h)[m]), fb = _mm512_set1_ps(qk::fbias(h)[m]);
    const __m512 lo = _mm512_set1_ps(h->lo), hi = _mm512_set1_ps(h->hi);
    const __m512i yz = _mm512_set1_epi32(h->y_zero);
    uint8_t* yc = y + m * q.P * e;
    for (int64_t ow0 = 0; ow0 < OW; ow0 += kRowTile) {
        // Group qq's load starts at input column ow0 * S + 4 qq - pl; bytes at columns in [0, W) are real.
        int64_t start[2];
        __mmask64 in[2];
        for (int64_t qq = 0; qq < nq; ++qq) {
            start[qq] = ow0 * S + 4 * qq - q.pl;
            const int64_t a = std::clamp<int64_t>(-start[qq], 0, 64), b = std::clamp<int64_t>(W - start[qq], a, 64);
            const uint64_t upto_b = b >= 64 ? ~0ull : (1ull << b) - 1, upto_a = a >= 64 ? ~0ull : (1ull << a) - 1;
            in[qq] = upto_b & ~upto_a;
        }
        const __mmask16 store = qk::head_mask(OW - ow0);
        for (int64_t oh0 = 0; oh0 < OH; oh0 += R) {
            __m512i acc[R], cs[R];
            for (int r = 0; r < R; ++r) acc[r] = rc, cs[r] = _mm512_setzero_si512();
            // Input rows oh0 * sh - pt + t; output row oh0 + r uses t = r * sh + ki * dh.
            const int64_t rows_in = KH ? (R - 1) * S + KH : (kh - 1) * dh + 1;
#pragma GCC unroll 16
            for (int64_t t = 0; t < rows_in; t += KH ? 1 : dh) {
                const int64_t ih = oh0 * sh - pt + t;
                const bool inside = ih >= 0 && ih < H;
                for (int64_t qq = 0; qq < nq; ++qq) {
                    __m512i b = padB;  // a row outside the input: x_zero under every tap
                    if (inside) {
                        __m512i v = _mm512_mask_loadu_epi8(padX, in[qq], xc + ih * W + start[qq]);
                        if (FLIP) v = _mm512_xor_si512(v, flip);
                        b = windows<S>(v);
                    }
#pragma GCC unroll 4
                    for (int r = 0; r < R; ++r) {
                        const int64_t ki = KH ? t - r * S : t / dh;
                        if (ki < 0 || ki >= kh) continue;
                        acc[r] = _mm512_dpbusd_epi32(acc[r], b, d.w[ki][qq]);
                        if (CS) cs[r] = _mm512_dpbusd_epi32(cs[r], b, d.ones[qq]);
                    }
                }
            }
            for (int r = 0; r < R; ++r) {
                if (oh0 + r >= OH) break;
                __m512i a = acc[r];
                if (CS) a = _mm512_add_epi32(a, _mm512_mullo_epi32(cc, cs[r]));
                qk::epi_vec<OUT>(a, s, fb, lo, hi, yz, yc + ((oh0 + r) * OW + ow0) * e, store);
            }
        }
    }
}

template <int S, QOut OUT, bool CS, bool FLIP>
void channel_any(const qk::Header* h, const ConvGeom& q, int64_t m, const uint8_t* xc, uint8_t* y) {
    const bool square = q.kh == q.kw && q.sh == S && q.dh == 1;
    if (square && q.kh == 3) channel_vnni<S, 3, OUT, CS, FLIP>(h, q, m, xc, y);
    else if (square && q.kh == 5) channel_vnni<S, 5, OUT, CS, FLIP>(h, q, m, xc, y);
    else channel_vnni<S, 0, OUT, CS, FLIP>(h, q, m, xc, y);
}

template <int S, QOut OUT>
void channels_vnni(const qk::Header* h, const ConvGeom& q, const uint8_t* x, uint8_t* y, int64_t c0, int64_t c1) {
    for (int64_t m = c0; m < c1; ++m) {
        const uint8_t* xc = x + m * q.H * q.W;
        if (h->x_flip) {
            if (h->colsum) channel_any<S, OUT, true, true>(h, q, m, xc, y);
            else channel_any<S, OUT, false, true>(h, q, m, xc, y);
        } else {
            if (h->colsum) channel_any<S, OUT, true, false>(h, q, m, xc, y);
            else channel_any<S, OUT, false, false>(h, q, m, xc, y);
        }
    }
}

template <int S>
void run_vnni(const qk::Header* h, const ConvGeom& q, const uint8_t* x, uint8_t* y, int64_t c0, int64_t c1) {
    switch (h->out) {
        case QOut::Int32: channels_vnni<S, QOut::Int32>(h, q, x, y, c0, c1); return;
        case QOut::Float: channels_vnni<S, QOut::Float>(h, q, x, y, c0, c1); return;
        case QOut::Fixed: return;  // not taken: see qdepthwise_channels()
        case QOut::Q8: break;
    }
    channels_vnni<S, QOut::Q8>(h, q, x, y, c0, c1);
}

#endif

}  // namespace

size_t qdepthwise_packed_bytes(QIsa, const QGemmSpec& spec) {
    const int64_t Mp = qk::round_up(std::max<int64_t>(spec.M, 0), kRowTile);
    return static_cast<size_t>(qk::head_bytes(Mp) + qk::round_up(Mp * spec.K, qk::kAlign));
}

void qdepthwise_pack(QIsa isa, const QGemmSpec& spec, const void* w, void* out) {
    const int64_t Mp = qk::round_up(std::max<int64_t>(spec.M, 0), kRowTile);
    QGemmSpec s = spec;
    s.taps = std::max<int64_t>(spec.K, 1);
    const qk::AView a = qk::fill_header(isa, qk::traits(kSpaces), s, w, s.taps, Mp, s.taps, out);
    qk::Header* h = static_cast<qk::Header*>(out);
    h->magic = qk::kDwMagic;
    int8_t* A = reinterpret_cast<int8_t*>(static_cast<char*>(out) + h->w_off);
    std::memset(A, 0, static_cast<size_t>(qk::round_up(Mp * spec.K, qk::kAlign)));
    for (int64_t m = 0; m < h->M; ++m)
        for (int64_t t = 0; t < spec.K; ++t) A[m * spec.K + t] = static_cast<int8_t>(a.at(m, t, 0));
}

size_t qdepthwise_scratch_bytes(const void*, const ConvGeom& q) {
    return static_cast<size_t>(plane_bytes(q) + 3 * 4 * q.OW + 2 * qk::kAlign);
}

void qdepthwise(const void* packed, const ConvGeom& q, const void* x, void* y, void* scratch) {
    qdepthwise_channels(packed, q, x, y, scratch, 0, header(packed)->M);
}

void qdepthwise_channels(const void* packed, const ConvGeom& q, const void* x, void* y, void* scratch, int64_t c0,
                         int64_t c1) {
    const qk::Header* h = header(packed);
    const uint8_t* xb = static_cast<const uint8_t*>(x);
    uint8_t* yb = static_cast<uint8_t*>(y);
    c0 = std::max<int64_t>(c0, 0), c1 = std::min(c1, h->M);
    if (c1 <= c0) return;
#if defined(__x86_64__) && defined(__GNUC__)
    // The devices' Fixed output takes the portable channel loop: another instantiation of every vector
    // kernel made the sanitizer builds of this file take many minutes.
    if ((h->isa == QIsa::Avx512Vnni || h->isa == QIsa::Amx) && vector_shape(q) && h->out != QOut::Fixed) {
        if (q.sw == 1) run_vnni<1>(h, q, xb, yb, c0, c1);
        else run_vnni<2>(h, q, xb, yb, c0, c1);
        return;
    }
#endif
    uint8_t* P = qk::align_ptr<uint8_t>(scratch);
    uint32_t* acc = reinterpret_cast<uint32_t*>(P + plane_bytes(q));
    uint32_t* cs = acc + q.OW;
    int32_t* row = reinterpret_cast<int32_t*>(cs + q.OW);
    for (int64_t m = c0; m < c1; ++m) {
        fill_plane(h, q, xb + m * q.H * q.W, P);
        channel_portable(h, q, m, P, acc, cs, row, yb);
    }
}

}  // namespace accel_emu
