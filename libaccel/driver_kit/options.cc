// options.cc - see options.h.
#include "driver_kit/options.h"

#include "uri_grammar.h"

namespace accel_kit {

std::vector<OptionItem> split_options(const std::string& text) {
    const char* base = text.data();
    std::vector<accel_uri_item> spans(accel_uri_grammar_items(base, base, text.size(), nullptr, 0));
    accel_uri_grammar_items(base, base, text.size(), spans.data(), spans.size());
    std::vector<OptionItem> items;
    items.reserve(spans.size());
    for (const accel_uri_item& span : spans) {
        OptionItem item;
        uint64_t end = span.has_value ? span.value_offset + span.value_length : span.key_offset + span.key_length;
        item.text = text.substr(span.key_offset, end - span.key_offset);
        item.key = text.substr(span.key_offset, span.key_length);
        item.value = text.substr(span.value_offset, span.value_length);
        item.has_value = span.has_value != 0;
        items.push_back(std::move(item));
    }
    return items;
}

}  // namespace accel_kit
