// pool.h - max and average pooling of NCHW planes, and the global average (ops/pooling.cc).
#pragma once

#include <cstdint>

namespace accel_emu {

// The geometry of a validated maxpool/avgpool node: input N, C, H, W; kernel, strides, pads (top, left,
// bottom, right), dilations; output OH, OW.
struct PoolGeom { int64_t N, C, H, W, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, OH, OW; };

// y[OH*OW] = the max over each window of x[H*W] (the lowest float for a window wholly in the padding).
void max_pool_plane(const PoolGeom& q, const float* x, float* y);
// The same over int8 or uint8 (the lowest value of the type for an empty window).
void max_pool_plane(const PoolGeom& q, const int8_t* x, int8_t* y);
void max_pool_plane(const PoolGeom& q, const uint8_t* x, uint8_t* y);

// y[OH*OW] = the average over each window of x[H*W]; the count includes the padding when include_pad
// (ONNX count_include_pad), and is 0 for a window wholly outside the input.
void avg_pool_plane(const PoolGeom& q, bool include_pad, const float* x, float* y);

// y[p] = the mean of x[p*n, (p+1)*n), p < planes.
void global_avg_pool(const float* x, float* y, int64_t planes, int64_t n);

}  // namespace accel_emu
