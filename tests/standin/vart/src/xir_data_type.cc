// xir_data_type.cc - xir::DataType: names ("xint8") both ways, and the types of C++ element types.
#include <cctype>

#include "fatal.h"
#include "xir/util/data_type.hpp"

namespace xir {
namespace {
// Longest names first where one is the other's suffix ("xint" before "int", "bfloat" before "float").
constexpr struct {
    const char* name;
    DataType::Type type;
} kNames[] = {{"xuint", DataType::XUINT},    {"xint", DataType::XINT},     {"uint", DataType::UINT},
              {"int", DataType::INT},        {"bfloat", DataType::BFLOAT}, {"float", DataType::FLOAT},
              {"unknown", DataType::UNKNOWN}};
}  // namespace

DataType::DataType() : type(UNKNOWN), bit_width(0) {}

DataType::DataType(const Type& type, const std::int32_t& bit_width) : type(type), bit_width(bit_width) {}

DataType::DataType(const std::string& text) : DataType() {
    std::string lower;
    for (char c : text) lower += (char)std::tolower((unsigned char)c);
    for (const auto& n : kNames) {
        const std::string name = n.name;
        if (lower.compare(0, name.size(), name) != 0) continue;
        const std::string digits = lower.substr(name.size());
        if (digits.empty() || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos) break;
        type = n.type;
        bit_width = std::stoi(digits);
        return;
    }
    standin_vart::fatal("\"%s\" is not a data type", text.c_str());
}

const bool DataType::valid() const { return type != UNKNOWN && bit_width > 0; }

const std::string DataType::to_string() const {
    for (const auto& n : kNames)
        if (n.type == type) return n.name + std::to_string(bit_width);
    return "unknown" + std::to_string(bit_width);
}

bool operator==(const DataType& lhs, const DataType& rhs) {
    return lhs.type == rhs.type && lhs.bit_width == rhs.bit_width;
}
bool operator!=(const DataType& lhs, const DataType& rhs) { return !(lhs == rhs); }

template <>
DataType create_data_type<float>() {
    return {DataType::FLOAT, 32};
}
template <>
DataType create_data_type<double>() {
    return {DataType::FLOAT, 64};
}
template <>
DataType create_data_type<char>() {
    return {DataType::INT, 8};
}
template <>
DataType create_data_type<std::int16_t>() {
    return {DataType::INT, 16};
}
template <>
DataType create_data_type<std::int32_t>() {
    return {DataType::INT, 32};
}
template <>
DataType create_data_type<std::int64_t>() {
    return {DataType::INT, 64};
}
template <>
DataType create_data_type<unsigned char>() {
    return {DataType::UINT, 8};
}
template <>
DataType create_data_type<std::uint16_t>() {
    return {DataType::UINT, 16};
}
template <>
DataType create_data_type<std::uint32_t>() {
    return {DataType::UINT, 32};
}
template <>
DataType create_data_type<std::uint64_t>() {
    return {DataType::UINT, 64};
}

}  // namespace xir
