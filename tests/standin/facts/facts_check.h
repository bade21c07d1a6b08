/* facts_check.h - compares a stand-in SDK's facts (sizes, offsets, enum values, constants), computed
 * by the including program from the headers it was compiled against, with a table of the real SDK's
 * (tests/standin/facts/<sdk>.txt: lines "KEY VALUE", '#' comments). Every key of the table must be
 * computed, every computed key must be in the table, and every value must agree: so a field added,
 * moved or retyped in the stand-in, or a fact the table has and the program forgot, fails the test.
 * Compiles as C99 and as C++ (the tables were made by compiling the same program against the real
 * headers, which for hbUCP needs C++). */
#ifndef ACCEL_STANDIN_FACTS_CHECK_H
#define ACCEL_STANDIN_FACTS_CHECK_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char* key;
    long long value;
} Fact;

/* A struct's size, a field's offset and size, and the size of what a pointer field points at (so an
 * int8_t* that became an int32_t* is seen although both pointers are 8 bytes). */
#define FACT_SIZEOF(T) {"sizeof." #T, (long long)sizeof(T)}
#define FACT_FIELD(T, f) \
    {"offsetof." #T "." #f, (long long)offsetof(T, f)}, { "sizeof." #T "." #f, (long long)sizeof(((T*)0)->f) }
#define FACT_POINTEE(T, f) {"sizeof." #T "." #f "[0]", (long long)sizeof(*((T*)0)->f)}
#define FACT_VALUE(name) {#name, (long long)(name)}

/* Prints every fact as "KEY computed real" and returns the number of mismatches, missing and unknown
 * keys (0: the headers agree with the table). With only_print, prints "KEY VALUE" lines: a table. */
static int facts_check(const Fact* facts, size_t n, const char* table_path, int only_print) {
    if (only_print) {
        for (size_t i = 0; i < n; i++) printf("%s %lld\n", facts[i].key, facts[i].value);
        return 0;
    }
    FILE* f = fopen(table_path, "r");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", table_path);
        return 1;
    }
    int failures = 0;
    char* seen = (char*)calloc(n ? n : 1, 1);
    char line[512];
    printf("%-60s %14s %14s\n", "KEY", "STAND-IN", "REAL");
    while (fgets(line, sizeof line, f)) {
        char key[256];
        long long real;
        if (line[0] == '#' || line[0] == '\n') continue;
        if (sscanf(line, "%255s %lld", key, &real) != 2) {
            printf("unreadable line: %s", line);
            failures++;
            continue;
        }
        size_t i = 0;
        while (i < n && strcmp(facts[i].key, key) != 0) i++;
        if (i == n) {
            printf("%-60s %14s %14lld  <- NOT COMPUTED by this test\n", key, "?", real);
            failures++;
            continue;
        }
        seen[i] = 1;
        int same = facts[i].value == real;
        printf("%-60s %14lld %14lld%s\n", key, facts[i].value, real, same ? "" : "  <- DIFFERS");
        failures += !same;
    }
    fclose(f);
    for (size_t i = 0; i < n; i++)
        if (!seen[i]) {
            printf("%-60s %14lld %14s  <- NOT IN THE TABLE\n", facts[i].key, facts[i].value, "?");
            failures++;
        }
    free(seen);
    printf("%zu facts, %d failures\n", n, failures);
    return failures;
}

/* main() for a facts program: `prog TABLE` checks, `prog --print` prints a table. */
#define FACTS_MAIN(facts)                                                                  \
    int main(int argc, char** argv) {                                                      \
        if (argc != 2) {                                                                   \
            fprintf(stderr, "usage: %s TABLE | --print\n", argv[0]);                       \
            return 2;                                                                      \
        }                                                                                  \
        int print = strcmp(argv[1], "--print") == 0;                                       \
        return facts_check(facts, sizeof facts / sizeof facts[0], argv[1], print) ? 1 : 0; \
    }

#endif /* ACCEL_STANDIN_FACTS_CHECK_H */
