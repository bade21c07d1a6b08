// buffer_copy.cc - see buffer_copy.h.
#include "driver_kit/buffer_copy.h"

#include <cstring>

#include "accel/accel.h"

namespace accel_kit {

DenseSize dense_bytes(uint32_t ndim, const int64_t* shape, uint64_t element_size, uint64_t* bytes, uint32_t* bad_dim) {
    uint64_t total = element_size;
    for (uint32_t i = 0; i < ndim; i++) {
        if (shape[i] < 0) {
            *bad_dim = i;
            return DenseSize::NegativeDim;
        }
        if (shape[i] != 0 && total > UINT64_MAX / (uint64_t)shape[i]) return DenseSize::Overflow;
        total *= (uint64_t)shape[i];
    }
    *bytes = total;
    return DenseSize::Ok;
}

void copy_strided(uint8_t* dst, const uint8_t* src, uint32_t ndim, const int64_t* shape, const int64_t* strides,
                  uint64_t element_size) {
    // Merge trailing dims that are contiguous in the source into one run, copied with memcpy.
    uint64_t run = element_size;
    int inner = (int)ndim;
    while (inner > 0 && strides[inner - 1] == (int64_t)run) {
        run *= (uint64_t)shape[inner - 1];
        inner--;
    }
    int64_t index[ACCEL_MAX_DIMS] = {0};
    uint64_t outer = 1;
    for (int i = 0; i < inner; i++) outer *= (uint64_t)shape[i];
    for (uint64_t n = 0; n < outer; n++) {
        int64_t off = 0;
        for (int i = 0; i < inner; i++) off += index[i] * strides[i];
        memcpy(dst, src + off, run);
        dst += run;
        for (int i = inner - 1; i >= 0; i--) {
            if (++index[i] < shape[i]) break;
            index[i] = 0;
        }
    }
}

}  // namespace accel_kit
