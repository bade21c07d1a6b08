/*
 * bench_util.h - what the C benchmarks share: a monotonic clock in nanoseconds, a comparison for qsort of
 * doubles (medians), and CHECK, which ends the benchmark with the library's message when a call fails.
 */
#ifndef ACCEL_BENCH_UTIL_H
#define ACCEL_BENCH_UTIL_H

#include <accel/accel.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

#define CHECK(call)                                                                                    \
    do {                                                                                               \
        accel_status s_ = (call);                                                                      \
        if (s_ != ACCEL_OK) {                                                                          \
            fprintf(stderr, "%s: %s: %s\n", #call, accel_status_name(s_), accel_last_error_message()); \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

#endif
