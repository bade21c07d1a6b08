/* ops: every generated case (tests/tools/make_cases.py) runs on emu and matches onnxruntime:
 * max abs error <= 1e-4 * max(1, max|expected|). Also checks each model's input/output info (names,
 * dtype, shape, dense strides, byte size), loading from a file and from memory, that the loaded model
 * does not depend on the file or the memory it came from, and the errors of a wrong submission. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* Checks one tensor's info against the manifest; returns 1 if it matches. */
static int check_info(const char* cname, const char* kind, size_t index, const accel_tensor_info* info,
                      const test_tensor* want) {
    int ok = 1;
#define INFO_EXPECT(cond, ...)                                        \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stderr, "ops: %s: %s %zu: ", cname, kind, index); \
            fprintf(stderr, __VA_ARGS__);                             \
            fputc('\n', stderr);                                      \
            ok = 0;                                                   \
        }                                                             \
    } while (0)
    INFO_EXPECT(info->name != NULL, "name is NULL");
    if (info->name)
        INFO_EXPECT(strcmp(info->name, want->name) == 0, "name '%s', expected '%s'", info->name, want->name);
    INFO_EXPECT(info->dtype == want->dtype, "dtype %s, expected %s", accel_dtype_name(info->dtype),
                accel_dtype_name(want->dtype));
    INFO_EXPECT(info->ndim == want->ndim, "ndim %u, expected %u", info->ndim, want->ndim);
    int64_t stride = (int64_t)accel_dtype_size(want->dtype);
    for (int i = (int)want->ndim - 1; i >= 0 && info->ndim == want->ndim; i--) {
        INFO_EXPECT(info->shape[i] == want->shape[i], "shape[%d] %lld, expected %lld", i, (long long)info->shape[i],
                    (long long)want->shape[i]);
        INFO_EXPECT(info->strides[i] == stride, "strides[%d] %lld, expected the dense %lld", i,
                    (long long)info->strides[i], (long long)stride);
        stride *= want->shape[i];
    }
    INFO_EXPECT(info->byte_size == want->byte_size, "byte_size %llu, expected %llu",
                (unsigned long long)info->byte_size, (unsigned long long)want->byte_size);
    INFO_EXPECT(info->layout == ACCEL_LAYOUT_NONE ||
                    ((info->layout == ACCEL_LAYOUT_NCHW || info->layout == ACCEL_LAYOUT_NHWC) && info->ndim == 4),
                "layout %d with ndim %u", (int)info->layout, info->ndim);
    INFO_EXPECT(info->quant.type == ACCEL_QUANT_NONE, "quantization type %d for a float model", (int)info->quant.type);
#undef INFO_EXPECT
    return ok;
}

