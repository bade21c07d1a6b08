// attrs.hpp - xir::Attrs, the named attributes of graphs, subgraphs and tensors (stand-in). The value
// types are those of XIR's serialized AttrValue, as XIR's C++ API gives them: scalars, std::string, bytes
// (std::vector<char>), their vectors and std::map<std::string, ...> of them. Reading an attribute that is
// missing or of another type ends the process, as XIR's UNI_LOG_FATAL does.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "xir/util/standin_export.hpp"

namespace xir {

class XIR_STANDIN_API Attrs {
  public:
    using Bytes = std::vector<char>;
    template <typename T>
    using Map = std::map<std::string, T>;
    using Value = std::variant<bool, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t, float, double,
                               std::string, Bytes, std::vector<bool>, std::vector<std::int32_t>,
                               std::vector<std::uint32_t>, std::vector<std::int64_t>, std::vector<std::uint64_t>,
                               std::vector<float>, std::vector<double>, std::vector<std::string>, std::vector<Bytes>,
                               Map<std::int32_t>, Map<std::uint32_t>, Map<std::int64_t>, Map<std::uint64_t>,
                               Map<std::string>, Map<Bytes>, Map<std::vector<std::int32_t>>,
                               Map<std::vector<std::uint32_t>>, Map<std::vector<std::int64_t>>,
                               Map<std::vector<std::uint64_t>>, Map<std::vector<std::string>>>;

    static std::unique_ptr<Attrs> create() { return std::make_unique<Attrs>(); }

    bool has_attr(const std::string& key) const { return values_.count(key) != 0; }

    template <typename Dtype>
    const Dtype get_attr(const std::string& key) const {
        auto it = values_.find(key);
        const Dtype* value = it == values_.end() ? nullptr : std::get_if<Dtype>(&it->second);
        if (!value) {
            std::fprintf(stderr, "F xir: attribute \"%s\" %s\n", key.c_str(),
                         it == values_.end() ? "does not exist" : "has another type");
            std::abort();
        }
        return *value;
    }

    template <typename Dtype>
    Attrs* set_attr(const std::string& key, const Dtype& value) {
        values_[key] = value;
        return this;
    }

    std::vector<std::string> get_keys() const {
        std::vector<std::string> keys;
        for (const auto& kv : values_) keys.push_back(kv.first);
        return keys;
    }

  private:
    std::map<std::string, Value> values_;
};

}  // namespace xir
