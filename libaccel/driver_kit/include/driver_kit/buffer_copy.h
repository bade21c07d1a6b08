// buffer_copy.h - the checks and copies of accel_buffer_write/_read/_write_strided that every driver
// does the same way: ranges, the byte size of the dense array a strided source becomes, the copy.
#pragma once

#include <cstdint>

namespace accel_kit {

// True when bytes [offset, offset + size) all lie in `total` bytes (computed without overflowing).
inline bool range_inside(uint64_t offset, uint64_t size, uint64_t total) {
    return offset <= total && size <= total - offset;
}

enum class DenseSize { Ok, NegativeDim, Overflow };

// The bytes of a dense array of `shape` (ndim dims) of `element_size`-byte elements, into *bytes; on a
// negative dimension its index goes to *bad_dim; Overflow when the size does not fit in 64 bits.
DenseSize dense_bytes(uint32_t ndim, const int64_t* shape, uint64_t element_size, uint64_t* bytes, uint32_t* bad_dim);

// Copies the array at `src` (shape, byte strides) densely, in C order, to `dst`.
void copy_strided(uint8_t* dst, const uint8_t* src, uint32_t ndim, const int64_t* shape, const int64_t* strides,
                  uint64_t element_size);

}  // namespace accel_kit
