/* uri: device URIs, good and bad, and NULL arguments everywhere: the right status, a non-empty message,
 * and out-parameters untouched on failure. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "test_util.h"

#define SENTINEL_DEVICE ((accel_device*)(uintptr_t)0xDEADBEE0u)

/* Opens `uri` expecting status `want` (or `want2` when it is not -1). */
static void expect_open_fails(const char* uri, accel_status want, accel_status want2) {
    accel_device* d = SENTINEL_DEVICE;
    accel_status s = accel_device_open(uri, &d);
    if (s == ACCEL_OK && d != SENTINEL_DEVICE) accel_device_release(d);
    EXPECT(s == want || (want2 != -1 && s == want2), "accel_device_open(\"%s\") = %s, expected %s%s%s", uri,
           accel_status_name(s), accel_status_name(want), want2 != -1 ? " or " : "",
           want2 != -1 ? accel_status_name(want2) : "");
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    EXPECT(d == SENTINEL_DEVICE, "accel_device_open(\"%s\") changed *out_device on failure", uri);
}

static void expect_open_ok(const char* uri, uint32_t cores, uint64_t pool, uint32_t inflight, uint32_t debug) {
    accel_device* d = NULL;
    accel_status s = accel_device_open(uri, &d);
    EXPECT(s == ACCEL_OK && d, "accel_device_open(\"%s\") = %s (%s)", uri, accel_status_name(s),
           s ? accel_last_error_message() : "");
    if (s != ACCEL_OK || !d) return;
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT_OK(accel_device_get_info(d, &info));
    if (cores) EXPECT(info.cores == cores, "%s: cores %u, expected %u", uri, info.cores, cores);
    if (pool)
        EXPECT(info.pool_bytes == pool, "%s: pool_bytes %llu, expected %llu", uri, (unsigned long long)info.pool_bytes,
               (unsigned long long)pool);
    if (inflight)
        EXPECT(info.max_inflight == inflight, "%s: max_inflight %u, expected %u", uri, info.max_inflight, inflight);
    EXPECT(info.debug == debug, "%s: debug %u, expected %u", uri, info.debug, debug);
    accel_device_release(d);
}

static void expect_threads(const char* uri, uint32_t cores, uint32_t threads) {
    accel_device* d = test_open(uri);
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT_OK(accel_device_get_info(d, &info));
    EXPECT(info.cores == cores && info.threads == threads, "%s: cores %u, threads %u; expected %u, %u", uri, info.cores,
           info.threads, cores, threads);
    accel_device_release(d);
}

/* accel_uri_parse(uri) gives `want` items, each "key" (no '=') or "key=value"; the scheme is the first. */
static void expect_parse(const char* uri, size_t want_count, const char* const* want) {
    accel_uri_item items[8];
    memset(items, 0x5a, sizeof items);
    size_t count = 0;
    accel_status s = accel_uri_parse(uri, items, 8, &count);
    EXPECT(s == ACCEL_OK, "accel_uri_parse(\"%s\") = %s (%s)", uri, accel_status_name(s),
           s ? accel_last_error_message() : "");
    EXPECT(count == want_count, "accel_uri_parse(\"%s\"): %zu items, expected %zu", uri, count, want_count);
    for (size_t i = 0; s == ACCEL_OK && i < count && i < want_count && i < 8; i++) {
        char got[128];
        const accel_uri_item* it = &items[i];
        if (it->key_offset + it->key_length > strlen(uri) || it->value_offset + it->value_length > strlen(uri)) {
            EXPECT(0, "accel_uri_parse(\"%s\"): item %zu lies outside the URI", uri, i);
            continue;
        }
        snprintf(got, sizeof got, "%.*s%s%.*s", (int)it->key_length, uri + it->key_offset, it->has_value ? "=" : "",
                 (int)it->value_length, uri + it->value_offset);
        EXPECT(strcmp(got, want[i]) == 0, "accel_uri_parse(\"%s\"): item %zu is '%s', expected '%s'", uri, i, got,
               want[i]);
        EXPECT(it->has_value || it->value_length == 0,
               "accel_uri_parse(\"%s\"): item %zu has a value length but no "
               "'='",
               uri, i);
    }
    /* capacity 0 asks for the count alone; a smaller capacity writes only that many items */
    size_t alone = 0;
    EXPECT_OK(accel_uri_parse(uri, NULL, 0, &alone));
    EXPECT(alone == want_count, "accel_uri_parse(\"%s\", capacity 0): count %zu, expected %zu", uri, alone, want_count);
    accel_uri_item one[2];
    memset(one, 0x5a, sizeof one);
    EXPECT_OK(accel_uri_parse(uri, one, 1, &alone));
    EXPECT(alone == want_count && one[1].reserved == 0x5a5a5a5a && one[0].key_length == strcspn(uri, ":"),
           "accel_uri_parse(\"%s\", capacity 1) wrote past its capacity or misread the scheme", uri);
}

