// data_type.hpp - xir::DataType, the element type of an xir::Tensor (stand-in, our own text with Vitis AI
// 3.5's names, values and signatures; the const return types are XIR's).
#pragma once

#include <climits>
#include <cstdint>
#include <string>

#include "xir/XirExport.hpp"

namespace xir {

struct XIR_DLLESPEC DataType {
    // XINT/XUINT are the DPU's fixed-point integers: the value is q * 2^-fix_point (see Tensor).
    enum Type { INT, UINT, XINT, XUINT, FLOAT, BFLOAT, UNKNOWN };

    DataType();  // UNKNOWN, 0 bits
    // "xint8", "FLOAT32", ...: a type name (any case) and its bit width. Anything else ends the process.
    DataType(const std::string& type);
    DataType(const Type& type, const std::int32_t& bit_width);

    const bool valid() const;
    const std::string to_string() const;  // "xint8", "float32", ...

    XIR_DLLESPEC friend bool operator==(const DataType& lhs, const DataType& rhs);
    XIR_DLLESPEC friend bool operator!=(const DataType& lhs, const DataType& rhs);

    Type type;
    std::int32_t bit_width;
};

template <typename T>
const std::int32_t& get_bit_width() {
    static constexpr std::int32_t bits = sizeof(T) * CHAR_BIT;
    return bits;
}

// The DataType of a C++ element type; UNKNOWN for the types libxir does not name.
template <typename T>
DataType create_data_type() {
    return DataType{"UNKNOWN0"};
}
template <>
XIR_DLLESPEC DataType create_data_type<float>();
template <>
XIR_DLLESPEC DataType create_data_type<double>();
template <>
XIR_DLLESPEC DataType create_data_type<char>();
template <>
XIR_DLLESPEC DataType create_data_type<std::int16_t>();
template <>
XIR_DLLESPEC DataType create_data_type<std::int32_t>();
template <>
XIR_DLLESPEC DataType create_data_type<std::int64_t>();
template <>
XIR_DLLESPEC DataType create_data_type<unsigned char>();
template <>
XIR_DLLESPEC DataType create_data_type<std::uint16_t>();
template <>
XIR_DLLESPEC DataType create_data_type<std::uint32_t>();
template <>
XIR_DLLESPEC DataType create_data_type<std::uint64_t>();

}  // namespace xir
