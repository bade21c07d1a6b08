// qim2col.h - X's panels for the int8 GEMM (layout in qgemm_impl.h), from the three sources the runs take:
// K rows of N (qgemm_wx), N rows of K (qgemm_xw), and a conv's input, never expanded into an im2col matrix.
//
// A conv's input is first interleaved by 4 channels ("xi": one 4-byte unit per 4 channels at a pixel, the
// bytes already in B's space, the padding ring already x_pad), split by stride into phases: phase (rp, cp)
// holds the padded pixels (i * sh + rp, j * sw + cp) at (i, j). Tap (ki, kj) of output (oh, ow) is then
// phase ((ki * dh) % sh, (kj * dw) % sw), pixel (oh + ki * dh / sh, ow + kj * dw / sw): a panel row is a
// few contiguous runs of units, one per output row the panel's columns cross, copied without any test.
// That costs one pass over the input instead of kh * kw passes for a gathered im2col.
#pragma once

#include <cstdint>

#include "math/conv_geom.h"
#include "math/qgemm_impl.h"

namespace accel_emu {
namespace qk {

// The interleaved input of one conv run. Offsets are in bytes from data.
struct ConvXi {
    int64_t Hq, Wq;       // a phase's pixels
    int64_t C4;           // 4-channel units per pixel
    int64_t plane;        // bytes of one unit plane (Hq * Wq * 4)
    int64_t phase;        // bytes of one phase (C4 * plane)
    int64_t OW;
    uint8_t* data;
    int64_t* off;         // [Kq]: k-group g's unit for output (0, 0); output (oh, ow) adds (oh * Wq + ow) * 4
};

// Scratch bytes of the interleaved input and its offsets (without alignment slack).
int64_t conv_xi_bytes(const ConvGeom& q, int64_t Kq);
// Lays xi out in mem (conv_xi_bytes, 64-byte aligned) and fills it from x (the group's Cg channels).
void conv_xi_build(const Header* h, const ConvGeom& q, const uint8_t* x, void* mem, ConvXi* xi);

// The layout and offsets of xi in mem, without its contents; which phases some tap reads.
void conv_xi_layout(const Header* h, const ConvGeom& q, void* mem, ConvXi* xi);
bool conv_phase_used(const ConvGeom& q, int64_t rp, int64_t cp);

// Panels for columns [n0, n0 + nc) into dst (ceil(nc / nr) panels of Kg * nr * 4 bytes): portable code.
void panels_rows(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t nr, uint8_t* dst);
void panels_cols(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t nr, uint8_t* dst);
void panels_conv(const Header* h, const ConvXi& xi, int64_t p0, int64_t nc, int64_t nr, uint8_t* dst);
// colsum[j] = sum over the real k-groups of column j's bytes (int8 if h's B is signed), j < nc.
void panel_colsums(const Header* h, const uint8_t* panels, int64_t nc, int64_t nr, int32_t* colsum);

// The same with AVX-512 (the VNNI and AMX paths; x86-64 builds only).
void panels_rows_avx512(const Header* h, const uint8_t* x, int64_t ldx, int64_t n0, int64_t nc, int64_t nr,
                        uint8_t* dst);
void panels_conv_avx512(const Header* h, const ConvXi& xi, int64_t p0, int64_t nc, int64_t nr, uint8_t* dst);
void conv_xi_build_avx512(const Header* h, const ConvGeom& q, const uint8_t* x, void* mem, ConvXi* xi);
void panel_colsums_avx512(const Header* h, const uint8_t* panels, int64_t nc, int64_t nr, int32_t* colsum);

// One output row's run of a panel's columns: n outputs of row oh from ow0, at panel column col.
struct Segment {
    int64_t src;   // byte offset of the run's first unit, (oh * Wq + ow0) * 4
    int64_t col, n;
};
// The runs of columns [p, p + n) (n <= nr); returns their count.
int conv_segments(const ConvXi& xi, int64_t p, int64_t n, Segment* seg);

}  // namespace qk
}  // namespace accel_emu
