// qdepthwise.cc - the quantized depthwise conv (qgemm.h): one channel at a time, its plane copied once into
// a padded buffer in B's space (the padding ring x_pad, so no tap needs a bounds test), then every output
// row computed from it.
//
// Every isa packs the same form: the VNNI path's operand spaces (A = W, or W - 128 for uint8 weights; B =
// X, or X ^ 0x80 for int8 activations) with the per-channel constants of qgemm_impl.h, and A as [Mp][K]
// bytes. The portable loops (also the AVX2 path's: the work is too small per channel to pay for a kernel)
// add A * B per tap over a row; the AVX-512 kernel takes 16 outputs of a row per vector: for each kernel
// row, the 4-byte windows of up to 4 taps under each output (a dword permute then a byte shuffle of one
// load) are dotted with that row's weights by one vpdpbusd. Kernel rows wider than 8, dilated columns and
// column strides past 2 use the portable loops.
#include <algorithm>
#include <cstring>

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
void fill_plane(const qk::Header* h, const ConvGeom& q, const uint8_t* xc, uint8_t* P) {
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

// Channel m: all output rows with the portable loops. acc, cs and row hold OW values each.
void channel_portable(const qk::Header* h, const ConvGeom& q, int64_t m, const uint8_t* P, uint32_t* acc,
                      uint32_t* cs, int32_t* row, uint8_t* y) {
    const int8_t* A = static_cast<const int8_t*>(qk::weights(h)) + m * h->K;
    const int64_t Wp = padded_cols(q), e = h->out == QOut::Q8 ? 1 : 4;
    const uint32_t rc = static_cast<uint32_t>(qk::rowc(h)[m]), cc = static_cast<uint32_t>(qk::colc(h)[m]);
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        std::fill_n(acc, q.OW, 0u);
        std::fill_n(cs, q.OW, 0u);
        for (int64_t ki = 0; ki < q.kh; ++ki)
            for (int64_t kj = 0; kj < q.kw; ++kj) {
                const int32_t a = A[ki * q.kw + kj];
                const uint8_t* src = P + (oh * q.sh + ki * q.dh) * Wp + kj * q.dw;
                if (q.sw == 1)
                    for (int64_t j = 0; j < q.OW; ++j) acc[j] += static_cast<uint32_t>(a * src[j]);
                else
                    for (int64_t j = 0; j < q.OW; ++j) acc[j] += static_cast<uint32_t>(a * src[j * q.sw]);
                if (h->colsum)
                    for (int64_t j = 0; j < q.OW; ++j) cs[j] += src[j * q.sw];
            }
        for (int64_t j = 0; j < q.OW; ++j) row[j] = static_cast<int32_t>(acc[j] + rc + cc * cs[j]);
        qk::epilogue_row(h, m, row, q.OW, y + (m * q.P + oh * q.OW) * e, 1);
    }
}

bool vector_shape(const ConvGeom& q) { return q.kw <= 8 && q.kh <= 8 && q.dw == 1 && (q.sw == 1 || q.sw == 2); }

#if defined(__x86_64__) && defined(__GNUC__)

#define ACCEL_DW_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))

// Lane p (0..15) = bytes [p * S, p * S + 4) of src: dwords to each 128-bit lane (vpermd), then each
// lane's four windows (vpshufb).
template <int S>
ACCEL_DW_VNNI inline __m512i windows(const uint8_t* src) {
    const __m512i perm = S == 1 ? _mm512_setr_epi32(0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4)
                                : _mm512_setr_epi32(0, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 6, 7, 8, 8);
    const __m128i lane = S == 1 ? _mm_setr_epi8(0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5, 3, 4, 5, 6)
                                : _mm_setr_epi8(0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9);
    const __m512i v = _mm512_permutexvar_epi32(perm, _mm512_loadu_si512(src));
    return _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(lane));
}