static void check_parser(void) {
    static const char* const emu[] = {"emu"};
    expect_parse("emu", 1, emu);
    expect_parse("emu:", 1, emu); /* no options */
    static const char* const two[] = {"emu", "cores=2", "int8=dpu"};
    expect_parse("emu:cores=2,int8=dpu", 3, two);
    static const char* const board[] = {"bpu", "0"};
    expect_parse("bpu:0", 2, board);
    static const char* const empties[] = {"emu", "a", "", "b="};
    expect_parse("emu:a,,b=", 4, empties); /* empty items kept, an '=' with nothing after it is a value "" */
    static const char* const eqs[] = {"x", "k=v=w", " sp = 1 "};
    expect_parse("x:k=v=w, sp = 1 ", 3, eqs); /* split at the first '='; nothing trimmed */
    static const char* const colons[] = {"vart", "path=a:b"};
    expect_parse("vart:path=a:b", 2, colons); /* the first ':' ends the scheme */

    accel_uri_item items[2];
    size_t count = 77;
    EXPECT_STATUS(accel_uri_parse(NULL, items, 2, &count), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_uri_parse("emu", items, 2, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_uri_parse("emu", NULL, 2, &count), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_uri_parse("", items, 2, &count), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_uri_parse(":cores=1", items, 2, &count), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(accel_last_error_message(), "':cores=1'") != NULL && strstr(accel_last_error_message(), "no scheme"),
           "the message does not name the URI and what is wrong: '%s'", accel_last_error_message());
    EXPECT(count == 77, "accel_uri_parse changed *out_count on failure");
}

int main(void) {
    test_name = "uri";
    check_parser();

    /* ---- good URIs ---- */
    expect_open_ok("emu", 0, 0, 16, 0); /* its default pool: test_drivers.c */
    expect_open_ok("emu:cores=2,pool=256M", 2, 256ull << 20, 16, 0);
    expect_open_ok("emu:cores=1,pool=1M", 1, 1ull << 20, 16, 0);
    expect_open_ok("emu:pool=65536", 0, 65536, 16, 0);
    expect_open_ok("emu:pool=64K,max_inflight=4,debug=1", 0, 64ull << 10, 4, 1);
    expect_open_ok("emu:debug=0,cores=3", 3, 0, 0, 0);
    expect_open_ok("emu:spin=0", 0, 0, 0, 0);          /* cores and callers sleep at once */
    expect_open_ok("emu:cores=1,spin=10000", 1, 0, 0, 0);

    /* ---- no or unknown scheme ---- */
    /* An empty scheme is malformed (INVALID_ARGUMENT); finding no driver for it (NOT_FOUND) is also fair. */
    expect_open_fails("", ACCEL_ERR_INVALID_ARGUMENT, ACCEL_ERR_NOT_FOUND);
    expect_open_fails(":x", ACCEL_ERR_INVALID_ARGUMENT, ACCEL_ERR_NOT_FOUND);
    expect_open_fails(":", ACCEL_ERR_INVALID_ARGUMENT, ACCEL_ERR_NOT_FOUND);
    expect_open_fails("nosuch", ACCEL_ERR_NOT_FOUND, -1);
    EXPECT(strstr(accel_last_error_message(), "nosuch") != NULL, "the message does not name the scheme: '%s'",
           accel_last_error_message());
    expect_open_fails("nosuch:cores=1", ACCEL_ERR_NOT_FOUND, -1);
    expect_open_fails("em", ACCEL_ERR_NOT_FOUND, -1);
    expect_open_fails("emux", ACCEL_ERR_NOT_FOUND, -1);
    expect_open_fails("EMU", ACCEL_ERR_NOT_FOUND, -1);

    /* ---- bad emulator options ---- */
    static const char* const bad_options[] = {"emu:cores=0",        "emu:cores=abc",
                                              "emu:cores=",         "emu:cores=-1",
                                              "emu:cores=1x",       "emu:cores=99999999999999999999999",
                                              "emu:pool=1",         "emu:pool=abc",
                                              "emu:pool=",          "emu:pool=12Q",
                                              "emu:pool=-1M",       "emu:pool=99999999999999999999G",
                                              "emu:bogus=1",        "emu:cores=1,bogus=1",
                                              "emu:debug=2",        "emu:debug=yes",
                                              "emu:max_inflight=0", "emu:max_inflight=x",
                                              "emu:cores",          "emu:=1",
                                              "emu:cores=1,pool=1", "emu:spin=",
                                              "emu:spin=x",         "emu:spin=10001",
                                              "emu:spin=-1",        "emu:threads=0",
                                              "emu:threads=257",    "emu:threads=",
                                              "emu:threads=x",      "emu:cores=2,threads=-1"};
    for (size_t i = 0; i < sizeof bad_options / sizeof bad_options[0]; i++)
        expect_open_fails(bad_options[i], ACCEL_ERR_INVALID_ARGUMENT, -1);
    accel_device* d = SENTINEL_DEVICE;
    accel_status s = accel_device_open("emu:bogus=1", &d);
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT && strstr(accel_last_error_message(), "bogus") != NULL,
           "an unknown option's message does not name it: '%s'", accel_last_error_message());
    s = accel_device_open("emu:threads=300", &d);
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT && strstr(accel_last_error_message(), "threads='300'") != NULL &&
               strstr(accel_last_error_message(), "1 to 256") != NULL,
           "a bad thread count's message does not name the option and its range: '%s'", accel_last_error_message());
    expect_threads("emu:threads=3", 1, 3);
    expect_threads("emu:cores=4,threads=1", 4, 1);
    expect_threads("emu:threads=256,cores=1", 1, 256);

    /* ---- NULL pointers ---- */
    d = SENTINEL_DEVICE;
    EXPECT_STATUS(accel_device_open(NULL, &d), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(d == SENTINEL_DEVICE, "accel_device_open(NULL, &d) changed d");
    EXPECT_STATUS(accel_device_open("emu", NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_device_open(NULL, NULL), ACCEL_ERR_INVALID_ARGUMENT);

    /* Every other entry point with a NULL handle or out-pointer: INVALID_ARGUMENT, never a crash. */
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    accel_memory_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.struct_size = sizeof stats;
    accel_tensor_info ti;
    memset(&ti, 0, sizeof ti);
    ti.struct_size = sizeof ti;
    accel_job_timing timing;
    memset(&timing, 0, sizeof timing);
    timing.struct_size = sizeof timing;
    accel_buffer* buf = (accel_buffer*)(uintptr_t)0x40;
    accel_model* model = (accel_model*)(uintptr_t)0x40;
    void* ptr = (void*)(uintptr_t)0x40;
    uint64_t u64 = 77;
    size_t count = 77;
    int32_t done = 77;
    char bytes[64];
    EXPECT_STATUS(accel_device_get_info(NULL, &info), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_device_get_stats(NULL, &stats), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_device_check(NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_alloc(NULL, 64, &buf), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_import(NULL, bytes, 64, &buf), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_host_ptr(NULL, &ptr), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_size(NULL, &u64), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_sync(NULL, ACCEL_SYNC_TO_DEVICE, 0, 0), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_write(NULL, 0, bytes, 1), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_read(NULL, 0, bytes, 1), ACCEL_ERR_INVALID_ARGUMENT);
    int64_t shape[1] = {4}, strides[1] = {1};
    EXPECT_STATUS(accel_buffer_write_strided(NULL, 0, bytes, 1, shape, strides, 1), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_load_file(NULL, "x.accm", &model), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_load_memory(NULL, bytes, sizeof bytes, &model), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_input_count(NULL, &count), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_output_count(NULL, &count), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_input_info(NULL, 0, &ti), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_output_info(NULL, 0, &ti), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_submit(NULL, NULL, 0, NULL, 0, NULL, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_run(NULL, NULL, 0, NULL, 0, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_wait(NULL, 0), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_poll(NULL, &done), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_get_timing(NULL, &timing), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(buf == (accel_buffer*)(uintptr_t)0x40 && model == (accel_model*)(uintptr_t)0x40 &&
               ptr == (void*)(uintptr_t)0x40 && u64 == 77 && count == 77 && done == 77,
           "an out-parameter changed on failure");
    /* Release of NULL is a no-op. */
    accel_device_release(NULL);
    accel_buffer_release(NULL);
    accel_model_release(NULL);
    accel_job_release(NULL);
    accel_device_retain(NULL);
    accel_buffer_retain(NULL);
    accel_model_retain(NULL);
    accel_job_retain(NULL);

    /* With a real device: NULL out-pointers and unset struct_size. */
    d = test_open("emu:cores=1,pool=1M");
    EXPECT_STATUS(accel_device_get_info(d, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_device_get_stats(d, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    accel_device_info zero_info;
    memset(&zero_info, 0, sizeof zero_info);
    EXPECT_STATUS(accel_device_get_info(d, &zero_info), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_alloc(d, 64, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_alloc(d, 0, &buf), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_import(d, NULL, 64, &buf), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_load_file(d, NULL, &model), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_load_file(d, "x.accm", NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_load_memory(d, NULL, 10, &model), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_load_memory(d, bytes, sizeof bytes, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    s = accel_model_load_file(d, "/nonexistent/dir/model.accm", &model);
    EXPECT(s == ACCEL_ERR_NOT_FOUND, "loading a missing file gave %s", accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    EXPECT(buf == (accel_buffer*)(uintptr_t)0x40 && model == (accel_model*)(uintptr_t)0x40,
           "an out-parameter changed on failure");
    accel_buffer* real = test_alloc(d, 64);
    EXPECT_STATUS(accel_buffer_host_ptr(real, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_size(real, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_write(real, 0, NULL, 8), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_read(real, 0, NULL, 8), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_write_strided(real, 0, NULL, 1, shape, strides, 1), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_write_strided(real, 0, bytes, 1, NULL, strides, 1), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_write_strided(real, 0, bytes, 1, shape, NULL, 1), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_sync(real, 0, 0, 0), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_sync(real, 3, 0, 0), ACCEL_ERR_INVALID_ARGUMENT);
    accel_buffer_release(real);
    accel_device_release(d);

    /* opening and closing many devices leaves nothing behind (threads joined; LSan checks memory) */
    for (int i = 0; i < 40; i++) {
        accel_device* dd = test_open(i % 2 ? "emu:cores=3,pool=64K" : "emu:cores=1,pool=1M,debug=1");
        accel_buffer* bb = NULL;
        if (i % 4 == 0) bb = test_alloc(dd, 128);
        accel_device_release(dd); /* the buffer keeps it alive */
        accel_buffer_release(bb);
    }

    return test_finish();
}
