// qim2col.h - X in the layout the int8 kernels read (qgemm_impl.h's "view": unit (g, n), the 4 bytes of
// k-group g for column n, at base + off[g] + 4 * n), from the three sources the runs take: K rows of N
// (qgemm_wx), N rows of K (qgemm_xw), and a conv's input.
//
// A conv's input is never expanded into an im2col matrix. It is interleaved by 4 channels (one 4-byte unit
// per 4 channels at a pixel, already in B's space) into one copy per kernel column kj and row phase rp
// (input rows i * sh + rp), each row exactly OW units: unit ow of row i is input pixel
// (i * sh + rp - pt, ow * sw + kj * dw - pl), x_pad outside the input. Tap (ki, kj) of output (oh, ow) is
// then unit (oh + ki * dh / sh) * OW + ow of copy (rp = ki * dh % sh, kj): linear in the output position
// p = oh * OW + ow, so a kernel reads any run of outputs as one contiguous run of units. The copies cost
// kw / sw passes over the input instead of kh * kw for an im2col, and they are built once per run.
#pragma once

#include <cstdint>

#include "math/conv_geom.h"
#include "math/qgemm_impl.h"

namespace accel_emu {
namespace qk {

// The conv's copies of one run, and its k-group offsets (View's base is data). A big conv's copies are
// held a band of rows at a time (conv_x_band): rows [row0, row0 + Hq) of each copy.
struct ConvX {
    int64_t Hq;           // rows of a copy held
    int64_t row0;         // the first of them
    int64_t C4;           // 4-channel units per pixel
    int64_t plane;        // bytes of one unit plane of a copy (Hq * OW * 4)
    int64_t copy;         // bytes of one copy (C4 * plane)
    uint8_t* data;        // copies in order (rp, kj)
    uint8_t* stage;       // H * W units: one 4-channel plane interleaved, before shifting
    int64_t* off;         // [Kq]
};

// Output rows per band of a run over `rows` output rows (a thread's part of a conv, or all OH): all of them,
// or, when the copies would outgrow L2, as many as keep a band's rows (band + halo) within about a megabyte
// (at least 4 halos, so that rebuilding halos costs little).
int64_t conv_x_band(const ConvGeom& q, int64_t rows);
// Rows a band reads past its last output row's own: (kh - 1) * dh / sh.
int64_t conv_x_halo(const ConvGeom& q);
// Scratch bytes of a conv's copies for a run over `rows` output rows (a band of them), staging and offsets
// (64-byte aligned pieces).
int64_t conv_x_bytes(const ConvGeom& q, int64_t Kq, int64_t rows);
// Bytes of the staging alone (what a builder of a channel slice needs of its own: conv_x_slice).
int64_t conv_x_stage_bytes(const ConvGeom& q);
// Places cx in mem for a run over `rows` output rows (no writes: several threads may place the same copies).
void conv_x_place(const Header* h, const ConvGeom& q, int64_t rows, void* mem, ConvX* cx);
// Places cx and fills the offsets and the slack after the copies (once per copies); the builders below fill
// the copies.
void conv_x_layout(const Header* h, const ConvGeom& q, int64_t rows, void* mem, ConvX* cx);
// Sets to 0 the held rows from `end` (a row index, as the builders') that the kernels' last vectors of a band
// ending there may read: a band shorter than the rows held leaves them unbuilt, and their lanes are dropped,
// but they are read, so they hold defined bytes.
void conv_x_clear_after(const ConvGeom& q, const ConvX& cx, int64_t end);
// The 4-channel units [u0, u1) of cx as copies of their own (qs: q with the slice's channels, csx: cx's
// planes of those units, staging at `stage`), for the builders below with x at the slice's first channel
// (x + 4 * u0 * H * W): disjoint slices may be built at once, each with its own staging.
void conv_x_slice(const ConvGeom& q, const ConvX& cx, int64_t u0, int64_t u1, uint8_t* stage, ConvGeom* qs, ConvX* csx);
// Does some tap read row phase rp?
bool conv_phase_used(const ConvGeom& q, int64_t rp);
// Builds rows [i0, i1) of every copy of cx (laid out; row i held at i - row0) from x (the group's Cg
// channels): portable code, AVX-512 (the VNNI and AMX paths) and AVX2 (qim2col_avx2.cc), the same bytes.
// Output row oh reads rows oh .. oh + halo.
void conv_x_build(const Header* h, const ConvGeom& q, const uint8_t* x, const ConvX& cx, int64_t i0, int64_t i1);
void conv_x_build_avx512(const Header* h, const ConvGeom& q, const uint8_t* x, const ConvX& cx, int64_t i0, int64_t i1);
void conv_x_build_avx2(const Header* h, const ConvGeom& q, const uint8_t* x, const ConvX& cx, int64_t i0, int64_t i1);

// Columns [n0, n0 + nc) of qgemm_wx's X (K rows of ldx) or qgemm_xw's (N rows of ldx) into dst as
// [Kq][ld] units (ld >= nc, units past nc unset), so that off[g] = g * ld * 4.
void rows_to_units(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld, uint8_t* dst);
void rows_to_units_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld,
                          uint8_t* dst);
void cols_to_units(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld, uint8_t* dst);
void cols_to_units_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld,
                          uint8_t* dst);
// cols_to_units' k-groups past K / 4 only (a depth not a multiple of 4): the part the AVX-512 form leaves.
void cols_to_units_tail(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t ld,
                        uint8_t* dst);

// colsum[j] = sum over the k-groups of unit (g, p0 + j)'s bytes (int8 if the isa's B is signed), j < nc.
void view_colsums(const Header* h, const View& b, int64_t p0, int64_t nc, int32_t* colsum);
void view_colsums_avx512(const Header* h, const View& b, int64_t p0, int64_t nc, int32_t* colsum);

}  // namespace qk
}  // namespace accel_emu