/* Loads, checks, runs (twice) and compares one case; returns 1 if everything matched. */
static int run_case(accel_device* d, const test_manifest* m, const test_case* c, int from_memory) {
    char* path = test_case_model_path(m, c);
    accel_model* model = NULL;
    accel_status s;
    if (from_memory) {
        size_t size = 0;
        void* bytes = test_read_file(path, &size);
        s = accel_model_load_memory(d, bytes, size, &model);
        memset(bytes, 0, size); /* "the bytes are only read during the call" */
        free(bytes);
    } else {
        s = accel_model_load_file(d, path, &model);
    }
    free(path);
    if (s != ACCEL_OK) {
        fprintf(stderr, "ops: %s: loading from %s gave %s: %s\n", c->name, from_memory ? "memory" : "file",
                accel_status_name(s), accel_last_error_message());
        return 0;
    }
    int ok = 1;
    size_t nin = 99, nout = 99;
    EXPECT_OK(accel_model_input_count(model, &nin));
    EXPECT_OK(accel_model_output_count(model, &nout));
    if (nin != c->n_inputs || nout != c->n_outputs) {
        fprintf(stderr, "ops: %s: %zu inputs and %zu outputs, expected %zu and %zu\n", c->name, nin, nout, c->n_inputs,
                c->n_outputs);
        accel_model_release(model);
        return 0;
    }
    for (size_t i = 0; i < nin; i++) {
        accel_tensor_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(accel_model_input_info(model, i, &info));
        ok &= check_info(c->name, "input", i, &info, &c->inputs[i]);
    }
    for (size_t i = 0; i < nout; i++) {
        accel_tensor_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        EXPECT_OK(accel_model_output_info(model, i, &info));
        ok &= check_info(c->name, "output", i, &info, &c->outputs[i]);
    }
    if (!ok) {
        accel_model_release(model);
        return 0;
    }

    accel_buffer* in[16];
    accel_buffer* out[16];
    REQUIRE(nin <= 16 && nout <= 16, "too many tensors");
    test_make_io(d, c, in, out);
    s = accel_run(model, in, nin, out, nout, NULL);
    if (s != ACCEL_OK) {
        fprintf(stderr, "%s: %s: accel_run gave %s: %s\n", test_name, c->name, accel_status_name(s),
                accel_last_error_message());
        ok = 0;
    } else {
        /* keep the first results, run again with poisoned outputs: same bits (no state kept between runs,
         * every output element written) */
        void* first[16];
        for (size_t i = 0; i < nout; i++) {
            char what[320];
            snprintf(what, sizeof what, "%s: output %zu ('%s')", c->name, i, c->outputs[i].name);
            ok &= test_compare_output(c, i, out[i], what);
            first[i] = malloc(c->outputs[i].byte_size + 1);
            REQUIRE(first[i], "out of memory");
            REQUIRE_OK(accel_buffer_read(out[i], 0, first[i], c->outputs[i].byte_size));
            void* p = NULL;
            REQUIRE_OK(accel_buffer_host_ptr(out[i], &p));
            memset(p, 0xFF, (size_t)c->outputs[i].byte_size);
        }
        s = accel_run(model, in, nin, out, nout, NULL);
        if (s != ACCEL_OK) {
            fprintf(stderr, "ops: %s: the second accel_run gave %s: %s\n", c->name, accel_status_name(s),
                    accel_last_error_message());
            ok = 0;
        }
        for (size_t i = 0; i < nout; i++) {
            void* p = NULL;
            REQUIRE_OK(accel_buffer_host_ptr(out[i], &p));
            if (s == ACCEL_OK && memcmp(p, first[i], (size_t)c->outputs[i].byte_size) != 0) {
                fprintf(stderr, "ops: %s: output %zu differs between two runs on the same inputs\n", c->name, i);
                ok = 0;
            }
            free(first[i]);
        }
        /* the inputs are not modified by a run */
        for (size_t i = 0; i < nin; i++) {
            void* p = NULL;
            REQUIRE_OK(accel_buffer_host_ptr(in[i], &p));
            if (memcmp(p, c->inputs[i].data, (size_t)c->inputs[i].byte_size) != 0) {
                fprintf(stderr, "ops: %s: the run modified input %zu\n", c->name, i);
                ok = 0;
            }
        }
    }
    test_release_io(c, in, out);
    accel_model_release(model);
    return ok;
}

