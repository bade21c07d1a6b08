/* guard: debug mode (emu:debug=1) catches writes past a buffer's ends: accel_device_check names the
 * buffer, a job whose input or output was overrun fails with ACCEL_ERR_MEMORY_CORRUPTION naming it, and
 * corruption found when a buffer is freed is reported by the next accel_device_check. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "test_util.h"

static unsigned char* host_of(accel_buffer* b, uint64_t* size) {
    void* p = NULL;
    REQUIRE_OK(accel_buffer_host_ptr(b, &p));
    REQUIRE_OK(accel_buffer_size(b, size));
    return p;
}

static uint32_t debug_of(accel_device* d) {
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    return info.debug;
}

/* Runs the tiny model with input 0 or output 0 overrun by one byte before submission. */
static void overrun_job(accel_device* d, const test_manifest* m, int overrun_output) {
    const test_case* c = test_manifest_find(m, "tiny");
    REQUIRE(c->n_inputs == 1 && c->n_outputs == 1, "tiny has 1 input and 1 output");
    test_setup set;
    test_setup_on(&set, d, m, c);
    accel_model* model = set.model;
    accel_buffer **in = set.in, **out = set.out;
    accel_buffer* victim = overrun_output ? out[0] : in[0];
    uint64_t size = 0;
    unsigned char* p = host_of(victim, &size);
    unsigned char saved = p[size];
    p[size] = (unsigned char)(saved ^ 0x5A); /* one byte past the end */
    accel_job* job = NULL;
    REQUIRE_OK(accel_job_submit(model, in, 1, out, 1, NULL, &job));
    accel_status s = accel_job_wait(job, -1);
    const char* what = overrun_output ? "output 0" : "input 0";
    EXPECT(s == ACCEL_ERR_MEMORY_CORRUPTION, "a job whose %s was overrun finished with %s", what, accel_status_name(s));
    if (s != ACCEL_OK) {
        EXPECT_ERROR_REPORTED(s);
        EXPECT(strstr(accel_last_error_message(), what) != NULL, "the job's message does not name '%s': '%s'", what,
               accel_last_error_message());
    }
    accel_job_release(job);
    p[size] = saved; /* repaired: releasing it now reports nothing */
    EXPECT_OK(accel_device_check(d));
    /* an intact job on the same buffers runs fine */
    EXPECT_OK(accel_run(model, in, 1, out, 1, NULL));
    EXPECT(test_compare_output(c, 0, out[0], "tiny after repair"), "tiny gave wrong results after the repair");
    test_setup_close(&set);
    EXPECT_OK(accel_device_check(d));
}

int main(int argc, char** argv) {
    test_name = "guard";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);

    accel_device* d = test_open("emu:debug=1,cores=1,pool=4M");
    EXPECT(debug_of(d) == 1, "emu:debug=1 reports debug %u", debug_of(d));
    EXPECT_OK(accel_device_check(d));

    /* ---- a write 1 byte past the end, seen by accel_device_check ---- */
    accel_buffer* a = test_alloc(d, 100);
    accel_buffer* other = test_alloc(d, 64);
    uint64_t size = 0;
    unsigned char* p = host_of(a, &size);
    memset(p, 1, (size_t)size); /* the whole usable size is fine */
    EXPECT_OK(accel_device_check(d));
    unsigned char saved = p[size];
    p[size] = (unsigned char)(saved ^ 0xFF);
    accel_status s = accel_device_check(d);
    EXPECT(s == ACCEL_ERR_MEMORY_CORRUPTION, "accel_device_check after an overrun gave %s", accel_status_name(s));
    if (s != ACCEL_OK) {
        EXPECT_ERROR_REPORTED(s);
        EXPECT(strstr(accel_last_error_message(), "buffer #") != NULL, "the message does not name the buffer: '%s'",
               accel_last_error_message());
    }
    p[size] = saved;
    EXPECT_OK(accel_device_check(d));

    /* ---- and 1 byte before the start ---- */
    saved = p[-1];
    p[-1] = (unsigned char)(saved ^ 0xFF);
    s = accel_device_check(d);
    EXPECT(s == ACCEL_ERR_MEMORY_CORRUPTION, "accel_device_check after an underrun gave %s", accel_status_name(s));
    if (s != ACCEL_OK)
        EXPECT(strstr(accel_last_error_message(), "buffer #") != NULL, "the message does not name the buffer: '%s'",
               accel_last_error_message());
    p[-1] = saved;
    EXPECT_OK(accel_device_check(d));

    /* ---- corruption found when freeing: reported by the next check ---- */
    uint64_t osize = 0;
    unsigned char* q = host_of(other, &osize);
    q[osize + 3] ^= 0x11;
    accel_buffer_release(other); /* release cannot return an error ... */
    s = accel_device_check(d);   /* ... so the next check does */
    EXPECT(s == ACCEL_ERR_MEMORY_CORRUPTION, "accel_device_check after freeing an overrun buffer gave %s",
           accel_status_name(s));
    if (s != ACCEL_OK)
        EXPECT(strstr(accel_last_error_message(), "buffer #") != NULL, "the message does not name the buffer: '%s'",
               accel_last_error_message());
    accel_buffer_release(a);

    /* ---- jobs: an overrun input or output fails the job, naming it ---- */
    accel_device* d2 = test_open("emu:debug=1,cores=1,pool=4M");
    overrun_job(d2, &m, 0);
    overrun_job(d2, &m, 1);
    accel_device_release(d2);

    /* ---- outside debug mode nothing is checked ---- */
    accel_device* nd = test_open("emu:debug=0,cores=1,pool=1M");
    EXPECT(debug_of(nd) == 0, "emu:debug=0 reports debug %u", debug_of(nd));
    accel_buffer* x = test_alloc(nd, 64);
    accel_buffer* y = test_alloc(nd, 64); /* so that the byte past x lies in the pool */
    unsigned char* xp = host_of(x, &size);
    saved = xp[size];
    xp[size] ^= 0xFF;
    EXPECT_OK(accel_device_check(nd));
    xp[size] = saved;
    accel_buffer_release(x);
    accel_buffer_release(y);
    accel_device_release(nd);

    /* ---- the default comes from ACCEL_EMU_DEBUG; the URI option wins ---- */
    setenv("ACCEL_EMU_DEBUG", "1", 1);
    accel_device* e1 = test_open("emu:cores=1,pool=1M");
    EXPECT(debug_of(e1) == 1, "ACCEL_EMU_DEBUG=1: debug %u", debug_of(e1));
    accel_device* e2 = test_open("emu:cores=1,pool=1M,debug=0");
    EXPECT(debug_of(e2) == 0, "ACCEL_EMU_DEBUG=1 with debug=0: debug %u", debug_of(e2));
    setenv("ACCEL_EMU_DEBUG", "0", 1);
    accel_device* e3 = test_open("emu:cores=1,pool=1M");
    EXPECT(debug_of(e3) == 0, "ACCEL_EMU_DEBUG=0: debug %u", debug_of(e3));
    accel_device_release(e1);
    accel_device_release(e2);
    accel_device_release(e3);

    accel_device_release(d);
    test_manifest_free(&m);
    return test_finish();
}
