// fatal.cc - see fatal.h. STANDIN_FATAL_PREFIX is set per library (CMakeLists.txt).
#include "fatal.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace standin_vart {

void fatal(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::fputs("F " STANDIN_FATAL_PREFIX ": ", stderr);
    std::vfprintf(stderr, fmt, args);
    std::fputc('\n', stderr);
    va_end(args);
    std::abort();
}

}  // namespace standin_vart
