/* node_times: per-node profiling on the emulator (ABI 1.1). A model lists its nodes as the device runs
 * them (names from the model file, op types with fused activations); a job submitted with
 * ACCEL_SUBMIT_PROFILE_NODES reports one start/end per node, in order, within the job's own timing;
 * before it finished that is ACCEL_ERR_NOT_READY, without the flag ACCEL_ERR_UNSUPPORTED; capacity 0
 * asks for the count and a short array gets the first entries only. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <string.h>

#include "test_util.h"

/* Whether `needle` occurs in the model file's bytes (its string table holds every node name). */
static int in_bytes(const unsigned char* bytes, size_t size, const char* needle) {
    size_t n = strlen(needle);
    for (size_t i = 0; n && i + n <= size; i++)
        if (memcmp(bytes + i, needle, n) == 0) return 1;
    return 0;
}

static accel_run_options profiled_options(void) {
    accel_run_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.flags = ACCEL_SUBMIT_PROFILE_NODES;
    return o;
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static accel_status in_callback = -1;
static size_t in_callback_count;

static void callback(accel_job* job, accel_status status, void* user_data) {
    (void)status;
    (void)user_data;
    size_t count = 0;
    accel_status s = accel_job_get_node_times(job, NULL, 0, &count);
    pthread_mutex_lock(&mu);
    in_callback = s;
    in_callback_count = count;
    pthread_mutex_unlock(&mu);
}

static void check_nodes(accel_model* model, const unsigned char* file, size_t file_size, size_t* out_count) {
    size_t count = 0;
    REQUIRE_OK(accel_model_get_node_count(model, &count));
    REQUIRE(count >= 5, "small_cnn runs as %zu nodes, expected at least 5", count);
    int softmax = 0, maxpool = 0;
    for (size_t i = 0; i < count; i++) {
        accel_node_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        REQUIRE_OK(accel_model_get_node_info(model, i, &info));
        REQUIRE(info.name && info.op_type, "node %zu: a NULL string", i);
        EXPECT(info.name[0] && in_bytes(file, file_size, info.name), "node %zu's name '%s' is not in the model file", i,
               info.name);
        EXPECT(info.op_type[0] != '\0', "node %zu has an empty op type", i);
        softmax += strcmp(info.op_type, "Softmax") == 0;
        maxpool += strcmp(info.op_type, "MaxPool") == 0;
        if (i == 0)
            EXPECT(strcmp(info.op_type, "Conv+Relu") == 0,
                   "the first node (Conv, BatchNormalization and Relu fused) is '%s', expected 'Conv+Relu'",
                   info.op_type);
    }
    EXPECT(softmax == 1 && maxpool == 1, "small_cnn has %d Softmax and %d MaxPool nodes, expected one each", softmax,
           maxpool);
    accel_node_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    accel_status s = accel_model_get_node_info(model, count, &info);
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "node index %zu of %zu gave %s", count, count, accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    /* a caller built against a smaller struct: only its bytes are written */
    struct {
        accel_node_info info;
        uint64_t canary;
    } small;
    memset(&small, 0xAB, sizeof small);
    small.info.struct_size = (uint32_t)offsetof(accel_node_info, op_type);
    EXPECT_OK(accel_model_get_node_info(model, 0, &small.info));
    unsigned char after[sizeof(const char*)];
    memcpy(after, &small.info.op_type, sizeof after);
    EXPECT(after[0] == 0xAB && after[sizeof after - 1] == 0xAB, "op_type was written past the caller's struct_size");
    *out_count = count;
}

static void check_times(accel_job* job, size_t count) {
    size_t got = 0;
    REQUIRE_OK(accel_job_get_node_times(job, NULL, 0, &got));
    EXPECT(got == count, "capacity 0: %zu nodes, the model has %zu", got, count);
    accel_node_time* t = (accel_node_time*)calloc(count + 1, sizeof *t);
    REQUIRE(t, "out of memory");
    /* a short array: the first two entries, the count in full */
    memset(t, 0xCD, (count + 1) * sizeof *t);
    got = 0;
    EXPECT_OK(accel_job_get_node_times(job, t, 2, &got));
    EXPECT(got == count, "capacity 2: count %zu, expected %zu", got, count);
    EXPECT(t[2].started_ns == 0xCDCDCDCDCDCDCDCDull, "capacity 2 wrote a third entry");
    EXPECT(t[0].started_ns != 0xCDCDCDCDCDCDCDCDull && t[1].finished_ns != 0xCDCDCDCDCDCDCDCDull,
           "capacity 2 left the first entries unwritten");
    /* the whole array (one spare entry stays untouched) */
    memset(t, 0xCD, (count + 1) * sizeof *t);
    REQUIRE_OK(accel_job_get_node_times(job, t, count + 1, &got));
    EXPECT(got == count, "count %zu, expected %zu", got, count);
    EXPECT(t[count].started_ns == 0xCDCDCDCDCDCDCDCDull, "an entry past the node count was written");
    accel_job_timing timing = test_timing(job);
    for (size_t i = 0; i < count; i++) {
        EXPECT(t[i].started_ns != 0 && t[i].started_ns <= t[i].finished_ns, "node %zu: start %llu, end %llu", i,
               (unsigned long long)t[i].started_ns, (unsigned long long)t[i].finished_ns);
        if (i) EXPECT(t[i].started_ns >= t[i - 1].finished_ns, "node %zu starts before node %zu ended", i, i - 1);
        EXPECT(t[i].started_ns >= timing.started_ns && t[i].finished_ns <= timing.finished_ns,
               "node %zu [%llu, %llu] is outside its job [%llu, %llu] (one clock for both)", i,
               (unsigned long long)t[i].started_ns, (unsigned long long)t[i].finished_ns,
               (unsigned long long)timing.started_ns, (unsigned long long)timing.finished_ns);
    }
    free(t);
}

int main(int argc, char** argv) {
    test_name = "node_times";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    test_pair p;
    test_pair_open(&p, &m, "emu:cores=1", "slow");
    const test_case* cnn = test_manifest_find(&m, "small_cnn");
    char* path = test_case_model_path(&m, cnn);
    size_t file_size = 0;
    unsigned char* file = (unsigned char*)test_read_file(path, &file_size);
    test_setup on_cnn;
    test_setup_on(&on_cnn, p.device, &m, cnn);
    accel_model* model = on_cnn.model;
    accel_buffer **in = on_cnn.in, **out = on_cnn.out;

    size_t count = 0;
    check_nodes(model, file, file_size, &count);

    /* without the flag: nothing recorded, UNSUPPORTED (also before it ran) */
    accel_job* plain = NULL;
    REQUIRE_OK(accel_job_submit(model, in, 1, out, 1, NULL, &plain));
    size_t got = 0;
    accel_status s = accel_job_get_node_times(plain, NULL, 0, &got);
    EXPECT(s == ACCEL_ERR_UNSUPPORTED, "a job without ACCEL_SUBMIT_PROFILE_NODES gave %s", accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    REQUIRE_OK(accel_job_wait(plain, -1));
    s = accel_job_get_node_times(plain, NULL, 0, &got);
    EXPECT(s == ACCEL_ERR_UNSUPPORTED, "a finished job without ACCEL_SUBMIT_PROFILE_NODES gave %s",
           accel_status_name(s));
    accel_job_release(plain);

    /* queued behind the slow model on the one core: NOT_READY until it finished */
    accel_job* slow = NULL;
    REQUIRE_OK(accel_job_submit(p.slow.model, p.slow.in, 1, p.slow.out, 1, NULL, &slow));
    accel_run_options o = profiled_options();
    o.callback = callback;
    accel_job* job = NULL;
    REQUIRE_OK(accel_job_submit(model, in, 1, out, 1, &o, &job));
    accel_node_time early[1];
    s = accel_job_get_node_times(job, early, 1, &got);
    EXPECT(s == ACCEL_ERR_NOT_READY, "a queued job's node times gave %s", accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    s = accel_job_get_node_times(job, NULL, 1, &got);
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "times NULL with capacity 1 gave %s", accel_status_name(s));
    REQUIRE_OK(accel_job_wait(slow, -1));
    REQUIRE_OK(accel_job_wait(job, -1));
    EXPECT(test_compare_output(cnn, 0, out[0], "small_cnn profiled"), "a profiled run gave a wrong result");
    check_times(job, count);
    pthread_mutex_lock(&mu);
    EXPECT(in_callback == ACCEL_OK && in_callback_count == count,
           "inside its callback the job's node times gave %s, count %zu", accel_status_name(in_callback),
           in_callback_count);
    pthread_mutex_unlock(&mu);
    accel_job_release(job);
    accel_job_release(slow);

    /* a job that times out while it runs: the nodes it never reached read 0, 0. Half of the run time as the
     * timeout; a loaded machine can stretch one run past the measured ones, so a few tries, each measured anew. */
    size_t slow_nodes = 0;
    REQUIRE_OK(accel_model_get_node_count(p.slow.model, &slow_nodes));
    REQUIRE(slow_nodes >= 3, "the slow model runs as %zu nodes", slow_nodes);
    s = ACCEL_OK;
    for (int attempt = 0; attempt < 5 && s != ACCEL_ERR_TIMEOUT; attempt++) {
        if (attempt) accel_job_release(job);
        uint64_t slow_ns = UINT64_MAX;
        for (int i = 0; i < 2; i++) {
            uint64_t t0 = test_now_ns();
            REQUIRE_OK(accel_run(p.slow.model, p.slow.in, 1, p.slow.out, 1, NULL));
            uint64_t took = test_now_ns() - t0;
            if (took < slow_ns) slow_ns = took;
        }
        o = profiled_options();
        o.timeout_us = (int64_t)(slow_ns / 2000); /* half its run: the first node runs, the last does not */
        REQUIRE_OK(accel_job_submit(p.slow.model, p.slow.in, 1, p.slow.out, 1, &o, &job));
        s = accel_job_wait(job, -1);
    }
    EXPECT(s == ACCEL_ERR_TIMEOUT, "the slow model with half its run time as timeout gave %s (5 tries)",
           accel_status_name(s));
    accel_node_time* cut = (accel_node_time*)calloc(slow_nodes, sizeof *cut);
    REQUIRE(cut, "out of memory");
    EXPECT_OK(accel_job_get_node_times(job, cut, slow_nodes, &got));
    EXPECT(cut[0].started_ns && cut[0].finished_ns >= cut[0].started_ns, "the first node did not run");
    EXPECT(cut[slow_nodes - 1].started_ns == 0 && cut[slow_nodes - 1].finished_ns == 0,
           "the last node of a job that timed out halfway has times %llu, %llu",
           (unsigned long long)cut[slow_nodes - 1].started_ns, (unsigned long long)cut[slow_nodes - 1].finished_ns);
    free(cut);
    accel_job_release(job);

    /* a profiled synchronous run, and the next plain one is unprofiled again */
    o = profiled_options();
    EXPECT_OK(accel_run(model, in, 1, out, 1, &o));

    test_setup_close(&on_cnn);
    free(file);
    free(path);
    test_pair_close(&p);
    test_manifest_free(&m);
    return test_finish();
}
