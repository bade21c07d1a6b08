// options.h - the options part of a device URI ("cores=2,pool=1G" of "emu:cores=2,pool=1G").
#pragma once

#include <string>
#include <vector>

namespace accel_kit {

// The comma-separated items of `text`, empty ones included ("a,,b": "a", "", "b"); none for "".
std::vector<std::string> split_options(const std::string& text);

}  // namespace accel_kit
