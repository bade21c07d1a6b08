/* check.h - the stand-in tests' assertion: a failed check names its file, line and condition and ends
 * the test (C and C++). */
#ifndef ACCEL_STANDIN_CHECK_H
#define ACCEL_STANDIN_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

#endif
