// resize.h - nearest and bilinear resize of the H and W axes of NCHW planes (ops/resize.cc: FORMAT.md
// op 17).
#pragma once

#include <cstddef>
#include <cstdint>

#include "math/resize_coords.h"

namespace accel_emu {

// The geometry of a validated resize node.
struct ResizeGeom {
    int64_t planes, H, W, OH, OW;
    resize::Params ph, pw;  // per-axis coordinate parameters
    bool linear;
};

// Bytes of a resize's coordinate tables (a multiple of 64), and of the rows one worker's linear fill needs.
size_t resize_table_bytes(const ResizeGeom& q);
size_t resize_row_bytes(const ResizeGeom& q);

// Fills the coordinate tables (resize_table_bytes(q), 64-byte aligned) for resize_planes.
void resize_tables(const ResizeGeom& q, void* tables);

// Planes [p0, p1) of Y[planes][OH][OW] from X[planes][H][W], nearest or linear (q.linear), through the
// tables resize_tables made; rows has resize_row_bytes(q) bytes of the caller's own, 64-byte aligned.
// Each plane's values do not depend on the range it is filled in.
void resize_planes(const ResizeGeom& q, const float* X, float* Y, const void* tables, void* rows, int64_t p0,
                   int64_t p1);

}  // namespace accel_emu
