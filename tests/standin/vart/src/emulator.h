// emulator.h - the emulator device the stand-in's DPU runs on, and the test hook that holds jobs.
//
// libaccel loads the vart driver, which loads this library: nothing here calls libaccel before the
// first runner is created (a call from a static constructor would re-enter libaccel's driver scan).
#pragma once

#include <accel/accel.h>

namespace standin_vart {

// The device, opened by the first runner and closed with the last (its threads must be gone before
// the process exits). Returns NULL if it cannot be opened.
accel_device* acquire_emulator();
void release_emulator();

// While the test hold is on, a job that has started waits here until the hold is released or its
// deadline (CLOCK_MONOTONIC ns) passes; returns false if the deadline passed.
bool wait_while_held(unsigned long long deadline_ns);

unsigned long long now_ns();

// Counts jobs inside execute_async (standin_vart_running).
void count_running(int delta);

}  // namespace standin_vart

extern "C" {
// Tests only: while on (1), every job that enters execute_async waits before it runs (so a test can
// keep runners busy, or overrun the DPU timeout). Off (0) lets them run.
__attribute__((visibility("default"))) void standin_vart_hold(int on);
// Tests only: jobs currently inside execute_async (waiting in a hold or running).
__attribute__((visibility("default"))) int standin_vart_running(void);
}
