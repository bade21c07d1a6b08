// qgemm_impl.h - what the files of the int8 GEMM (qgemm*.cc, qim2col.cc, qdepthwise.cc) share: the packed
// blob's header, the layout the kernels read X in, and each path's entry points. Not for callers: they use qgemm.h.
//
// The arithmetic of every path: the kernel sums S = sum_k A[m][k] * B[k][n] over bytes in the operand
// spaces its instruction wants, A = W - alpha (weights) and B = X - beta (activations, a byte xor). With
// u[m] = alpha - w_zero[m] and v = beta - x_zero,
//     acc = S + v * rowsumA[m] + u[m] * colsumB[n] + K * u[m] * v + bias[m]
// so the packed blob keeps rowc[m] = bias + v * rowsumA + K * u * v and colc[m] = u[m] (all uint32,
// wrapping: the sum is exact modulo 2^32, which is all acc is), and the column sums of B are taken only
// when some u[m] != 0 (not for int8 weights with zero point 0 on the VNNI path, the common case).
//
// Depth order: W's columns [C][taps] are packed as k-groups of 4 bytes, g = tap * C4 + c / 4 with
// C4 = ceil(C / 4) and byte c % 4, channels past C zero in A (so they add nothing whatever B holds there).
// That order makes a k-group of a conv "4 channels at one tap", which qconv reads as one 4-byte unit of an
// input interleaved by 4 channels (qim2col.h).
//
// X as the kernels read it (a "view"): unit (g, n), the 4 bytes of k-group g for column n, at
// base + off[g] + 4 * n. Built per run (qim2col.h): a conv reads its input's shifted copies in place,
// qgemm_wx and qgemm_xw a block of columns interleaved. Kernels may read up to 16 units past a run's
// last, never past the buffer's slack, and never store what those lanes compute.
#pragma once

#include <cstddef>
#include <cstdint>

#include "math/qgemm.h"

namespace accel_emu {
namespace qk {

constexpr uint32_t kMagic = 0x31504751;      // "QGP1"
constexpr uint32_t kDwMagic = 0x31574451;    // "QDW1"
constexpr int64_t kAlign = 64;

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }
inline int64_t ceil_div(int64_t v, int64_t m) { return (v + m - 1) / m; }
template <class T>
inline T* align_ptr(void* p) {
    const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + kAlign - 1) & ~static_cast<uintptr_t>(kAlign - 1);
    return reinterpret_cast<T*>(a);
}

// At offset 0 of every packed blob (qgemm and depthwise), followed by the per-row arrays (rowc, colc,
// scale, fbias and Fixed's pre, mult, post, nmult, npost: kRowArrays of them, each Mp long and 64-byte
// aligned) and, at w_off, the weights in the isa's layout.
struct Header {
    uint32_t magic;
    QIsa isa;
    QOut out;
    uint8_t w_signed, x_signed, y_signed;
    uint8_t colsum;   // some colc[m] != 0: the runs take B's column sums
    uint8_t x_flip;   // B = X ^ x_flip
    uint8_t x_pad;    // B's byte for a tap outside the input (x_zero ^ x_flip)
    uint8_t pad_[2];
    int32_t y_zero;
    float lo, hi;     // Q8 clamp, qmin - y_zero and qmax - y_zero
    int32_t ilo, ihi; // Fixed clamp, y_min - y_zero and y_max - y_zero
    int64_t M, K, taps, C;
    int64_t Mp;       // M rounded up to the isa's row tile
    int64_t Kq;       // k-groups with data: taps * C4
    int64_t Kg;       // k-groups packed: Kq rounded up to the isa's depth unit
    int64_t w_off;    // byte offset of the weights
};

constexpr int64_t kRowArrays = 9;
inline int64_t rows_bytes(int64_t Mp) { return round_up(Mp * 4, kAlign); }
inline int64_t header_bytes() { return round_up(sizeof(Header), kAlign); }
// The header and the per-row arrays.
inline int64_t head_bytes(int64_t Mp) { return header_bytes() + kRowArrays * rows_bytes(Mp); }
inline const int32_t* rowc(const Header* h) {
    return reinterpret_cast<const int32_t*>(reinterpret_cast<const char*>(h) + header_bytes());
}
inline const int32_t* colc(const Header* h) { return rowc(h) + rows_bytes(h->Mp) / 4; }
inline const float* scale(const Header* h) { return reinterpret_cast<const float*>(colc(h) + rows_bytes(h->Mp) / 4); }
inline const float* fbias(const Header* h) { return scale(h) + rows_bytes(h->Mp) / 4; }
// Fixed's arrays: pre, mult, post, nmult, npost (i = 0 .. 4).
inline const int32_t* fixed_arr(const Header* h, int i) {
    return reinterpret_cast<const int32_t*>(fbias(h) + (1 + i) * (rows_bytes(h->Mp) / 4));
}
inline const void* weights(const Header* h) { return reinterpret_cast<const char*>(h) + h->w_off; }

