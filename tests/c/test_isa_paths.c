/* test_isa_paths.c - the emulator's vector paths against their portable twins: every "isa_f32" and "isa_q8"
 * case (tests/tools/make_cases.py: float convs over each way the packed conv GEMM reads its input, int8
 * convs and a matmul) is loaded twice on one device, once with ACCEL_EMU_ISA=portable (the portable C++)
 * and once with it unset (the fastest path this CPU has: AVX-512, AVX2, NEON, SDOT...), both run on the
 * case's inputs and every output element compared:
 *   isa_q8   bit-identical (the int8 paths' arithmetic is integer: their bytes are the portable ones);
 *   isa_f32  |path - portable| <= 1e-5 * (1 + max|portable|) per output (the same sums in another order and
 *            with fused multiply-adds: a few float32 roundings of each product's size), and the path's
 *            output within test_compare_output's bound of onnxruntime's.
 * The path a load picks is read at load (math/cpu_isa.h), so the two loads of a case differ only in it.
 * ACCEL_TEST_EXPECT_PATHS (optional): a text the device's name must contain when opened with no cap, e.g.
 * "float: neon, int8: ort rules, neondot)": the cross step runs this test under qemu-user with and without
 * the dot product, and says which paths each run must take. */
#define _POSIX_C_SOURCE 200809L /* setenv, unsetenv */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* The model of case c loaded with ACCEL_EMU_ISA set to `isa` (NULL: unset). */
static accel_model* load_with(accel_device* d, const test_manifest* m, const test_case* c, const char* isa) {
    if (isa) setenv("ACCEL_EMU_ISA", isa, 1);
    else unsetenv("ACCEL_EMU_ISA");
    accel_model* model = test_load(d, m, c);
    unsetenv("ACCEL_EMU_ISA");
    return model;
}

/* Output i of the two runs: the number of elements that differ (bit patterns for int8 models, beyond the
 * bound for float ones), printed with the largest difference. */
static size_t compare_paths(const test_case* c, size_t i, const float* port, const float* fast, int exact) {
    const size_t n = (size_t)(c->outputs[i].byte_size / sizeof(float));
    double scale = 1.0;
    for (size_t j = 0; j < n; j++)
        if (fabs(port[j]) + 1.0 > scale) scale = fabs(port[j]) + 1.0;
    const double bound = exact ? 0.0 : 1e-5 * scale;
    size_t differ = 0, worst = 0;
    double worst_d = 0.0;
    for (size_t j = 0; j < n; j++) {
        const int same_bits = memcmp(&port[j], &fast[j], sizeof(float)) == 0;
        const double d = fabs((double)port[j] - (double)fast[j]);
        const int bad = exact ? !same_bits : !(d <= bound); /* a NaN on either side is bad */
        if (bad) differ++;
        if (bad && (differ == 1 || d > worst_d || isnan(d))) worst = j, worst_d = d;
    }
    printf("isa_paths: %-24s output %zu: %zu elements, %zu differ (bound %s%.3g), largest difference %.3g\n", c->name,
           i, n, differ, exact ? "bit-identical, " : "", bound, worst_d);
    if (differ)
        fprintf(stderr, "isa_paths: %s output %zu: element %zu is %.9g on the portable path, %.9g on the CPU's\n",
                c->name, i, worst, (double)port[worst], (double)fast[worst]);
    return differ;
}

static int run_case(accel_device* d, const test_manifest* m, const test_case* c) {
    const int exact = strcmp(c->tag, "isa_q8") == 0;
    accel_model* model[2] = {load_with(d, m, c, "portable"), load_with(d, m, c, NULL)};
    accel_buffer *in[2][TEST_MAX_IO], *out[2][TEST_MAX_IO];
    REQUIRE(c->n_inputs <= TEST_MAX_IO && c->n_outputs <= TEST_MAX_IO, "%s has too many tensors", c->name);
    for (int p = 0; p < 2; p++) {
        test_make_io(d, c, in[p], out[p]);
        REQUIRE_OK(accel_run(model[p], in[p], c->n_inputs, out[p], c->n_outputs, NULL));
    }
    int ok = 1;
    for (size_t i = 0; i < c->n_outputs; i++) {
        void *port, *fast;
        REQUIRE_OK(accel_buffer_host_ptr(out[0][i], &port));
        REQUIRE_OK(accel_buffer_host_ptr(out[1][i], &fast));
        if (compare_paths(c, i, (const float*)port, (const float*)fast, exact)) ok = 0;
        if (!exact && !test_compare_output(c, i, out[1][i], "the CPU's path against onnxruntime")) ok = 0;
    }
    for (int p = 0; p < 2; p++) {
        test_release_io(c, in[p], out[p]);
        accel_model_release(model[p]);
    }
    return ok;
}

int main(int argc, char** argv) {
    test_name = "isa_paths";
    REQUIRE(argc > 1, "usage: test_isa_paths CASES_DIR");
    test_manifest m;
    test_manifest_load(argv[1], &m);

    unsetenv("ACCEL_EMU_ISA");
    accel_device* d = test_open("emu:cores=2");
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    printf("isa_paths: the CPU's paths: %s\n", info.name);
    const char* expect = getenv("ACCEL_TEST_EXPECT_PATHS");
    if (expect && expect[0])
        EXPECT(strstr(info.name, expect) != NULL, "the device is \"%s\", which does not say \"%s\"", info.name, expect);

    size_t ran[2] = {0, 0}, failed = 0;
    char failed_names[4096] = "";
    for (size_t i = 0; i < m.count; i++) {
        const test_case* c = &m.cases[i];
        const int q8 = strcmp(c->tag, "isa_q8") == 0;
        if (!q8 && strcmp(c->tag, "isa_f32") != 0) continue;
        ran[q8]++;
        if (c->compile_error[0]) {
            fprintf(stderr, "isa_paths: %s: accel.compiler could not compile the case: %s\n", c->name,
                    c->compile_error);
        } else if (run_case(d, &m, c)) {
            continue;
        }
        failed++;
        size_t used = strlen(failed_names);
        snprintf(failed_names + used, sizeof failed_names - used, " %s", c->name);
    }
    printf("isa_paths: %zu float and %zu int8 cases, %zu failed\n", ran[0], ran[1], failed);
    EXPECT(ran[0] > 0 && ran[1] > 0, "the manifest has no isa_f32 or no isa_q8 case");
    EXPECT(failed == 0, "%zu case(s) differ between the portable path and the CPU's:%s", failed, failed_names);
    accel_device_release(d);
    test_manifest_free(&m);
    return test_finish();
}
