// options.cc - see options.h.
#include "driver_kit/options.h"

namespace accel_kit {

std::vector<std::string> split_options(const std::string& text) {
    std::vector<std::string> items;
    size_t pos = 0;
    while (pos <= text.size() && !text.empty()) {
        size_t comma = text.find(',', pos);
        items.push_back(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        pos = comma == std::string::npos ? text.size() + 1 : comma + 1;
    }
    return items;
}

}  // namespace accel_kit
