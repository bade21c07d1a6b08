// attrs.hpp - xir::Attrs, named attribute values (stand-in): an abstract interface with Vitis AI 3.5's virtual
// functions in its order; Attrs::create() gives the stand-in's own implementation. Values are xir::any holding
// what XIR's serialized AttrValue becomes (scalars, std::string, bytes as std::vector<char>, their vectors and
// string-keyed maps). get_attr<T> of a missing key ends the process (XIR's UNI_LOG_FATAL); of another type it
// throws std::bad_any_cast, as XIR's any_cast does.
#pragma once

#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include "xir/XirExport.hpp"
#include "xir/util/any.hpp"

namespace xir {

class XIR_DLLESPEC Attrs {
  public:
    Attrs() = default;
    Attrs(const Attrs& other) = default;
    virtual ~Attrs() = default;

    static std::unique_ptr<Attrs> create();
    static std::unique_ptr<Attrs> clone(Attrs* attr);

    template <typename Dtype>
    const Dtype get_attr(const std::string& key) const {
        return xir::stdx::any_cast<Dtype>(this->get_attr(key));
    }
    template <typename Dtype>
    Attrs* set_attr(const std::string& key, const Dtype& value) {
        this->set_attr(key, xir::any{value});
        return this;
    }

    // With a type: the value must also hold that type.
    virtual bool has_attr(const std::string& key, const std::type_info& type_id = typeid(void)) const = 0;
    virtual const xir::any& get_attr(const std::string& key) const = 0;
    virtual xir::any& get_attr(const std::string& key) = 0;
    virtual std::vector<std::string> get_keys() const = 0;
    virtual Attrs* set_attr(const std::string& key, const xir::any& value) = 0;
    virtual bool del_attr(const std::string& key) = 0;
    virtual std::string debug_info() const = 0;

    // XIR orders attribute values; the stand-in cannot (it ends the process).
    static int cmp(const any& a, const any& b);
};

}  // namespace xir
