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

// Bytes of scratch a resize of geometry q needs (its coordinate tables, and two rows when linear).
size_t resize_scratch_bytes(const ResizeGeom& q);

// Y[planes][OH][OW] from X[planes][H][W], nearest or linear (q.linear); scratch has
// resize_scratch_bytes(q) bytes, 64-byte aligned.
void resize_nearest(const ResizeGeom& q, const float* X, float* Y, void* scratch);
void resize_linear(const ResizeGeom& q, const float* X, float* Y, void* scratch);

}  // namespace accel_emu
