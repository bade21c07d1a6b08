// logic.h - comparison, boolean logic and selection on the one broadcast implementation (math/broadcast.h):
// the kernels of compare, logic and where (ops/logic.cc: FORMAT.md ops 41-43). A bool is one byte, 0 or 1.
#pragma once

#include <cstdint>

#include "graph.h"
#include "op_codes.h"

namespace accel_emu {

// Y[i] = A op B (1 or 0), A and B of dtype ad.dtype (any but float16; floats compare as IEEE, NaN unordered)
// broadcast to Y's shape yd (which the caller has checked).
void compare_broadcast(CompareFn fn, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const void* A,
                       const void* B, uint8_t* Y);

// Y = A fn B over bools (a nonzero byte is true), fn and, or or xor, broadcast to Y's shape yd.
void logic_broadcast(LogicFn fn, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd, const uint8_t* A,
                     const uint8_t* B, uint8_t* Y);

// Y[i] = A[i] == 0 (1 or 0), n elements.
void logic_not(const uint8_t* A, uint8_t* Y, int64_t n);

// Z = C ? X : Y elementwise, C bool, X, Y and Z elements of `elem_size` bytes (1, 2, 4 or 8), all broadcast to
// Z's shape zd.
void where_broadcast(const TensorDesc& cd, const TensorDesc& xd, const TensorDesc& yd, const TensorDesc& zd,
                     size_t elem_size, const uint8_t* C, const void* X, const void* Y, void* Z);

}  // namespace accel_emu
