// data_type.hpp - xir::DataType, the element type of an xir::Tensor (stand-in, our own text with the
// vendor's names and values).
#pragma once

#include <cstdint>
#include <string>

#include "xir/util/standin_export.hpp"

namespace xir {

struct XIR_STANDIN_API DataType {
    // XINT/XUINT are the DPU's fixed-point integers: the value is q * 2^-fix_point (see Tensor).
    enum Type { INT, UINT, XINT, XUINT, FLOAT, BFLOAT, UNKNOWN };

    DataType() = default;
    DataType(Type type, std::int32_t bit_width) : type(type), bit_width(bit_width) {}

    bool valid() const { return type != UNKNOWN && bit_width > 0; }
    std::string to_string() const;  // "xint8", "float32", ...

    bool operator==(const DataType& other) const { return type == other.type && bit_width == other.bit_width; }
    bool operator!=(const DataType& other) const { return !(*this == other); }

    Type type = UNKNOWN;
    std::int32_t bit_width = 0;
};

}  // namespace xir
