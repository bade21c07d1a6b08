/* drivers: driver discovery and ABI negotiation.
 *
 *   test_drivers default   ACCEL_DRIVER_PATH empty: the loader finds "emu" in accel-drivers next to
 *                          libaccel, with no environment variable.
 *   test_drivers bad       ACCEL_DRIVER_PATH=<emu dir>:<bad dir>: libaccel_driver_bad.so (ABI 99.0) is
 *                          refused with ACCEL_ERR_ABI_MISMATCH naming the file and both versions; emu works.
 *   test_drivers file      ACCEL_DRIVER_PATH=<path of libaccel_driver_emu.so>: a file entry works too.
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static int driver_listed(const char* scheme) {
    size_t n = 0;
    REQUIRE_OK(accel_driver_count(&n));
    for (size_t i = 0; i < n; i++) {
        const char* name = NULL;
        REQUIRE_OK(accel_driver_name(i, &name));
        REQUIRE(name && name[0], "driver %zu has an empty name", i);
        if (strcmp(name, scheme) == 0) return 1;
    }
    return 0;
}

static void check_emu_opens(void) {
    accel_device* d = test_open("emu:cores=1,pool=1M");
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    EXPECT(info.backend && strcmp(info.backend, "emu") == 0, "backend is '%s'", info.backend ? info.backend : "(null)");
    EXPECT(info.name && info.name[0], "device name is empty");
    EXPECT(info.cores == 1, "cores %u, asked for 1", info.cores);
    EXPECT(info.pool_bytes == (1u << 20), "pool_bytes %llu, asked for 1M", (unsigned long long)info.pool_bytes);
    accel_device_release(d);
}

static void check_defaults(void) {
    accel_device* d = test_open("emu");
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    EXPECT(info.cores == 1, "default cores %u, documented 1", info.cores);
    EXPECT(info.threads >= 1 && info.threads <= 256, "default threads %u", info.threads);
    EXPECT(info.max_inflight == 16, "default max_inflight %u, documented 16", info.max_inflight);
    /* The host's physical memory, 1G to 64G (or halved, not below 256M, where the host will not map it at once). */
    unsigned long long host = (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)sysconf(_SC_PAGESIZE);
    unsigned long long want = host<(1ull << 30) ? (1ull << 30) : host>(64ull << 30) ? (64ull << 30) : host;
    EXPECT(info.pool_bytes == want || (info.pool_bytes >= (256ull << 20) && want % info.pool_bytes == 0),
           "default pool %llu, documented the host's memory (%llu)", (unsigned long long)info.pool_bytes, want);
    EXPECT(info.alignment == 64, "alignment %llu, documented 64", (unsigned long long)info.alignment);
    EXPECT(info.debug == 0, "debug %u with ACCEL_EMU_DEBUG=0", info.debug);
    /* How accel_device_get_info honours an older caller's struct_size is a check of every driver's:
     * device_info in the conformance suite (conformance.c). */
    accel_device_release(d);
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "default";
    static char name[64];
    snprintf(name, sizeof name, "drivers_%s", mode);
    test_name = name;

    size_t count = 0;
    REQUIRE_OK(accel_driver_count(&count));
    EXPECT(count >= 1, "accel_driver_count = %zu", count);
    EXPECT(driver_listed("emu"), "'emu' is not among the %zu driver(s) found", count);

    const char* out_name = (const char*)0x1;
    accel_status s = accel_driver_name(count, &out_name);
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "accel_driver_name(count) = %s", accel_status_name(s));
    EXPECT(out_name == (const char*)0x1, "accel_driver_name changed its out-parameter on failure");
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    EXPECT_STATUS(accel_driver_name(0, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_driver_count(NULL), ACCEL_ERR_INVALID_ARGUMENT);

    if (strcmp(mode, "default") == 0) {
        check_emu_opens();
        check_defaults();
        /* The bad driver lives in its own folder, not next to libaccel: it must not be found. */
        accel_device* d = (accel_device*)0x1;
        s = accel_device_open("bad", &d);
        EXPECT(s == ACCEL_ERR_NOT_FOUND, "opening 'bad' with the default search path gave %s (%s)",
               accel_status_name(s), accel_last_error_message());
        EXPECT(d == (accel_device*)0x1, "out_device changed on failure");
    } else if (strcmp(mode, "bad") == 0) {
        EXPECT(!driver_listed("bad"), "the mismatched driver 'bad' is listed as usable");
        accel_device* d = (accel_device*)0x1;
        s = accel_device_open("bad", &d);
        EXPECT(s == ACCEL_ERR_ABI_MISMATCH, "opening 'bad' gave %s (%s), expected ACCEL_ERR_ABI_MISMATCH",
               accel_status_name(s), accel_last_error_message());
        EXPECT(d == (accel_device*)0x1, "out_device changed on failure");
        const char* msg = accel_last_error_message();
        char loader_version[32];
        snprintf(loader_version, sizeof loader_version, "%u.%u", (unsigned)ACCEL_ABI_VERSION_MAJOR,
                 (unsigned)ACCEL_ABI_VERSION_MINOR);
        EXPECT(strstr(msg, "libaccel_driver_bad.so") != NULL, "the message does not name the file: '%s'", msg);
        EXPECT(strstr(msg, "another major ABI version") != NULL, "the message does not say why: '%s'", msg);
        EXPECT(strstr(msg, "99.0") != NULL, "the message does not give the driver's ABI version 99.0: '%s'", msg);
        EXPECT(strstr(msg, loader_version) != NULL, "the message does not give libaccel's ABI version %s: '%s'",
               loader_version, msg);
        EXPECT(accel_last_error_status() == ACCEL_ERR_ABI_MISMATCH, "last error status %s",
               accel_status_name(accel_last_error_status()));
        /* Asking again gives the same answer (the refusal is remembered, not forgotten). */
        s = accel_device_open("bad:x=1", &d);
        EXPECT(s == ACCEL_ERR_ABI_MISMATCH, "opening 'bad:x=1' gave %s", accel_status_name(s));
        /* Describing its devices is refused the same way: the driver's table is never read. */
        accel_device_description desc;
        memset(&desc, 0, sizeof desc);
        desc.struct_size = sizeof desc;
        s = accel_device_describe("bad:0", &desc);
        EXPECT(s == ACCEL_ERR_ABI_MISMATCH && strstr(accel_last_error_message(), "libaccel_driver_bad.so") != NULL,
               "describing 'bad:0' gave %s (%s)", accel_status_name(s), accel_last_error_message());
        check_emu_opens();
    } else if (strcmp(mode, "file") == 0) {
        check_emu_opens();
    } else {
        REQUIRE(0, "unknown mode '%s'", mode);
    }
    return test_finish();
}
