// fatal.h - how the stand-in VART/XIR ends the process on a misuse, as the vendor's UNI_LOG_CHECK/FATAL
// (glog FATAL) does: a message on stderr ("F xir: " or "F vart: ", the library's), then std::abort(). Hidden:
// each library has its own copy and prefix.
#pragma once

namespace standin_vart {

[[noreturn]] __attribute__((visibility("hidden"))) void fatal(const char* fmt, ...)
    __attribute__((format(printf, 1, 2)));

}  // namespace standin_vart
