/* version: the ABI version, the release version string, status names, dtype facts, and the per-thread
 * last-error state. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>

#include "test_util.h"

static void* fresh_thread(void* arg) {
    (void)arg;
    /* A thread on which nothing failed sees no error, whatever other threads did. */
    EXPECT(strcmp(accel_last_error_message(), "") == 0, "a fresh thread's last error message is '%s', not ''",
           accel_last_error_message());
    EXPECT(accel_last_error_status() == ACCEL_OK, "a fresh thread's last error status is %s",
           accel_status_name(accel_last_error_status()));
    return NULL;
}

int main(void) {
    test_name = "version";

    /* ---- ABI version ---- */
    uint32_t v = accel_abi_version();
    EXPECT((v >> 16) == ACCEL_ABI_VERSION_MAJOR, "accel_abi_version() major %u, header major %u", v >> 16,
           (unsigned)ACCEL_ABI_VERSION_MAJOR);
    EXPECT((long)(v & 0xFFFFu) >= (long)ACCEL_ABI_VERSION_MINOR, "accel_abi_version() minor %u < header minor %u",
           v & 0xFFFFu, (unsigned)ACCEL_ABI_VERSION_MINOR);
    EXPECT(ACCEL_ABI_VERSION == ((uint32_t)ACCEL_ABI_VERSION_MAJOR << 16 | ACCEL_ABI_VERSION_MINOR),
           "ACCEL_ABI_VERSION macro is inconsistent");

    /* ---- release version ---- */
    const char* vs = accel_version_string();
    REQUIRE(vs != NULL, "accel_version_string() is NULL");
    EXPECT(vs[0] != '\0', "accel_version_string() is empty");
    unsigned a = 0, b = 0, c = 0;
    char tail = 0;
    EXPECT(sscanf(vs, "%u.%u.%u%c", &a, &b, &c, &tail) == 3, "accel_version_string() '%s' is not major.minor.patch",
           vs);
    EXPECT(accel_version_string() == vs, "accel_version_string() is not static storage");

    /* ---- status names ---- */
    static const char* const names[] = {"ACCEL_OK",
                                        "ACCEL_ERR_INVALID_ARGUMENT",
                                        "ACCEL_ERR_SHAPE",
                                        "ACCEL_ERR_DTYPE",
                                        "ACCEL_ERR_ALIGNMENT",
                                        "ACCEL_ERR_MODEL_FORMAT",
                                        "ACCEL_ERR_OUT_OF_MEMORY",
                                        "ACCEL_ERR_BUSY",
                                        "ACCEL_ERR_TIMEOUT",
                                        "ACCEL_ERR_UNSUPPORTED",
                                        "ACCEL_ERR_DEVICE",
                                        "ACCEL_ERR_NOT_FOUND",
                                        "ACCEL_ERR_CANCELLED",
                                        "ACCEL_ERR_NOT_READY",
                                        "ACCEL_ERR_ABI_MISMATCH",
                                        "ACCEL_ERR_MEMORY_CORRUPTION",
                                        "ACCEL_ERR_CLOSED",
                                        "ACCEL_ERR_INTERNAL"};
    EXPECT(ACCEL_ERR_INTERNAL == 17 && ACCEL_ERR_MEMORY_CORRUPTION == 15 && ACCEL_OK == 0,
           "status enum values changed");
    for (int s = 0; s <= ACCEL_ERR_INTERNAL; s++) {
        const char* n = accel_status_name(s);
        REQUIRE(n != NULL, "accel_status_name(%d) is NULL", s);
        EXPECT(strcmp(n, names[s]) == 0, "accel_status_name(%d) is '%s', expected '%s'", s, n, names[s]);
    }
    const int32_t unknown_status[] = {-1, 18, 100, INT32_MAX, INT32_MIN};
    for (size_t i = 0; i < sizeof unknown_status / sizeof unknown_status[0]; i++) {
        const char* n = accel_status_name(unknown_status[i]);
        REQUIRE(n != NULL, "accel_status_name(%d) is NULL", (int)unknown_status[i]);
        EXPECT(strcmp(n, "ACCEL_ERR_UNKNOWN") == 0, "accel_status_name(%d) is '%s', expected ACCEL_ERR_UNKNOWN",
               (int)unknown_status[i], n);
    }

    /* ---- dtypes ---- */
    static const struct {
        accel_dtype d;
        size_t size;
        const char* name;
    } dt[] = {
        {ACCEL_DTYPE_FLOAT32, 4, "float32"}, {ACCEL_DTYPE_FLOAT16, 2, "float16"}, {ACCEL_DTYPE_INT8, 1, "int8"},
        {ACCEL_DTYPE_UINT8, 1, "uint8"},     {ACCEL_DTYPE_INT16, 2, "int16"},     {ACCEL_DTYPE_INT32, 4, "int32"},
        {ACCEL_DTYPE_INT64, 8, "int64"},     {ACCEL_DTYPE_UINT16, 2, "uint16"},   {ACCEL_DTYPE_UINT32, 4, "uint32"},
        {ACCEL_DTYPE_UINT64, 8, "uint64"},   {ACCEL_DTYPE_BOOL, 1, "bool"}};
    for (size_t i = 0; i < sizeof dt / sizeof dt[0]; i++) {
        EXPECT(accel_dtype_size(dt[i].d) == dt[i].size, "accel_dtype_size(%d) = %zu, expected %zu", (int)dt[i].d,
               accel_dtype_size(dt[i].d), dt[i].size);
        const char* n = accel_dtype_name(dt[i].d);
        REQUIRE(n != NULL, "accel_dtype_name(%d) is NULL", (int)dt[i].d);
        EXPECT(strcmp(n, dt[i].name) == 0, "accel_dtype_name(%d) = '%s', expected '%s'", (int)dt[i].d, n, dt[i].name);
    }
    const int32_t unknown_dtype[] = {ACCEL_DTYPE_UNKNOWN, 12, -1, 1000, INT32_MIN};
    for (size_t i = 0; i < sizeof unknown_dtype / sizeof unknown_dtype[0]; i++) {
        EXPECT(accel_dtype_size(unknown_dtype[i]) == 0, "accel_dtype_size(%d) = %zu, expected 0", (int)unknown_dtype[i],
               accel_dtype_size(unknown_dtype[i]));
        const char* n = accel_dtype_name(unknown_dtype[i]);
        REQUIRE(n != NULL, "accel_dtype_name(%d) is NULL", (int)unknown_dtype[i]);
        EXPECT(strcmp(n, "unknown") == 0, "accel_dtype_name(%d) = '%s', expected 'unknown'", (int)unknown_dtype[i], n);
    }

    /* ---- last error: per thread, set by failures, not cleared by successes ---- */
    EXPECT(strcmp(accel_last_error_message(), "") == 0, "before any failure the message is '%s'",
           accel_last_error_message());
    EXPECT(accel_last_error_status() == ACCEL_OK, "before any failure the status is %s",
           accel_status_name(accel_last_error_status()));
    accel_status s = accel_driver_count(NULL);
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "accel_driver_count(NULL) = %s", accel_status_name(s));
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", accel_last_error_message());
    size_t count = 0;
    EXPECT_OK(accel_driver_count(&count));
    EXPECT(strcmp(accel_last_error_message(), saved) == 0, "a successful call changed the message to '%s'",
           accel_last_error_message());
    EXPECT(accel_last_error_status() == ACCEL_ERR_INVALID_ARGUMENT, "a successful call changed the status to %s",
           accel_status_name(accel_last_error_status()));
    pthread_t t;
    REQUIRE(pthread_create(&t, NULL, fresh_thread, NULL) == 0, "pthread_create");
    pthread_join(t, NULL);
    /* Another failure replaces the message. */
    const char* name = (const char*)1;
    s = accel_driver_name((size_t)-1, &name);
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "accel_driver_name(SIZE_MAX) = %s", accel_status_name(s));
    EXPECT(name == (const char*)1, "accel_driver_name changed its out-parameter on failure");
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);

    return test_finish();
}
