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

// Output element (i0, i1, ...) of a dense, C-order output shaped dims[0..ndim) is the input element
// at i0*strides[0] + i1*strides[1] + ... from the view's origin. Strides count elements and may be
// negative (a slice walking backwards) or 0 (a broadcast repeating one element).
struct StridedView {
    int ndim = 0;
    int64_t dims[kMaxDims] = {0};
    int64_t strides[kMaxDims] = {0};
};

// strides[i] of a dense, C-order tensor shaped dims[0..ndim), in elements.
void dense_strides(const int64_t* dims, int ndim, int64_t* strides);

// Writes the view into `out` (dense, not overlapping the input). `origin` is the input element
// (0, 0, ...) of the view; `esize` is the element size in bytes: 1, 2, 4 or 8.
void strided_copy(const void* origin, void* out, const StridedView& view, size_t esize);

}  // namespace kern
}  // namespace accel_emu
