/*
 * fuzz_accm.c - libFuzzer target: any bytes as an .accm model, through the public ABI only.
 *
 * Every input must be refused with a status or loaded; a model that loads has every input and output
 * described, and, when its inputs and outputs are small, runs once on zeroed inputs. The emulator
 * validates everything at load (FORMAT.md), so a loaded model that faults or fails to run with
 * anything but an out-of-memory status is a finding: the harness traps on it.
 *
 * Built by ci/fuzz.sh (clang, -fsanitize=fuzzer with ASan and UBSan); crashes it finds become files
 * in tests/fuzz/regressions/accm/, which every normal build replays (test_fuzz_regressions).
 */
#include <accel/accel.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_model.h"

static accel_device* device;

int LLVMFuzzerInitialize(int* argc, char*** argv) {
    (void)argc;
    (void)argv;
    if (accel_device_open("emu:cores=1,pool=64M,spin=0", &device) != ACCEL_OK) {
        fprintf(stderr, "fuzz_accm: cannot open the emulator: %s\n", accel_last_error_message());
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    accel_model* model = NULL;
    if (accel_model_load_memory(device, data, size, &model) != ACCEL_OK) return 0;
    if (!fuzz_exercise_model(device, model, 256 * 1024)) __builtin_trap();
    accel_model_release(model);
    return 0;
}
