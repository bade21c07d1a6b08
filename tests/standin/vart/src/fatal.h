// fatal.h - how the stand-in VART ends the process on a misuse, as the vendor's UNI_LOG_CHECK/FATAL
// (glog FATAL) does: a message on stderr, then std::abort().
#pragma once

namespace standin_vart {

[[noreturn]] void fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace standin_vart
