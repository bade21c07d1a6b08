// emulator.cc - see emulator.h.
#include "emulator.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <mutex>

namespace standin_vart {
namespace {

struct State {
    std::mutex mutex;
    std::condition_variable cv;
    accel_device* device = nullptr;
    int users = 0;
    bool held = false;
    std::atomic<int> running{0};
};

State& state() {
    static State* s = new State;  // never destroyed: a runner may be destroyed during exit
    return *s;
}

}  // namespace

unsigned long long now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

// The emulator with the DPU's int8 rules: the stand-in's DPU subgraphs compute as the DPU does.
accel_device* acquire_emulator() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.device && accel_device_open("emu:cores=2,max_inflight=64,int8=dpu", &s.device) != ACCEL_OK) {
        s.device = nullptr;
        return nullptr;
    }
    s.users++;
    return s.device;
}

void release_emulator() {
    State& s = state();
    accel_device* last = nullptr;
    {
        std::lock_guard<std::mutex> lock(s.mutex);
        if (--s.users == 0) {
            last = s.device;
            s.device = nullptr;
        }
    }
    accel_device_release(last);
}

bool wait_while_held(unsigned long long deadline_ns) {
    State& s = state();
    std::unique_lock<std::mutex> lock(s.mutex);
    while (s.held) {
        unsigned long long now = now_ns();
        if (now >= deadline_ns) return false;
        s.cv.wait_for(lock, std::chrono::nanoseconds(deadline_ns - now));
    }
    return true;
}

}  // namespace standin_vart

extern "C" void standin_vart_hold(int on) {
    standin_vart::State& s = standin_vart::state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.held = on != 0;
    s.cv.notify_all();
}

extern "C" int standin_vart_running(void) { return standin_vart::state().running.load(); }

namespace standin_vart {
// Counts a job inside execute_async (see standin_vart_running).
void count_running(int delta) { state().running.fetch_add(delta); }
}  // namespace standin_vart
