// driver_kit/driver_tls.h - thread_local for a driver's state. A driver is loaded with dlopen, so its
// thread_locals are dynamic TLS: each access calls __tls_get_addr, and gcc 12's ThreadSanitizer mishandles
// that call on threads that start and stop often (it tried to map 512 TiB of shadow on an emulator thread
// in CI's TSan run). Initial-exec TLS is read at a fixed offset from the thread pointer, with no call; glibc
// keeps a static TLS surplus for libraries loaded later, which a driver's few pointers fit.
#pragma once

#if defined(__GNUC__)
#define ACCEL_DRIVER_TLS thread_local __attribute__((tls_model("initial-exec")))
#else
#define ACCEL_DRIVER_TLS thread_local
#endif
