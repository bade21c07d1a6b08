// handle.cc - see handle.h.
#include "driver_kit/handle.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

#include "driver_kit/status.h"

namespace accel_kit {

namespace {
std::atomic<int> g_process{0};

void after_fork_in_child() { g_process.store(static_cast<int>(getpid()), std::memory_order_relaxed); }

int start_watching() {
    // Registered once per driver library; glibc drops the handler if the library is ever unloaded.
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
    after_fork_in_child();
    return 0;
}
}  // namespace

int current_process() {
    static const int watching = start_watching();
    (void)watching;
    return g_process.load(std::memory_order_relaxed);
}

accel_status check_process(const void* handle, const char* fn) {
    const int made_in = static_cast<const HandleHeader*>(handle)->process;
    if (made_in == current_process()) return ACCEL_OK;
    return fail(ACCEL_ERR_CLOSED, format("%s: the handle was made in process %d, before fork(); a device does not "
                                         "cross into a child process: open the device again in the child",
                                         fn, made_in));
}

}  // namespace accel_kit
