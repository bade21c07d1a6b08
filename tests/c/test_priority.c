/* priority: with the only core busy, queued jobs of priority 10 run before those of priority 0; per-job
 * timing is ordered (queued <= started <= finished) and names the core; core_mask pins a job to a core;
 * out-of-range priorities are refused. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "test_util.h"

enum { NJOBS = 8 };

int main(int argc, char** argv) {
    test_name = "priority";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    const test_case* slow = test_manifest_find(&m, "slow");
    const test_case* tiny = test_manifest_find(&m, "tiny");

    accel_device* d = test_open("emu:cores=1");
    accel_model* ms = test_load(d, &m, slow);
    accel_model* mt = test_load(d, &m, tiny);
    accel_buffer *sin[1], *sout[1], *tin[1];
    accel_buffer* touts[NJOBS];
    test_make_io(d, slow, sin, sout);
    {
        accel_buffer* tmp[1];
        test_make_io(d, tiny, tin, tmp);
        accel_buffer_release(tmp[0]);
    }
    for (int i = 0; i < NJOBS; i++) touts[i] = test_alloc(d, tiny->outputs[0].byte_size);

    /* the core is busy with A ... */
    accel_job* a = NULL;
    uint64_t before = test_now_ns();
    REQUIRE_OK(accel_job_submit(ms, sin, 1, sout, 1, NULL, &a));
    uint64_t after = test_now_ns();
    test_wait_started(a);
    {
        accel_job_timing t0 = test_timing(a);
        EXPECT(t0.queued_ns >= before && t0.queued_ns <= after,
               "queued_ns %llu is not CLOCK_MONOTONIC time of the submission (between %llu and %llu)",
               (unsigned long long)t0.queued_ns, (unsigned long long)before, (unsigned long long)after);
        EXPECT(t0.finished_ns == 0 || t0.finished_ns >= t0.started_ns, "timing of a running job");
    }
    /* ... while jobs of priority 0 and 10 queue, interleaved, low first */
    accel_job* jobs[NJOBS];
    int prio[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        accel_run_options o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.priority = prio[i] = (i % 2) ? 10 : 0;
        jobs[i] = NULL;
        REQUIRE_OK(accel_job_submit(mt, tin, 1, &touts[i], 1, &o, &jobs[i]));
    }
    accel_job_timing t_last_queued = test_timing(jobs[NJOBS - 1]);
    EXPECT_OK(accel_job_wait(a, -1));
    accel_job_timing ta = test_timing(a);
    REQUIRE(ta.finished_ns > t_last_queued.queued_ns,
            "the slow job finished before every job was queued: this run could not test priorities");

    accel_job_timing t[NJOBS];
    for (int i = 0; i < NJOBS; i++) {
        EXPECT_OK(accel_job_wait(jobs[i], -1));
        t[i] = test_timing(jobs[i]);
        char what[32];
        snprintf(what, sizeof what, "job %d", i);
        EXPECT(test_compare_output(tiny, 0, touts[i], what), "job %d gave a wrong result", i);
        EXPECT(t[i].queued_ns != 0 && t[i].queued_ns <= t[i].started_ns && t[i].started_ns <= t[i].finished_ns,
               "job %d: timing out of order: queued %llu, started %llu, finished %llu", i,
               (unsigned long long)t[i].queued_ns, (unsigned long long)t[i].started_ns,
               (unsigned long long)t[i].finished_ns);
        EXPECT(t[i].core == 0, "job %d ran on core %d of a one-core device", i, t[i].core);
        EXPECT(t[i].started_ns >= ta.finished_ns, "job %d started before the busy core was free", i);
    }
    for (int i = 0; i < NJOBS; i++)
        for (int k = 0; k < NJOBS; k++)
            if (prio[i] == 10 && prio[k] == 0)
                EXPECT(t[i].started_ns < t[k].started_ns,
                       "priority 10 job %d started at +%.3f ms, after priority 0 job %d at +%.3f ms", i,
                       (t[i].started_ns - ta.finished_ns) / 1e6, k, (t[k].started_ns - ta.finished_ns) / 1e6);
    EXPECT(ta.queued_ns <= ta.started_ns && ta.started_ns <= ta.finished_ns && ta.core == 0,
           "slow job timing: queued %llu started %llu finished %llu core %d", (unsigned long long)ta.queued_ns,
           (unsigned long long)ta.started_ns, (unsigned long long)ta.finished_ns, ta.core);
    /* a struct from an older, smaller header: only struct_size bytes are written */
    {
        unsigned char raw[sizeof(accel_job_timing) + 8];
        memset(raw, 0xA5, sizeof raw);
        uint32_t small = (uint32_t)offsetof(accel_job_timing, started_ns);
        memcpy(raw, &small, sizeof small);
        EXPECT_OK(accel_job_get_timing(a, (accel_job_timing*)(void*)raw));
        for (size_t i = small; i < sizeof raw; i++)
            if (raw[i] != 0xA5) {
                EXPECT(0, "accel_job_get_timing wrote byte %zu past struct_size %u", i, small);
                break;
            }
    }

    /* priorities outside 0..255 are refused */
    accel_run_options bad;
    memset(&bad, 0, sizeof bad);
    bad.struct_size = sizeof bad;
    accel_job* j = (accel_job*)(uintptr_t)0x40;
    bad.priority = 256;
    EXPECT_STATUS(accel_job_submit(mt, tin, 1, &touts[0], 1, &bad, &j), ACCEL_ERR_INVALID_ARGUMENT);
    bad.priority = -1;
    EXPECT_STATUS(accel_job_submit(mt, tin, 1, &touts[0], 1, &bad, &j), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(j == (accel_job*)(uintptr_t)0x40, "out_job changed on failure");
    bad.priority = 255;
    j = NULL;
    EXPECT_OK(accel_job_submit(mt, tin, 1, &touts[0], 1, &bad, &j));
    if (j) EXPECT_OK(accel_job_wait(j, -1));
    accel_job_release(j);

    for (int i = 0; i < NJOBS; i++) accel_job_release(jobs[i]);
    accel_job_release(a);

    /* core_mask: on two cores, bit 1 pins a job to core 1 */
    test_setup two_cores;
    test_setup_open(&two_cores, &m, "emu:cores=2", tiny);
    for (int round = 0; round < 4; round++) {
        accel_run_options o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.core_mask = (round % 2) ? 2 : 1;
        accel_job* cj = NULL;
        REQUIRE_OK(accel_job_submit(two_cores.model, two_cores.in, 1, two_cores.out, 1, &o, &cj));
        EXPECT_OK(accel_job_wait(cj, -1));
        accel_job_timing tc = test_timing(cj);
        EXPECT(tc.core == ((round % 2) ? 1 : 0), "core_mask 0x%llx: the job ran on core %d",
               (unsigned long long)o.core_mask, tc.core);
        accel_job_release(cj);
    }
    test_setup_close(&two_cores);

    for (int i = 0; i < NJOBS; i++) accel_buffer_release(touts[i]);
    accel_buffer_release(tin[0]);
    test_release_io(slow, sin, sout);
    accel_model_release(ms);
    accel_model_release(mt);
    accel_device_release(d);
    test_manifest_free(&m);
    return test_finish();
}
