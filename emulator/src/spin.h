// spin.h - polling briefly before sleeping. On a virtual machine, waking a thread that sleeps on
// another CPU costs an inter-processor interrupt through the hypervisor, several microseconds: more
// than a small job takes. A core that polls for new work for a while after each job, and a caller
// that polls for its job's end before sleeping, hand jobs over in well under a microsecond instead.
// The budget is the device's `spin` option; 0 sleeps at once.
#pragma once

#include <cstdint>
#include <thread>

#include "handles.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace accel_emu {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

// Polls ready() for up to budget_ns; true once it holds. Every few dozen polls it yields, so a
// thread it waits for that shares this CPU (or a machine with one CPU) still runs promptly.
template <class Ready>
bool spin_until(Ready ready, uint64_t budget_ns) {
    if (ready()) return true;
    if (budget_ns == 0) return false;
    const uint64_t end = now_ns() + budget_ns;
    for (unsigned i = 1;; i++) {
        cpu_relax();
        if (ready()) return true;
        if ((i & 63) == 0) {
            if (now_ns() >= end) return false;
            std::this_thread::yield();
        }
    }
}

}  // namespace accel_emu
