// dtypes.h - the emulator's facts about accel_dtype codes. (A driver does not link libaccel, so it
// cannot call accel_dtype_size; this is the driver's one copy of the table.)
#pragma once

#include <cstddef>

#include "accel/accel.h"

namespace accel_emu {

// Bytes per element of `dtype`; 0 for a code this version does not know.
inline size_t dtype_size(int64_t dtype) {
    switch (dtype) {
        case ACCEL_DTYPE_FLOAT32:
        case ACCEL_DTYPE_INT32:
        case ACCEL_DTYPE_UINT32: return 4;
        case ACCEL_DTYPE_FLOAT16:
        case ACCEL_DTYPE_INT16:
        case ACCEL_DTYPE_UINT16: return 2;
        case ACCEL_DTYPE_INT8:
        case ACCEL_DTYPE_UINT8:
        case ACCEL_DTYPE_BOOL: return 1;
        case ACCEL_DTYPE_INT64:
        case ACCEL_DTYPE_UINT64: return 8;
        default: return 0;
    }
}

// "float32", ... for messages; "unknown" for a code this version does not know.
inline const char* dtype_name(int64_t dtype) {
    static const char* const names[] = {"unknown", "float32", "float16", "int8",   "uint8",  "int16",
                                        "int32",   "int64",   "uint16",  "uint32", "uint64", "bool"};
    return dtype >= 0 && dtype <= ACCEL_DTYPE_BOOL ? names[dtype] : "unknown";
}

}  // namespace accel_emu
