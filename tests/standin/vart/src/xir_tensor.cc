// xir_tensor.cc - the stand-in's xir::Tensor: a name, a shape, a data type and attributes; no producer op
// (the stand-in's graphs hold none).
#include "fatal.h"
#include "xir/tensor/tensor.hpp"
#include "xir/util/tool_function.hpp"

namespace standin_xir {
namespace {

class TensorImpl final : public xir::Tensor {
public:
    TensorImpl(const std::string& name, const std::vector<std::int32_t>& shape, const xir::DataType& type)
        : name_(name), shape_(shape), type_(type), attrs_(xir::Attrs::create()) {}

    using Tensor::get_attr;
    using Tensor::set_attr;

    const std::string get_name() const override { return name_; }
    const xir::Op* get_producer() const override { no_ops(); }
    xir::Op* get_producer() override { no_ops(); }
    const std::vector<std::int32_t> get_shape() const override { return shape_; }
    const std::vector<std::int32_t> get_dims() const override { return shape_; }
    const std::int32_t get_dim_num() const override { return (std::int32_t)shape_.size(); }
    const std::int32_t get_dim_size(std::int32_t idx) const override {
        if (idx < 0 || (std::size_t)idx >= shape_.size())
            standin_vart::fatal("tensor %s: dim %d of %zu", name_.c_str(), idx, shape_.size());
        return shape_[idx];
    }
    const std::int64_t get_element_num() const override {
        std::int64_t n = 1;
        for (std::int32_t d : shape_) n *= d;
        return n;
    }
    const xir::DataType& get_data_type() const override { return type_; }
    const std::int32_t get_bit_width() const override { return type_.bit_width; }
    const std::uint64_t get_data_size() const override {
        return (std::uint64_t)get_element_num() * (std::uint64_t)type_.bit_width / 8;
    }
    std::unique_ptr<xir::Attrs> get_attrs() const override { return xir::Attrs::clone(attrs_.get()); }
    xir::Tensor* set_attrs(std::unique_ptr<xir::Attrs> attrs) override {
        attrs_ = attrs ? std::move(attrs) : xir::Attrs::create();
        return this;
    }
    const bool has_attr(const std::string& key) const override { return attrs_->has_attr(key); }
    const xir::any get_attr(const std::string& key) const override {
        if (!attrs_->has_attr(key))
            standin_vart::fatal("tensor %s has no attribute \"%s\"", name_.c_str(), key.c_str());
        return attrs_->get_attr(key);
    }
    xir::Tensor* set_attr(const std::string& key, const xir::any& value) override {
        attrs_->set_attr(key, value);
        return this;
    }
    xir::Tensor* rename(const std::string& name) override {
        name_ = name;
        return this;
    }
    const std::string to_string(const std::string& delimiter, const std::string& left_bracket,
                                const std::string& right_bracket) const override {
        std::string shape;
        for (std::int32_t d : shape_) shape += (shape.empty() ? "" : delimiter + " ") + std::to_string(d);
        return "xir::Tensor" + left_bracket + "name = " + name_ + delimiter + " type = " + type_.to_string() +
               delimiter + " shape = " + left_bracket + shape + right_bracket + right_bracket;
    }

private:
    [[noreturn]] void no_ops() const {
        standin_vart::fatal("tensor %s: get_producer: the stand-in's graphs hold no ops", name_.c_str());
    }

    std::string name_;
    std::vector<std::int32_t> shape_;
    xir::DataType type_;
    std::unique_ptr<xir::Attrs> attrs_;
};

}  // namespace
}  // namespace standin_xir

namespace xir {

std::unique_ptr<Tensor> Tensor::create(const std::string& name, const std::vector<std::int32_t>& shape,
                                       const DataType& data_type) {
    return std::make_unique<standin_xir::TensorImpl>(name, shape, data_type);
}

std::unique_ptr<Tensor> Tensor::create(const std::string& name, const std::vector<std::int32_t>& shape,
                                       const DataType::Type& data_type, const std::int32_t bit_width) {
    return create(name, shape, DataType(data_type, bit_width));
}

std::unique_ptr<Tensor> Tensor::clone(const Tensor* tensor) { return clone(tensor, tensor->get_name()); }

std::unique_ptr<Tensor> Tensor::clone(const Tensor* tensor, const std::string& name) {
    auto copy = create(name, tensor->get_shape(), tensor->get_data_type());
    copy->set_attrs(tensor->get_attrs());
    return copy;
}

bool TensorLexicographicalOrder(Tensor* a, Tensor* b) { return a->get_name() < b->get_name(); }

}  // namespace xir
