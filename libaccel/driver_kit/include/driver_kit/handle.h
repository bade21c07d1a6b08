// handle.h - what begins every handle a kit driver hands out: the loader's dispatch header, then the
// process the handle was made in.
//
// A handle made before fork() is the parent's: its device's threads, queues and locks did not cross
// into the child. So in a child every call on such a handle fails with ACCEL_ERR_CLOSED, naming the
// process, and retain/release do nothing (the child's copy of it is reclaimed with the child), while
// handles the child makes itself work as anywhere. driver_table.inc checks this before every call.
#pragma once

#include "accel/driver.h"

namespace accel_kit {

// The calling process's id: read once, then refreshed in every fork()ed child by an atfork handler
// (getpid() is a system call, and this is read on every call of the ABI).
int current_process();

// Laid out as accel_object_header (its first member, `driver`, is what the loader reads) with the
// kit's fields after it. A driver's handle struct has it as its first member, `header`.
struct HandleHeader {
    const accel_driver_table* driver = nullptr;
    int process = current_process();
};

// ACCEL_OK for a handle of this process; else ACCEL_ERR_CLOSED with a message naming `fn`, the
// process the handle was made in and what to do.
accel_status check_process(const void* handle, const char* fn);

// Whether a handle was made in this process (retain and release skip the others).
inline bool of_this_process(const void* handle) {
    return static_cast<const HandleHeader*>(handle)->process == current_process();
}

}  // namespace accel_kit
