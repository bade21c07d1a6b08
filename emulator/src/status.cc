#include "status.h"

#include <cstdarg>
#include <cstdio>

namespace accel_emu {

static const accel_host_api* g_host = nullptr;

void set_host(const accel_host_api* host) { g_host = host; }

accel_status fail(accel_status status, const std::string& message) {
    if (g_host && g_host->set_error) g_host->set_error(status, message.c_str());
    return status;
}

std::string format(const char* fmt, ...) {
    char buffer[1024];
    va_list args;
    va_start(args, fmt);
    vsnprintf(buffer, sizeof buffer, fmt, args);
    va_end(args);
    return buffer;
}


}  // namespace accel_emu