// Per isa: rows per weight tile, columns per register tile, depth unit in k-groups, and how A and B
// relate to W and X.
struct IsaTraits {
    int64_t mr, nr, kg_unit;
    bool b_signed;          // B is int8 (AMX) or uint8 (the others)
    int32_t alpha_w_s8;     // alpha for int8 W
    int32_t alpha_w_u8;     // alpha for uint8 W
};
IsaTraits traits(QIsa isa);

// Bytes of the isa's packed weights for Mp x Kg.
int64_t weight_bytes(QIsa isa, int64_t Mp, int64_t Kg);
// A[m][g][b] for row m < M, k-group g < Kq, byte b: W's value minus alpha, 0 for padding channels.
struct AView {
    const void* w;
    bool w_signed;
    int32_t alpha;
    int64_t M, K, taps, C, C4;
    int32_t at(int64_t m, int64_t g, int b) const;
};
// Writes the header and per-row constants of spec (W's columns as [K/taps][taps]) for isa with traits t,
// Mp rows and Kg k-groups, at out; returns the view of A the weights are packed from.
AView fill_header(QIsa isa, const IsaTraits& t, const QGemmSpec& spec, const void* w, int64_t taps, int64_t Mp,
                  int64_t Kg, void* out);
void pack_weights_portable(const AView& a, int64_t Mp, int64_t Kg, void* out);
void pack_weights_avx2(const AView& a, int64_t Mp, int64_t Kg, void* out);
void pack_weights_vnni(const AView& a, int64_t Mp, int64_t Kg, void* out);
void pack_weights_amx(const AView& a, int64_t Mp, int64_t Kg, void* out);
void pack_weights_neon(const AView& a, int64_t Mp, int64_t Kg, void* out);

// Where a block's results go: element (m, n) of the block at y[m * ldy + n] (wx) or y[n * ldy + m] (xw),
// elements of the output type (uint8/int8, int32 or float). n counts from the block's first column.
struct Out {
    void* y;
    int64_t ldy;
    bool xw;
};

struct View {
    const uint8_t* base;
    const int64_t* off;  // [Kq]
};

// Columns [p0, p0 + nc) of the view through the packed weights, colsum[0..nc) being their column sums
// when h->colsum, results to out (whose y is at the block's first column). scratch holds
// block_scratch_bytes(h, nc) bytes, 64-byte aligned.
int64_t block_scratch_bytes(const Header* h, int64_t nc);
int64_t amx_panel_bytes(const Header* h, int64_t nc);
void block_portable(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out);
void block_avx2(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out);
void block_vnni(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out,
                void* scratch);
void block_amx(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out,
               void* scratch);
// Neon and NeonDot (h->isa picks the kernel).
void block_neon(const Header* h, const View& b, int64_t p0, int64_t nc, const int32_t* colsum, const Out& out);

// The epilogue of one value, the definition every vector path matches.
inline uint32_t corrected(uint32_t s, const Header* h, int64_t m, const int32_t* colsum, int64_t n) {
    uint32_t a = s + static_cast<uint32_t>(rowc(h)[m]);
    if (h->colsum) a += static_cast<uint32_t>(colc(h)[m]) * static_cast<uint32_t>(colsum[n]);
    return a;
}
// Fixed's value of one corrected sum (qgemm.h); the vector paths match it.
inline int32_t fixed_value(int32_t acc, const Header* h, int64_t m) {
    const int32_t v = acc >> fixed_arr(h, 0)[m];
    const bool neg = v < 0;
    const int64_t p = static_cast<int64_t>(v) * (neg ? fixed_arr(h, 3)[m] : fixed_arr(h, 1)[m]);
    const int32_t s = neg ? fixed_arr(h, 4)[m] : fixed_arr(h, 2)[m];
    const int64_t r = s > 0 ? (p + (int64_t{1} << (s - 1))) >> s : p;
    return static_cast<int32_t>(r < h->ilo ? h->ilo : r > h->ihi ? h->ihi : r) + h->y_zero;
}
// One row of outputs, acc[0..n) for row m, into dst (n consecutive elements of the output type, or, with
// stride > 1, elements stride apart).
void epilogue_row(const Header* h, int64_t m, const int32_t* acc, int64_t n, void* dst, int64_t stride);

}  // namespace qk
}  // namespace accel_emu
