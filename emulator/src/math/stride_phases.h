// stride_phases.h - a conv input split into its stride phases, for the kernels that read it at stride 1
// (depthwise_avx512.cc, conv_gemm.cc): phase (a, b) of a channel plane holds rows r * sh + a and
// columns c * sw + b of the zero-padded input, Wq columns per row, so that tap (ki, kj) of output (oh, ow)
// is phase (ki % sh, kj % sw) at row oh + ki / sh, column ow + kj / sw. With the phase rows laid end to
// end, output position oh * Wq + ow reads every tap at one fixed offset from it: a kernel runs over
// flattened rows (the Wq - OW columns past each row's end computed and dropped) with no bounds checks.
// Strides 1 and 2, no dilation.
#pragma once

#include <cstdint>

#include "math/conv_geom.h"

namespace accel_emu {

// Columns of each phase row: the outputs of a row and the farthest tap's reach past them.
inline int64_t phase_cols(const ConvGeom& q) { return q.OW + (q.kw - 1) / q.sw; }

// Phase rows one band of `out_rows` output rows reads.
inline int64_t phase_rows(const ConvGeom& q, int64_t out_rows) { return out_rows + (q.kh - 1) / q.sh; }

// Floats from tap (0, 0) to tap (ki, kj) in the phases of one channel, phase planes `plane` floats apart.
inline int64_t phase_tap_offset(const ConvGeom& q, int64_t ki, int64_t kj, int64_t Wq, int64_t plane) {
    return ((ki % q.sh) * q.sw + kj % q.sw) * plane + (ki / q.sh) * Wq + kj / q.sw;
}

// Floats each phase plane takes for a band of `out_rows` output rows of which `computed` flattened
// positions (at least out_rows * Wq) are computed: room for the rows, built in whole vectors, and for the
// farthest tap of the last position computed; a multiple of 16.
inline int64_t phase_plane_floats(const ConvGeom& q, int64_t out_rows, int64_t computed) {
    const int64_t Wq = phase_cols(q);
    const int64_t reach = computed + ((q.kh - 1) / q.sh) * Wq + (q.kw - 1) / q.sw;
    const int64_t built = phase_rows(q, out_rows) * Wq + 16;
    return ((reach > built ? reach : built) + 15) / 16 * 16;
}

// Phase rows [r0, r0 + rows) of every phase of one channel plane x[H][W]: phase (a, b) at
// dst + (a * sw + b) * plane, row r at (r - r0) * Wq. Rows are written in whole vectors: each may write up
// to 15 floats past its end (into the next row, or past the last: `plane` must leave that room). On x86-64
// AVX-512 (only for a CPU that has it); elsewhere plain C++.
void build_stride_phases(const ConvGeom& q, const float* x, int64_t r0, int64_t rows, int64_t Wq, int64_t plane,
                         float* dst);

// The same with AVX2 (stride_phases_avx2.cc; rows in vectors of 8): only for a CPU that has it.
void build_stride_phases_avx2(const ConvGeom& q, const float* x, int64_t r0, int64_t rows, int64_t Wq, int64_t plane,
                              float* dst);

}  // namespace accel_emu
