// xir_attrs.cc - the stand-in's xir::Attrs: values by key, in key order.
#include <map>

#include "fatal.h"
#include "xir/attrs/attrs.hpp"

namespace standin_xir {
namespace {

class AttrsImpl final : public xir::Attrs {
public:
    bool has_attr(const std::string& key, const std::type_info& type_id) const override {
        const auto it = values_.find(key);
        return it != values_.end() && (type_id == typeid(void) || it->second.type() == type_id);
    }
    const xir::any& get_attr(const std::string& key) const override { return find(key)->second; }
    xir::any& get_attr(const std::string& key) override {
        find(key);
        return values_[key];
    }
    std::vector<std::string> get_keys() const override {
        std::vector<std::string> keys;
        for (const auto& kv : values_) keys.push_back(kv.first);
        return keys;
    }
    xir::Attrs* set_attr(const std::string& key, const xir::any& value) override {
        values_[key] = value;
        return this;
    }
    bool del_attr(const std::string& key) override { return values_.erase(key) != 0; }
    std::string debug_info() const override {
        std::string out = "{";
        for (const auto& kv : values_) out += (out.size() > 1 ? ", " : "") + kv.first + ": " + kv.second.type().name();
        return out + "}";
    }

private:
    // XIR ends the process on a missing key (UNI_LOG_FATAL).
    std::map<std::string, xir::any>::const_iterator find(const std::string& key) const {
        const auto it = values_.find(key);
        if (it == values_.end()) standin_vart::fatal("attribute \"%s\" does not exist", key.c_str());
        return it;
    }

    std::map<std::string, xir::any> values_;
};

}  // namespace
}  // namespace standin_xir

namespace xir {

std::unique_ptr<Attrs> Attrs::create() { return std::make_unique<standin_xir::AttrsImpl>(); }

std::unique_ptr<Attrs> Attrs::clone(Attrs* attr) {
    auto copy = create();
    if (attr)
        for (const std::string& key : attr->get_keys()) copy->set_attr(key, attr->get_attr(key));
    return copy;
}

int Attrs::cmp(const any&, const any&) {
    standin_vart::fatal("Attrs::cmp: the stand-in does not order attribute values");
}

}  // namespace xir
