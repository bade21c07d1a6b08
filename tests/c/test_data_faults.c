/* data_faults: a value a run brings that an op reads as a position (a gather index, an RNN's sequence
 * length) and that lies outside the op's range fails the job with ACCEL_ERR_INVALID_ARGUMENT, its message
 * naming the node, the value, where it is and the range (as onnxruntime refuses the run); values inside the
 * range, negative indices included, give onnxruntime's outputs. Through accel_run and through a submitted
 * job; the first faulty position is the one named; a failed job leaves the model whole; and a faulty job
 * among good ones on several cores fails alone. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <string.h>

#include "test_util.h"

/* The case's input `index` with element `at` set to `value` (int64 or int32, as the input is). */
static void set_element(accel_buffer* buf, const test_tensor* t, size_t at, int64_t value) {
    REQUIRE_OK(accel_buffer_write(buf, 0, t->data, t->byte_size));
    if (t->dtype == ACCEL_DTYPE_INT64) {
        REQUIRE_OK(accel_buffer_write(buf, at * sizeof value, &value, sizeof value));
    } else {
        int32_t v32 = (int32_t)value;
        REQUIRE_OK(accel_buffer_write(buf, at * sizeof v32, &v32, sizeof v32));
    }
}

/* accel_run fails with ACCEL_ERR_INVALID_ARGUMENT and a message holding every one of `words`. */
static void expect_refused(accel_model* model, accel_buffer** in, size_t nin, accel_buffer** out, size_t nout,
                           const char* const* words, size_t nwords) {
    accel_status s = accel_run(model, in, nin, out, nout, NULL);
    EXPECT_STATUS(s, ACCEL_ERR_INVALID_ARGUMENT);
    if (s != ACCEL_ERR_INVALID_ARGUMENT) return;
    EXPECT_ERROR_REPORTED(s);
    const char* message = accel_last_error_message();
    for (size_t i = 0; i < nwords; i++)
        EXPECT(strstr(message, words[i]) != NULL, "the message '%s' does not say '%s'", message, words[i]);
}

