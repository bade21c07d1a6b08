// tensor.hpp - xir::Tensor (stand-in): a named tensor of a graph with its shape, element type and
// attributes. An abstract interface with Vitis AI 3.5's virtual functions, in its order and with its return
// types (so its vtable is XIR's: tests/standin/facts/vart_3.5.txt); Tensor::create gives the stand-in's own
// implementation. DPU tensors are XINT/XUINT with an int attribute "fix_point": the real value of an element
// q is q * 2^-fix_point (so a float input x becomes q = x * 2^fix_point). The stand-in's DPU also takes FLOAT
// (32-bit) tensors, unquantized (a stand-in liberty; see FORMAT.md). The stand-in's graphs hold no ops:
// get_producer ends the process.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "xir/XirExport.hpp"
#include "xir/attrs/attrs.hpp"
#include "xir/util/data_type.hpp"

namespace xir {

class Op;

class XIR_DLLESPEC Tensor {
  public:
    static std::unique_ptr<Tensor> create(const std::string& name, const std::vector<std::int32_t>& shape,
                                          const DataType& data_type);
    [[deprecated("use Tensor::create(name, shape, DataType)")]] static std::unique_ptr<Tensor> create(
        const std::string& name, const std::vector<std::int32_t>& shape, const DataType::Type& data_type,
        const std::int32_t bit_width);
    static std::unique_ptr<Tensor> clone(const Tensor* tensor);
    static std::unique_ptr<Tensor> clone(const Tensor* tensor, const std::string& name);

  public:
    virtual const std::string get_name() const = 0;
    virtual const Op* get_producer() const = 0;
    virtual Op* get_producer() = 0;
    virtual const std::vector<std::int32_t> get_shape() const = 0;
    [[deprecated("use get_shape()")]] virtual const std::vector<std::int32_t> get_dims() const = 0;
    [[deprecated("use get_shape().size()")]] virtual const std::int32_t get_dim_num() const = 0;
    [[deprecated("use get_shape().at(idx)")]] virtual const std::int32_t get_dim_size(std::int32_t idx) const = 0;
    virtual const std::int64_t get_element_num() const = 0;
    virtual const DataType& get_data_type() const = 0;
    [[deprecated("use get_data_type().bit_width")]] virtual const std::int32_t get_bit_width() const = 0;
    // Bytes: element count * bit width / 8.
    virtual const std::uint64_t get_data_size() const = 0;
    virtual std::unique_ptr<Attrs> get_attrs() const = 0;  // a copy
    virtual Tensor* set_attrs(std::unique_ptr<Attrs> attrs) = 0;
    virtual const bool has_attr(const std::string& key) const = 0;
    // A missing key ends the process.
    virtual const xir::any get_attr(const std::string& key) const = 0;
    virtual Tensor* set_attr(const std::string& key, const xir::any& value) = 0;

    // A value of another type ends the process, as XIR's does.
    template <typename Dtype>
    const Dtype get_attr(const std::string& key) const {
        const xir::any value = this->get_attr(key);
        if (const Dtype* typed = xir::stdx::any_cast<Dtype>(&value)) return *typed;
        std::fprintf(stderr, "F xir: tensor %s: attribute \"%s\" has another type\n", get_name().c_str(), key.c_str());
        std::abort();
    }
    template <typename Dtype>
    Tensor* set_attr(const std::string& key, const Dtype& value) {
        this->set_attr(key, xir::any{value});
        return this;
    }

    virtual Tensor* rename(const std::string& name) = 0;
    virtual const std::string to_string(const std::string& delimiter = ",", const std::string& left_bracket = "{",
                                        const std::string& right_bracket = "}") const = 0;

  public:
    virtual ~Tensor() = default;
};

}  // namespace xir
