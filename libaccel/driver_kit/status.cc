// status.cc - see status.h.
#include "driver_kit/status.h"

#include <cstdarg>
#include <cstdio>
#include <vector>

namespace accel_kit {

namespace {
const accel_host_api* g_host = nullptr;
const char* g_prefix = "";
}  // namespace

void set_host(const accel_host_api* host, const char* prefix) {
    g_host = host;
    g_prefix = prefix;
}

accel_status report(accel_status status, const std::string& message) {
    if (g_host && g_host->set_error) g_host->set_error(status, message.c_str());
    return status;
}

accel_status fail(accel_status status, const std::string& message) {
    return report(status, *g_prefix ? g_prefix + message : message);
}

std::string format(const char* fmt, ...) {
    va_list args, again;
    va_start(args, fmt);
    va_copy(again, args);
    int n = vsnprintf(nullptr, 0, fmt, args);
    va_end(args);
    std::vector<char> text(n > 0 ? (size_t)n + 1 : 1, '\0');
    if (n > 0) vsnprintf(text.data(), text.size(), fmt, again);
    va_end(again);
    return std::string(text.data());
}

}  // namespace accel_kit
