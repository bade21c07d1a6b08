// broadcast.h - the elementwise binary ops with numpy broadcasting (ops/binary.cc: FORMAT.md ops 4-7,
// 21-23), float32, with a fused activation.
#pragma once

#include <cstdint>

#include "graph.h"

namespace accel_emu {

enum class BinOp { Add, Sub, Mul, Div, Pow, Min, Max };

// Dim i of `t` with `t` right-aligned to rank r (1 where t has no such dim).
inline int64_t broadcast_dim(const TensorDesc& t, int r, int i) {
    const int j = i - (r - t.ndim);
    return j >= 0 ? t.dims[j] : 1;
}

// Y = act(A op B), A shaped ad and B shaped bd broadcast to Y's shape yd (which the caller has checked).
void binary_broadcast(BinOp op, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const float* A,
                      const float* B, float* Y, Act act, float alpha, float beta);

}  // namespace accel_emu
