// move_util.h - what the ops that only move data share: the check that an input keeps the output's
// dtype, and the engine that writes a dense output from a strided view of its input (slice, expand and
// transpose: FORMAT.md ops 19, 25, 13), for any element size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "graph.h"

namespace accel_emu {
namespace kern {

// True if `x` has `y`'s dtype; else false with "<op>: <what> dtype <x> differs from output dtype <y>".
bool same_dtype(const TensorDesc& x, const TensorDesc& y, const char* op, const char* what, std::string* err);

// strides[i] of a dense, C-order tensor shaped dims[0..ndim), in elements.
void dense_strides(const int64_t* dims, int ndim, int64_t* strides);

// Fills `out`, dense and shaped (and typed) as `y`, from a strided view of an input that does not
// overlap it: output element (i0, i1, ...) is the input element at i0*strides[0] + i1*strides[1] + ...
// from `origin`. Strides count elements and may be negative (a slice walking backwards) or 0 (a
// broadcast repeating one element).
void strided_copy(const void* origin, const int64_t* strides, const TensorDesc& y, void* out);

}  // namespace kern
}  // namespace accel_emu
