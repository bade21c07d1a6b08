/* fork: a device, a model, buffers and a job made before fork() (the slow job still running) are the
 * parent's. In the child every call on them fails at once with ACCEL_ERR_CLOSED and a message naming
 * fork(), and releasing them does nothing (no hang on the parent's threads); the child opens a device of
 * its own, whose runs work; the child exits promptly. The parent's job and its own runs are unharmed. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

static int child(const test_manifest* m, const test_case* tiny, accel_device* d, accel_model* mt, accel_buffer** in,
                 accel_buffer** out, accel_job* running) {
    test_name = "fork (child)";
    const uint64_t t0 = test_now_ns();
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT_STATUS(accel_device_get_info(d, &info), ACCEL_ERR_CLOSED);
    EXPECT(strstr(accel_last_error_message(), "before fork()") != NULL, "message: '%s'", accel_last_error_message());
    accel_buffer* b = NULL;
    EXPECT_STATUS(accel_buffer_alloc(d, 64, &b), ACCEL_ERR_CLOSED);
    EXPECT(b == NULL, "a refused allocation returned a buffer");
    void* host = NULL;
    EXPECT_STATUS(accel_buffer_host_ptr(in[0], &host), ACCEL_ERR_CLOSED);
    EXPECT_STATUS(accel_run(mt, in, 1, out, 1, NULL), ACCEL_ERR_CLOSED);
    EXPECT_STATUS(accel_job_wait(running, -1), ACCEL_ERR_CLOSED);
    int32_t done = 0;
    EXPECT_STATUS(accel_job_poll(running, &done), ACCEL_ERR_CLOSED);
    size_t count = 0;
    EXPECT_STATUS(accel_model_input_count(mt, &count), ACCEL_ERR_CLOSED);
    /* releasing the parent's handles does nothing: no join of threads the child does not have */
    accel_job_release(running);
    accel_buffer_release(in[0]);
    accel_buffer_release(out[0]);
    accel_model_release(mt);
    accel_device_release(d);
    EXPECT(test_now_ns() - t0 < 1000000000ull, "the refusals took %.2f s", (double)(test_now_ns() - t0) / 1e9);

    const char* no_threads = getenv("ACCEL_TEST_FORK_NO_THREADS");
    if (no_threads && no_threads[0] == '1') {
        printf("fork: the child's own device is left out here (ACCEL_TEST_FORK_NO_THREADS=1)\n");
        return test_failures ? 1 : 0;
    }
    test_setup mine;
    test_setup_open(&mine, m, "emu:cores=1", tiny);
    EXPECT_OK(accel_run(mine.model, mine.in, 1, mine.out, 1, NULL));
    test_setup_close(&mine);
    return test_failures ? 1 : 0;
}

int main(int argc, char** argv) {
    test_name = "fork";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    test_pair p;
    test_pair_open(&p, &m, "emu:cores=1", "slow");
    accel_job* running = NULL;
    REQUIRE_OK(accel_job_submit(p.slow.model, p.slow.in, 1, p.slow.out, 1, NULL, &running));
    test_wait_started(running);

    const pid_t pid = fork();
    REQUIRE(pid >= 0, "fork failed");
    if (pid == 0) _exit(child(&m, p.tiny.c, p.device, p.tiny.model, p.tiny.in, p.tiny.out, running));

    const uint64_t t0 = test_now_ns();
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid, "waitpid failed");
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status 0x%x)", status);
    EXPECT(test_now_ns() - t0 < 10000000000ull, "the child took %.1f s", (double)(test_now_ns() - t0) / 1e9);

    EXPECT_OK(accel_job_wait(running, -1));
    EXPECT(test_compare_output(p.slow.c, 0, p.slow.out[0], "the parent's job"), "wrong result after the fork");
    EXPECT_OK(accel_run(p.tiny.model, p.tiny.in, 1, p.tiny.out, 1, NULL));
    accel_job_release(running);
    test_pair_close(&p);
    test_manifest_free(&m);
    return test_finish();
}
