// tensor.hpp - xir::Tensor (stand-in): a named tensor of a graph with its shape, element type and
// attributes. DPU tensors are XINT/XUINT with an int attribute "fix_point": the real value of an
// element q is q * 2^-fix_point (so a float input x becomes q = x * 2^fix_point). The stand-in's DPU
// also takes FLOAT (32-bit) tensors, unquantized (a stand-in liberty; see FORMAT.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "xir/attrs/attrs.hpp"
#include "xir/util/data_type.hpp"
#include "xir/util/standin_export.hpp"

namespace xir {

class XIR_STANDIN_API Tensor {
  public:
    static std::unique_ptr<Tensor> create(const std::string& name, const std::vector<std::int32_t>& shape,
                                          const DataType& data_type);
    Tensor(const std::string& name, const std::vector<std::int32_t>& shape, const DataType& data_type);
    Tensor(const Tensor&) = delete;
    Tensor& operator=(const Tensor&) = delete;
    ~Tensor();

    const std::string get_name() const { return name_; }
    const std::vector<std::int32_t> get_shape() const { return shape_; }
    const DataType& get_data_type() const { return data_type_; }
    std::int64_t get_element_num() const;
    std::int64_t get_data_size() const;  // bytes: element count * bit_width / 8

    bool has_attr(const std::string& key) const { return attrs_.has_attr(key); }
    template <typename Dtype>
    const Dtype get_attr(const std::string& key) const {
        return attrs_.get_attr<Dtype>(key);
    }
    template <typename Dtype>
    Tensor* set_attr(const std::string& key, const Dtype& value) {
        attrs_.set_attr(key, value);
        return this;
    }

  private:
    std::string name_;
    std::vector<std::int32_t> shape_;
    DataType data_type_;
    Attrs attrs_;
};

}  // namespace xir
