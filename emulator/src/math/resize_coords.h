// resize_coords.h - ONNX Resize's mapping of output coordinates to input coordinates along one axis, as
// tables resize.cc fills planes from (resize_coords.cc).
#pragma once

#include <cstdint>

#include "op_codes.h"  // ResizeCoord, NearestRounding

namespace accel_emu {
namespace resize {

struct Params {
    ResizeCoord coord;
    NearestRounding round;
    float scale;  // > 0 and finite; exactly 1 means output i is input i (then in == out)
    int64_t in, out;
};

// Input index i0 weighted w0 plus input index i1 weighted w1.
struct LinearTap {
    int64_t i0, i1;
    float w0, w1;
};

// idx[o] = the input index output o copies, for o < p.out.
void nearest_table(const Params& p, int64_t* idx);
// taps[o] = the two input indices output o interpolates and their weights, for o < p.out.
void linear_table(const Params& p, LinearTap* taps);

}  // namespace resize
}  // namespace accel_emu
