// strided_copy.h - the engine the ops that only move data share: it writes a dense output from a strided
// view of its input (slice, expand and transpose: FORMAT.md ops 19, 25, 13), for any element size.
#pragma once

#include <cstddef>
#include <cstdint>

#include "graph.h"

namespace accel_emu {

class Par;
namespace kern {

// strides[i] of a dense, C-order tensor shaped dims[0..ndim), in elements.
void dense_strides(const int64_t* dims, int ndim, int64_t* strides);

// Fills `out`, dense and shaped (and typed) as `y`, from a strided view of an input that does not
// overlap it: output element (i0, i1, ...) is the input element at i0*strides[0] + i1*strides[1] + ...
// from `origin`. Strides count elements and may be negative (a slice walking backwards) or 0 (a
// broadcast repeating one element).
void strided_copy(const void* origin, const int64_t* strides, const TensorDesc& y, void* out);
// The same, split across par's workers (any split moves the same bytes; this one depends on y's shape).
void strided_copy(const void* origin, const int64_t* strides, const TensorDesc& y, void* out, const Par& par);

}  // namespace kern
}  // namespace accel_emu
