// abi_copy.h - handing one of the ABI's versioned structs (those that begin with struct_size) to a
// caller compiled against another version of it.
#pragma once

#include <cstring>

namespace accel_kit {

// Copies `value` to *out as far as both know the struct, keeping the caller's struct_size.
template <class AbiStruct>
void copy_to_caller(AbiStruct value, AbiStruct* out) {
    value.struct_size = out->struct_size;
    memcpy(out, &value, out->struct_size < sizeof value ? out->struct_size : sizeof value);
}

}  // namespace accel_kit
