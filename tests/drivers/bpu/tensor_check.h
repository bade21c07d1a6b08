// tensor_check.h - the checks the tensor description unit tests (test_{dnn,ucp}_tensor.cc) count.
#pragma once

#include <cstdio>
#include <string>

static int failures = 0;
#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            std::fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                           \
        }                                                                         \
    } while (0)

static bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

static int finish_checks() {
    if (failures) std::fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