template <int S>
ACCEL_DW_VNNI void channel_vnni(const qk::Header* h, const ConvGeom& q, int64_t m, const uint8_t* P, uint8_t* y) {
    const int8_t* A = static_cast<const int8_t*>(qk::weights(h)) + m * h->K;
    const int64_t Wp = padded_cols(q), e = h->out == QOut::Q8 ? 1 : 4, nq = (q.kw + 3) / 4;
    // Each kernel row's weights in 4-tap groups (taps past kw zero), and the ones that count real taps.
    __m512i w[8][2], ones[2];
    for (int64_t qq = 0; qq < nq; ++qq) {
        int8_t o[4] = {0, 0, 0, 0};
        for (int64_t b = 0; b < 4 && 4 * qq + b < q.kw; ++b) o[b] = 1;
        int32_t v;
        std::memcpy(&v, o, 4);
        ones[qq] = _mm512_set1_epi32(v);
        for (int64_t ki = 0; ki < q.kh; ++ki) {
            int8_t t[4] = {0, 0, 0, 0};
            for (int64_t b = 0; b < 4 && 4 * qq + b < q.kw; ++b) t[b] = A[ki * q.kw + 4 * qq + b];
            std::memcpy(&v, t, 4);
            w[ki][qq] = _mm512_set1_epi32(v);
        }
    }
    const qk::RowEpi ep = qk::row_epi(h, m);
    const bool colsum = h->colsum;
    for (int64_t oh = 0; oh < q.OH; ++oh) {
        uint8_t* yr = y + (m * q.P + oh * q.OW) * e;
        for (int64_t ow0 = 0; ow0 < q.OW; ow0 += kRowTile) {
            __m512i acc = _mm512_setzero_si512(), cs = _mm512_setzero_si512();
            for (int64_t ki = 0; ki < q.kh; ++ki) {
                const uint8_t* src = P + (oh * q.sh + ki * q.dh) * Wp + ow0 * S;
                for (int64_t qq = 0; qq < nq; ++qq) {
                    const __m512i b = windows<S>(src + 4 * qq);
                    acc = _mm512_dpbusd_epi32(acc, b, w[ki][qq]);
                    if (colsum) cs = _mm512_dpbusd_epi32(cs, b, ones[qq]);
                }
            }
            if (colsum) acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(ep.colc, cs));
            qk::epi_store(ep, acc, nullptr, yr + ow0 * e, qk::head_mask(q.OW - ow0));
        }
    }
}

#endif

}  // namespace

size_t qdepthwise_packed_bytes(QIsa, const QGemmSpec& spec) {
    const int64_t Mp = qk::round_up(std::max<int64_t>(spec.M, 0), kRowTile);
    return static_cast<size_t>(qk::header_bytes() + 4 * qk::rows_bytes(Mp) + qk::round_up(Mp * spec.K, qk::kAlign));
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
    const qk::Header* h = header(packed);
    uint8_t* P = qk::align_ptr<uint8_t>(scratch);
    uint32_t* acc = reinterpret_cast<uint32_t*>(P + plane_bytes(q));
    uint32_t* cs = acc + q.OW;
    int32_t* row = reinterpret_cast<int32_t*>(cs + q.OW);
    const uint8_t* xb = static_cast<const uint8_t*>(x);
    uint8_t* yb = static_cast<uint8_t*>(y);
    const bool vec = (h->isa == QIsa::Avx512Vnni || h->isa == QIsa::Amx) && vector_shape(q);
    for (int64_t m = 0; m < h->M; ++m) {
        fill_plane(h, q, xb + m * q.H * q.W, P);
#if defined(__x86_64__) && defined(__GNUC__)
        if (vec) {
            if (q.sw == 1) channel_vnni<1>(h, q, m, P, yb);
            else channel_vnni<2>(h, q, m, P, yb);
            continue;
        }
#endif
        (void)vec;
        channel_portable(h, q, m, P, acc, cs, row, yb);
    }
}

}  // namespace accel_emu
