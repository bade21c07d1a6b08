/*
 * replay_accm.c - the fuzz target's checks, in every normal build: each .accm file in the given folders
 * is loaded through the public ABI and, if it loads, described and run once (fuzz_model.h).
 *
 *   replay_accm MODELS_DIR [DIR...]
 *
 * Files in MODELS_DIR (the compiled test models) must load and run; files in the other folders (what the
 * fuzzer found: tests/fuzz/regressions/accm/) may be refused. Fails on a fault
 * (the sanitizer builds catch memory errors) or a model that loads but will not run.
 */
#define _POSIX_C_SOURCE 200809L
#include <accel/accel.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_model.h"

static int failures = 0;
static int files = 0;

static unsigned char* read_file(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char* data = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            unsigned char* grown = realloc(data, cap);
            if (!grown) break;
            data = grown;
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    *size = n;
    return data;
}

static void replay_dir(accel_device* device, const char* dir, int must_load) {
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "replay_accm: cannot open %s\n", dir);
        failures++;
        return;
    }
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 5, ".accm") != 0) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t size = 0;
        unsigned char* data = read_file(path, &size);
        if (!data && size) {
            fprintf(stderr, "replay_accm: cannot read %s\n", path);
            failures++;
            continue;
        }
        files++;
        accel_model* model = NULL;
        accel_status s = accel_model_load_memory(device, data, size, &model);
        if (s != ACCEL_OK) {
            if (must_load) {
                fprintf(stderr, "replay_accm: %s does not load: %s\n", path, accel_last_error_message());
                failures++;
            }
        } else {
            if (!fuzz_exercise_model(device, model, 64u << 20)) {
                fprintf(stderr, "replay_accm: %s loads but fails (above)\n", path);
                failures++;
            }
            accel_model_release(model);
        }
        free(data);
    }
    closedir(d);
}

int main(int argc, char** argv) {
    accel_device* device = NULL;
    if (accel_device_open("emu:cores=1,pool=256M", &device) != ACCEL_OK) {
        fprintf(stderr, "replay_accm: cannot open the emulator: %s\n", accel_last_error_message());
        return 1;
    }
    for (int i = 1; i < argc; i++) replay_dir(device, argv[i], i == 1);
    accel_device_release(device);
    printf("replay_accm: %d files, %d failures\n", files, failures);
    if (files == 0) {
        fprintf(stderr, "replay_accm: no .accm file found\n");
        return 1;
    }
    return failures ? 1 : 0;
}
