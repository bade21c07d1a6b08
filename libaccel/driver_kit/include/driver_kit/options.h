// options.h - the options part of a device URI ("cores=2,pool=1G" of "emu:cores=2,pool=1G"), split by
// the grammar libaccel's accel_uri_parse uses (libaccel/common/uri_grammar.c, compiled into the kit).
#pragma once

#include <string>
#include <vector>

namespace accel_kit {

// One comma-separated item of the options, split at its first '='.
struct OptionItem {
    std::string text;   // the whole item, for messages: "cores=2"
    std::string key;    // the bytes before the first '=' (all of them without one): "cores"
    std::string value;  // the bytes after it ("" without one): "2"
    bool has_value = false;
};

// The items of `text` in order, empty ones included ("a,,b": "a", "", "b"; "a,": "a", ""); none for "".
std::vector<OptionItem> split_options(const std::string& text);

}  // namespace accel_kit
