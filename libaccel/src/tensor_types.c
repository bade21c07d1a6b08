/* tensor_types.c - facts about dtypes, and the version queries. */
#include "internal.h"

ACCEL_API size_t accel_dtype_size(accel_dtype dtype) {
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

ACCEL_API const char* accel_dtype_name(accel_dtype dtype) {
    switch (dtype) {
        case ACCEL_DTYPE_FLOAT32: return "float32";
        case ACCEL_DTYPE_FLOAT16: return "float16";
        case ACCEL_DTYPE_INT8: return "int8";
        case ACCEL_DTYPE_UINT8: return "uint8";
        case ACCEL_DTYPE_INT16: return "int16";
        case ACCEL_DTYPE_INT32: return "int32";
        case ACCEL_DTYPE_INT64: return "int64";
        case ACCEL_DTYPE_UINT16: return "uint16";
        case ACCEL_DTYPE_UINT32: return "uint32";
        case ACCEL_DTYPE_UINT64: return "uint64";
        case ACCEL_DTYPE_BOOL: return "bool";
        default: return "unknown";
    }
}

ACCEL_API uint32_t accel_abi_version(void) { return ACCEL_ABI_VERSION; }
ACCEL_API const char* accel_version_string(void) { return ACCEL_VERSION_STRING; }