static void gather_indices(accel_device* d, const test_manifest* m) {
    const test_case* c = test_manifest_find(m, "gather_negative_indices");
    const test_tensor* idx = &c->inputs[1];
    REQUIRE(c->n_inputs == 2 && c->n_outputs == 1 && idx->dtype == ACCEL_DTYPE_INT64 && idx->ndim == 2,
            "gather_negative_indices: unexpected inputs");
    const int64_t* given = idx->data;
    int negatives = 0;
    for (int k = 0; k < 6; k++) negatives += given[k] < 0;
    REQUIRE(negatives >= 2, "gather_negative_indices holds %d negative indices", negatives);
    test_setup set;
    test_setup_on(&set, d, m, c);
    accel_model* model = set.model;
    accel_buffer **in = set.in, **out = set.out;

    /* in range, negative ones counting from the end: onnxruntime's outputs */
    REQUIRE_OK(accel_run(model, in, 2, out, 1, NULL));
    EXPECT(test_compare_output(c, 0, out[0], "gather_negative_indices"), "in-range indices differ");

    /* x has 5 rows: -5..4. Element 4 is [1, 1]. */
    const int64_t bad[] = {5, -6, 15, INT64_MAX, INT64_MIN};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        char value[160];
        snprintf(value, sizeof value, "index %lld at [1, 1] of input 1 ('idx') is outside -5..4", (long long)bad[b]);
        const char* words[] = {"node 'n_gather", "(gather)", value, "(input 0 ('x') has 5 along axis 0)"};
        set_element(in[1], idx, 4, bad[b]);
        expect_refused(model, in, 2, out, 1, words, 4);
    }

    /* two faulty indices: the first is named */
    set_element(in[1], idx, 4, 9);
    int64_t early = -7;
    REQUIRE_OK(accel_buffer_write(in[1], 1 * sizeof early, &early, sizeof early));
    const char* first[] = {"index -7 at [0, 1] of input 1"};
    expect_refused(model, in, 2, out, 1, first, 1);

    /* a submitted job ends with the same status, and its wait reports the message */
    accel_job* job = NULL;
    REQUIRE_OK(accel_job_submit(model, in, 2, out, 1, NULL, &job));
    accel_status s = accel_job_wait(job, -1);
    EXPECT_STATUS(s, ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(strstr(accel_last_error_message(), "index -7 at [0, 1]") != NULL, "wait's message: '%s'",
           accel_last_error_message());
    accel_job_release(job);

    /* the model is whole: the given indices run again */
    set_element(in[1], idx, 0, given[0]);
    EXPECT_OK(accel_run(model, in, 2, out, 1, NULL));
    EXPECT(test_compare_output(c, 0, out[0], "gather_negative_indices after a failed job"), "rerun differs");

    /* good and faulty jobs in flight together on the device's cores: each has its own result (and its own
     * output: a faulty job writes part of its output before it stops, so a shared one would be a race) */
    accel_buffer *bad_in[2], *bad_out[1];
    test_make_io(d, c, bad_in, bad_out);
    set_element(bad_in[1], idx, 5, 5);
    enum { kJobs = 24 };
    accel_job* jobs[kJobs];
    accel_buffer* job_out[kJobs];
    for (int j = 0; j < kJobs; j++) {
        job_out[j] = test_alloc(d, c->outputs[0].byte_size);
        REQUIRE_OK(accel_job_submit(model, j % 2 == 0 ? in : bad_in, 2, &job_out[j], 1, NULL, &jobs[j]));
    }
    for (int j = 0; j < kJobs; j++) {
        s = accel_job_wait(jobs[j], -1);
        if (j % 2 == 0) {
            EXPECT_OK(s);
            EXPECT(test_compare_output(c, 0, job_out[j], "a good job among faulty ones"), "job %d differs", j);
        } else {
            EXPECT_STATUS(s, ACCEL_ERR_INVALID_ARGUMENT);
            if (s == ACCEL_ERR_INVALID_ARGUMENT)
                EXPECT(strstr(accel_last_error_message(), "index 5 at [1, 2] of input 1 ('idx')") != NULL,
                       "job %d's message: '%s'", j, accel_last_error_message());
        }
        accel_job_release(jobs[j]);
        accel_buffer_release(job_out[j]);
    }
    test_release_io(c, bad_in, bad_out);
    test_setup_close(&set);
}

static void rnn_lengths(accel_device* d, const test_manifest* m) {
    const test_case* c = test_manifest_find(m, "rnn_bidirectional");
    REQUIRE(c->n_inputs == 3 && c->inputs[1].dtype == ACCEL_DTYPE_INT32 && c->inputs[0].shape[0] == 5,
            "rnn_bidirectional: unexpected inputs");
    test_setup set;
    test_setup_on(&set, d, m, c);
    accel_model* model = set.model;
    accel_buffer **in = set.in, **out = set.out;
    REQUIRE_OK(accel_run(model, in, 3, out, c->n_outputs, NULL));
    for (size_t o = 0; o < c->n_outputs; o++)
        EXPECT(test_compare_output(c, o, out[o], "rnn_bidirectional"), "out %zu", o);

    /* 5 steps: lengths 0..5 */
    const int64_t bad[] = {6, -1};
    for (size_t b = 0; b < 2; b++) {
        char value[160];
        snprintf(value, sizeof value, "sequence length %lld at [2] of input 4 ('lens') is outside 0..5",
                 (long long)bad[b]);
        const char* words[] = {"node 'n_rnn", "(rnn)", value, "(input 0 ('x') has 5 along axis 0)"};
        set_element(in[1], &c->inputs[1], 2, bad[b]);
        expect_refused(model, in, 3, out, c->n_outputs, words, 4);
    }
    test_setup_close(&set);
}

int main(int argc, char** argv) {
    test_name = "data_faults";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    accel_device* d = test_open("emu:cores=2");
    gather_indices(d, &m);
    rnn_lengths(d, &m);
    accel_device_release(d);
    test_manifest_free(&m);
    return test_finish();
}