static void submission_errors(accel_device* d, const test_manifest* m) {
    const test_case* c = test_manifest_find(m, "small_cnn");
    REQUIRE(c->n_inputs == 1 && c->n_outputs == 1, "small_cnn has one input and one output");
    test_setup set; /* its second slots hold the first buffers again: a count one too many */
    test_setup_on(&set, d, m, c);
    accel_model* model = set.model;
    accel_buffer **in = set.in, **out = set.out;
    in[1] = in[0];
    out[1] = out[0];
    accel_job* job = (accel_job*)(uintptr_t)0x40;

    /* wrong counts */
    EXPECT_STATUS(accel_run(model, in, 0, out, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_ERROR_REPORTED(ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_run(model, in, 2, out, 1, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_run(model, in, 1, out, 0, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_run(model, in, 1, out, 2, NULL), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_submit(model, in, 2, out, 1, NULL, &job), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_submit(model, NULL, 1, out, 1, NULL, &job), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_submit(model, in, 1, NULL, 1, NULL, &job), ACCEL_ERR_INVALID_ARGUMENT);
    accel_buffer* null_buf[1] = {NULL};
    EXPECT_STATUS(accel_job_submit(model, null_buf, 1, out, 1, NULL, &job), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_job_submit(model, in, 1, null_buf, 1, NULL, &job), ACCEL_ERR_INVALID_ARGUMENT);
    accel_run_options unset;
    memset(&unset, 0, sizeof unset);
    EXPECT_STATUS(accel_job_submit(model, in, 1, out, 1, &unset, &job), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT(job == (accel_job*)(uintptr_t)0x40, "out_job changed on failure");

    /* an input buffer smaller than the tensor: ACCEL_ERR_SHAPE naming the input */
    uint64_t need = c->inputs[0].byte_size;
    REQUIRE(need > 128, "small_cnn's input is too small for this test");
    accel_buffer* short_in = test_alloc(d, need - 64);
    uint64_t have = 0;
    REQUIRE_OK(accel_buffer_size(short_in, &have));
    REQUIRE(have < need, "a buffer of %llu bytes has usable size %llu >= %llu", (unsigned long long)(need - 64),
            (unsigned long long)have, (unsigned long long)need);
    accel_status s = accel_job_submit(model, &short_in, 1, out, 1, NULL, &job);
    EXPECT(s == ACCEL_ERR_SHAPE, "a short input buffer gave %s", accel_status_name(s));
    if (s != ACCEL_OK) {
        EXPECT_ERROR_REPORTED(s);
        EXPECT(strstr(accel_last_error_message(), c->inputs[0].name) != NULL,
               "the message does not name the input '%s': '%s'", c->inputs[0].name, accel_last_error_message());
    }
    EXPECT(job == (accel_job*)(uintptr_t)0x40, "out_job changed on failure");
    accel_buffer_release(short_in);

    /* an output buffer smaller than the tensor (imported, so its size is exact) */
    uint64_t out_need = c->outputs[0].byte_size;
    void* host = NULL;
    REQUIRE(posix_memalign(&host, 64, 4096) == 0, "posix_memalign");
    accel_buffer* short_out = NULL;
    REQUIRE_OK(accel_buffer_import(d, host, out_need - 4, &short_out));
    s = accel_run(model, in, 1, &short_out, 1, NULL);
    EXPECT(s == ACCEL_ERR_SHAPE, "a short output buffer gave %s", accel_status_name(s));
    if (s != ACCEL_OK)
        EXPECT(strstr(accel_last_error_message(), c->outputs[0].name) != NULL,
               "the message does not name the output '%s': '%s'", c->outputs[0].name, accel_last_error_message());
    accel_buffer_release(short_out);
    /* an imported output of the exact size works, and receives the result in place */
    accel_buffer* exact_out = NULL;
    REQUIRE_OK(accel_buffer_import(d, host, out_need, &exact_out));
    EXPECT_OK(accel_run(model, in, 1, &exact_out, 1, NULL));
    EXPECT(test_compare_floats(host, c->outputs[0].data, (size_t)(out_need / 4), "small_cnn into imported memory"),
           "wrong result in an imported output buffer");
    accel_buffer_release(exact_out);
    free(host);
    /* bigger buffers than needed are fine */
    accel_buffer* big_in = test_alloc(d, need + 4096);
    REQUIRE_OK(accel_buffer_write(big_in, 0, c->inputs[0].data, need));
    EXPECT_OK(accel_run(model, &big_in, 1, out, 1, NULL));
    EXPECT(test_compare_output(c, 0, out[0], "small_cnn with a bigger input buffer"), "wrong result");
    accel_buffer_release(big_in);

    /* outputs and inputs alias by memory, not by handle nor start address: imports of one caller array that
     * overlap only in part are refused, naming both; the same bytes side by side are fine */
    unsigned char* shared = NULL;
    REQUIRE(posix_memalign((void**)&shared, 64, (size_t)(need + out_need + 128)) == 0, "posix_memalign");
    accel_buffer *whole_in = NULL, *inside_out = NULL, *after_out = NULL;
    REQUIRE_OK(accel_buffer_import(d, shared, need, &whole_in));
    REQUIRE_OK(accel_buffer_write(whole_in, 0, c->inputs[0].data, need));
    REQUIRE_OK(accel_buffer_import(d, shared + 64, out_need, &inside_out));
    s = accel_run(model, &whole_in, 1, &inside_out, 1, NULL);
    EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "an output inside its input's memory gave %s", accel_status_name(s));
    if (s != ACCEL_OK)
        EXPECT(strstr(accel_last_error_message(), "shares memory with input") != NULL,
               "the message does not say the output shares the input's memory: '%s'", accel_last_error_message());
    REQUIRE_OK(accel_buffer_import(d, shared + (((need + 63) / 64) * 64), out_need, &after_out));
    EXPECT_OK(accel_run(model, &whole_in, 1, &after_out, 1, NULL));
    EXPECT(test_compare_output(c, 0, after_out, "small_cnn into memory right after its input"), "wrong result");
    accel_buffer_release(whole_in);
    accel_buffer_release(inside_out);
    accel_buffer_release(after_out);
    free(shared);

    /* info: bad index; a smaller struct_size is honoured */
    accel_tensor_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    EXPECT_STATUS(accel_model_input_info(model, 1, &info), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_output_info(model, 5, &info), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_model_input_info(model, (size_t)-1, &info), ACCEL_ERR_INVALID_ARGUMENT);
    unsigned char raw[sizeof(accel_tensor_info) + 16];
    memset(raw, 0xA5, sizeof raw);
    uint32_t small = (uint32_t)offsetof(accel_tensor_info, strides);
    memcpy(raw, &small, sizeof small);
    EXPECT_OK(accel_model_input_info(model, 0, (accel_tensor_info*)(void*)raw));
    for (size_t i = small; i < sizeof raw; i++)
        if (raw[i] != 0xA5) {
            EXPECT(0, "accel_model_input_info wrote byte %zu past struct_size %u", i, small);
            break;
        }
    accel_tensor_info partial;
    memcpy(&partial, raw, small);
    EXPECT(partial.ndim == c->inputs[0].ndim && partial.shape[1] == c->inputs[0].shape[1],
           "a small struct_size got wrong leading fields");

    test_setup_close(&set);
}

/* A model whose file is changed and deleted after load still runs: the weights were copied at load. */
static void file_deleted_after_load(accel_device* d, const test_manifest* m) {
    const test_case* c = test_manifest_find(m, "small_cnn");
    char* src = test_case_model_path(m, c);
    size_t size = 0;
    unsigned char* bytes = test_read_file(src, &size);
    char name[64];
    snprintf(name, sizeof name, "deleted_after_load_%ld.accm", (long)getpid());
    char* tmp = test_path(m->dir, name);
    FILE* f = fopen(tmp, "wb");
    REQUIRE(f && fwrite(bytes, 1, size, f) == size && fclose(f) == 0, "cannot write %s", tmp);
    accel_model* model = NULL;
    REQUIRE_OK(accel_model_load_file(d, tmp, &model));
    f = fopen(tmp, "r+b");
    REQUIRE(f, "cannot reopen %s", tmp);
    memset(bytes, 0x7F, size); /* overwrite every weight, then delete the file */
    REQUIRE(fwrite(bytes, 1, size, f) == size && fclose(f) == 0, "cannot overwrite %s", tmp);
    REQUIRE(unlink(tmp) == 0, "cannot delete %s", tmp);
    accel_buffer *in[1], *out[1];
    test_make_io(d, c, in, out);
    EXPECT_OK(accel_run(model, in, 1, out, 1, NULL));
    EXPECT(test_compare_output(c, 0, out[0], "small_cnn after its file was overwritten and deleted"),
           "the model changed when its file was overwritten and deleted after load");
    accel_model* again = (accel_model*)(uintptr_t)0x40;
    accel_status s = accel_model_load_file(d, tmp, &again);
    EXPECT(s == ACCEL_ERR_NOT_FOUND, "loading a deleted file gave %s", accel_status_name(s));
    EXPECT(again == (accel_model*)(uintptr_t)0x40, "out_model changed on failure");
    test_release_io(c, in, out);
    accel_model_release(model);
    free(bytes);
    free(tmp);
    free(src);
}

int main(int argc, char** argv) {
    test_name = "ops";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    /* optional: the device URI (ops_debug runs every case with guard bytes checked after each job) */
    const char* uri = argc > 2 ? argv[2] : "emu:cores=2";
    if (strstr(uri, "debug=1")) test_name = "ops_debug";
    const char* only = getenv("ACCEL_TEST_ONLY"); /* optional: run one case by name */
    if (only && !only[0]) only = NULL;

    accel_device* d = test_open(uri);
    size_t passed = 0, failed = 0, ran = 0;
    char failed_names[8192] = "";
    for (size_t i = 0; i < m.count; i++) {
        const test_case* c = &m.cases[i];
        if (only && strcmp(c->name, only) != 0) continue;
        if (strcmp(c->tag, "slow") == 0) continue; /* the scheduling tests run it */
        ran++;
        int ok;
        if (c->compile_error[0]) {
            fprintf(stderr, "ops: %s: accel.compiler could not compile the case: %s\n", c->name, c->compile_error);
            ok = 0;
        } else {
            /* every case from its file; every third one also from memory */
            ok = run_case(d, &m, c, 0);
            if (i % 3 == 0) ok &= run_case(d, &m, c, 1);
        }
        if (ok) {
            passed++;
        } else {
            failed++;
            size_t used = strlen(failed_names);
            snprintf(failed_names + used, sizeof failed_names - used, " %s", c->name);
        }
    }
    printf("ops: %zu of %zu cases passed\n", passed, ran);
    EXPECT(ran > 0, "no case ran");
    EXPECT(failed == 0, "%zu case(s) failed:%s", failed, failed_names);

    if (!only) {
        submission_errors(d, &m);
        file_deleted_after_load(d, &m);
    }
    /* in debug mode, no kernel wrote outside its buffers */
    EXPECT_OK(accel_device_check(d));

    /* nothing leaked: every buffer, model and workspace went back to the pool (allowing the driver a
     * moment to drop a finished job's references; release_while_running checks that this is immediate) */
    accel_memory_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    uint64_t deadline = test_now_ns() + 2ull * 1000 * 1000 * 1000;
    do {
        EXPECT_OK(accel_device_get_stats(d, &st));
        if (st.live_buffers == 0 && st.bytes_in_use == 0) break;
        test_sleep_ms(5);
    } while (test_now_ns() < deadline);
    EXPECT(st.live_buffers == 0, "%llu buffers still live after every case released its own",
           (unsigned long long)st.live_buffers);
    EXPECT(st.bytes_in_use == 0, "%llu pool bytes in use after every model and buffer was released",
           (unsigned long long)st.bytes_in_use);
    accel_device_release(d);
    test_manifest_free(&m);
    return test_finish();
}
