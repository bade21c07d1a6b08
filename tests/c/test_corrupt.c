/* corrupt: the .accm reader never crashes. The base model's bytes, then many mutated variants: every
 * truncation length on a grid plus every short length, random byte flips (fixed seed), every header
 * field and every field of every tensor and node record set to 0, all-ones and huge values, io and edge
 * table entries out of range. Each load returns ACCEL_OK or ACCEL_ERR_MODEL_FORMAT (a non-empty message
 * on failure, out_model untouched); truncations must all fail; a variant that loads is run once and must
 * not crash. Each variant is loaded from its own exactly-sized heap block, so that ASan sees any read
 * past its end. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static accel_device* g_dev;
static const test_case* g_case;
static size_t g_loads, g_loaded, g_ran_ok, g_bad_status;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static uint64_t rd(const unsigned char* p, size_t width) {
    uint64_t v = 0;
    for (size_t i = 0; i < width; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}
static void wr(unsigned char* p, size_t width, uint64_t v) {
    for (size_t i = 0; i < width; i++) p[i] = (unsigned char)(v >> (8 * i));
}

/* Runs a model that loaded from corrupt bytes once: any status, but no crash. */
static void run_once(accel_model* model) {
    size_t nin = 0, nout = 0;
    if (accel_model_input_count(model, &nin) != ACCEL_OK || accel_model_output_count(model, &nout) != ACCEL_OK) return;
    EXPECT(nin >= 1 && nin <= 4096 && nout >= 1 && nout <= 4096, "a loaded model has %zu inputs, %zu outputs", nin,
           nout);
    if (nin > 16 || nout > 16) return;
    accel_buffer* in[16] = {0};
    accel_buffer* out[16] = {0};
    int ready = 1;
    for (size_t k = 0; k < nin + nout && ready; k++) {
        accel_tensor_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        accel_status s =
            k < nin ? accel_model_input_info(model, k, &info) : accel_model_output_info(model, k - nin, &info);
        EXPECT(s == ACCEL_OK, "info of tensor %zu of a loaded model: %s", k, accel_status_name(s));
        if (s != ACCEL_OK) return;
        EXPECT(info.name != NULL, "a loaded model has a tensor with a NULL name");
        EXPECT(info.ndim <= ACCEL_MAX_DIMS, "a loaded model has a tensor with ndim %u", info.ndim);
        accel_buffer** slot = k < nin ? &in[k] : &out[k - nin];
        uint64_t size = info.byte_size ? info.byte_size : 1;
        if (size > (16u << 20) || accel_buffer_alloc(g_dev, size, slot) != ACCEL_OK) {
            ready = 0;
            break;
        }
        void* p = NULL;
        accel_buffer_host_ptr(*slot, &p);
        if (k < nin && k < g_case->n_inputs && info.byte_size == g_case->inputs[k].byte_size)
            memcpy(p, g_case->inputs[k].data, (size_t)info.byte_size);
        else memset(p, 0, (size_t)size);
    }
    if (ready) {
        accel_status s = accel_run(model, in, nin, out, nout, NULL);
        EXPECT(s >= ACCEL_OK && s <= ACCEL_ERR_INTERNAL && s != ACCEL_ERR_INTERNAL,
               "running a model that loaded from corrupt bytes gave %s (%d)", accel_status_name(s), (int)s);
        if (s == ACCEL_OK) g_ran_ok++;
    }
    for (size_t k = 0; k < 16; k++) {
        accel_buffer_release(in[k]);
        accel_buffer_release(out[k]);
    }
}

/* Loads `len` bytes (copied into an exactly-sized block); returns the status. */
static accel_status try_load(const unsigned char* bytes, size_t len, const char* what) {
    unsigned char* copy = malloc(len ? len : 1);
    REQUIRE(copy, "out of memory");
    if (len) memcpy(copy, bytes, len);
    accel_model* model = (accel_model*)(uintptr_t)0x40;
    accel_status s = accel_model_load_memory(g_dev, copy, len, &model);
    g_loads++;
    if (s == ACCEL_OK) {
        REQUIRE(model && model != (accel_model*)(uintptr_t)0x40, "%s: loaded OK without a model", what);
        g_loaded++;
        if (getenv("ACCEL_TEST_VERBOSE")) printf("corrupt: loads: %s\n", what);
        memset(copy, 0xEE, len); /* the model must not keep pointers into the caller's bytes */
        run_once(model);
        accel_model_release(model);
    } else {
        if (s != ACCEL_ERR_MODEL_FORMAT) {
            g_bad_status++;
            EXPECT(0, "%s: loading gave %s, expected ACCEL_OK or ACCEL_ERR_MODEL_FORMAT (%s)", what,
                   accel_status_name(s), accel_last_error_message());
        }
        EXPECT(accel_last_error_message()[0] != '\0', "%s: %s with an empty message", what, accel_status_name(s));
        EXPECT(accel_last_error_status() == s, "%s: last error status %s, returned %s", what,
               accel_status_name(accel_last_error_status()), accel_status_name(s));
        EXPECT(model == (accel_model*)(uintptr_t)0x40, "%s: out_model changed on failure", what);
    }
    free(copy);
    return s;
}

/* Sets a field of `width` bytes at `off` to each of `values` in turn and loads. */
static void mutate_field(const unsigned char* base, size_t n, size_t off, size_t width, const uint64_t* values,
                         size_t nvalues, const char* what) {
    if (off + width > n) return;
    unsigned char* buf = malloc(n);
    REQUIRE(buf, "out of memory");
    for (size_t v = 0; v < nvalues; v++) {
        memcpy(buf, base, n);
        wr(buf + off, width, values[v]);
        if (memcmp(buf, base, n) == 0) continue;
        char label[160];
        snprintf(label, sizeof label, "%s (byte %zu) = 0x%llx", what, off, (unsigned long long)values[v]);
        try_load(buf, n, label);
    }
    free(buf);
}

static void mutate_u32(const unsigned char* base, size_t n, size_t off, const char* what) {
    uint32_t orig = (uint32_t)rd(base + off, 4);
    const uint64_t values[] = {0,
                               1,
                               0xFFFFFFFFu,
                               0x80000000u,
                               0x7FFFFFFFu,
                               0x10000u,
                               (uint32_t)(orig + 1),
                               (uint32_t)(orig - 1),
                               (uint32_t)(orig + 64),
                               (uint32_t)n};
    mutate_field(base, n, off, 4, values, sizeof values / sizeof values[0], what);
}

static void mutate_u64(const unsigned char* base, size_t n, size_t off, const char* what) {
    uint64_t orig = rd(base + off, 8);
    const uint64_t values[] = {
        0,        1,         UINT64_MAX, 1ull << 63,  (uint64_t)INT64_MAX, 1ull << 40,       0xFFFFFFFFull,  orig + 1,
        orig - 1, orig + 64, orig - 64,  (uint64_t)n, (uint64_t)n + 1,     (uint64_t)n - 64, UINT64_MAX - 63};
    mutate_field(base, n, off, 8, values, sizeof values / sizeof values[0], what);
}

static void mutate_f32(const unsigned char* base, size_t n, size_t off, const char* what) {
    const float fv[] = {NAN, INFINITY, -INFINITY, -1.0f, 0.0f, 1e30f, -1e-30f};
    uint64_t values[sizeof fv / sizeof fv[0]];
    for (size_t i = 0; i < sizeof fv / sizeof fv[0]; i++) {
        uint32_t bits;
        memcpy(&bits, &fv[i], 4);
        values[i] = bits;
    }
    mutate_field(base, n, off, 4, values, sizeof values / sizeof values[0], what);
}

int main(int argc, char** argv) {
    test_name = "corrupt";
    test_manifest m;
    test_manifest_load(test_cases_dir(argc, argv), &m);
    g_case = test_manifest_find(&m, "base");
    char* path = test_case_model_path(&m, g_case);
    size_t n = 0;
    unsigned char* base = test_read_file(path, &n);
    REQUIRE(n > 128 && memcmp(base, "ACCM", 4) == 0, "%s is not an .accm file", path);
    g_dev = test_open("emu:cores=1,pool=64M");

    /* the base model itself loads and gives the right result */
    {
        accel_model* model = NULL;
        REQUIRE_OK(accel_model_load_memory(g_dev, base, n, &model));
        accel_buffer *in[4], *out[4];
        REQUIRE(g_case->n_inputs <= 4 && g_case->n_outputs <= 4, "base has too many tensors");
        test_make_io(g_dev, g_case, in, out);
        REQUIRE_OK(accel_run(model, in, g_case->n_inputs, out, g_case->n_outputs, NULL));
        for (size_t i = 0; i < g_case->n_outputs; i++)
            EXPECT(test_compare_output(g_case, i, out[i], "base"), "the base model gives a wrong result");
        test_release_io(g_case, in, out);
        accel_model_release(model);
    }

    /* ---- truncations: every short length, then a grid, then every length near the end: all fail ---- */
    size_t truncations = 0;
    {
        size_t step = n / 257 + 1;
        for (size_t len = 0; len < n; len++) {
            if (!(len <= 1024 || len % step == 0 || len + 200 >= n)) continue;
            char label[64];
            snprintf(label, sizeof label, "truncated to %zu of %zu bytes", len, n);
            accel_status s = try_load(base, len, label);
            EXPECT(s != ACCEL_OK, "a model truncated to %zu of %zu bytes loaded", len, n);
            truncations++;
        }
    }
    /* one trailing byte too many: file_size disagrees */
    {
        unsigned char* longer = malloc(n + 64);
        REQUIRE(longer, "out of memory");
        memcpy(longer, base, n);
        memset(longer + n, 0, 64);
        try_load(longer, n + 1, "one byte appended");
        try_load(longer, n + 64, "64 bytes appended");
        free(longer);
    }

    /* ---- header fields ---- */
    mutate_u32(base, n, 0, "magic");
    {
        const uint64_t v16[] = {0, 2, 0xFFFF, 1};
        mutate_field(base, n, 4, 2, v16, 4, "version_major");
        const uint64_t minor[] = {1, 0xFFFF};
        mutate_field(base, n, 6, 2, minor, 2, "version_minor");
    }
    static const size_t header_u32[] = {8, 12, 24, 28, 32, 36, 40, 44};
    static const char* const header_u32_names[] = {"header_size", "flags",        "tensor_count", "node_count",
                                                   "input_count", "output_count", "edge_count",   "reserved"};
    for (size_t i = 0; i < sizeof header_u32 / sizeof header_u32[0]; i++)
        mutate_u32(base, n, header_u32[i], header_u32_names[i]);
    static const size_t header_u64[] = {16, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120};
    static const char* const header_u64_names[] = {
        "file_size",         "tensor_table_offset", "node_table_offset", "io_table_offset",
        "edge_table_offset", "string_table_offset", "string_table_size", "data_offset",
        "data_size",         "reserved0",           "reserved1"};
    for (size_t i = 0; i < sizeof header_u64 / sizeof header_u64[0]; i++)
        mutate_u64(base, n, header_u64[i], header_u64_names[i]);

    /* ---- every field of every tensor and node record; io and edge entries ---- */
    uint32_t tensor_count = (uint32_t)rd(base + 24, 4), node_count = (uint32_t)rd(base + 28, 4);
    uint32_t io_count = (uint32_t)rd(base + 32, 4) + (uint32_t)rd(base + 36, 4),
             edge_count = (uint32_t)rd(base + 40, 4);
    uint64_t tensor_off = rd(base + 48, 8), node_off = rd(base + 56, 8), io_off = rd(base + 64, 8),
             edge_off = rd(base + 72, 8), str_off = rd(base + 80, 8), str_size = rd(base + 88, 8),
             data_off = rd(base + 96, 8);
    REQUIRE(tensor_off + 128ull * tensor_count <= n && node_off + 192ull * node_count <= n &&
                io_off + 4ull * io_count <= n && edge_off + 4ull * edge_count <= n && str_off + str_size <= n,
            "the base model's tables are not where its header says");
    printf("corrupt: base model: %zu bytes, %u tensors, %u nodes, %u edges\n", n, tensor_count, node_count, edge_count);
    for (uint32_t t = 0; t < tensor_count; t++) {
        size_t r = (size_t)(tensor_off + 128ull * t);
        char what[64];
        static const size_t u32s[] = {0, 4, 8, 12, 16, 20, 104, 108, 112, 116};
        for (size_t i = 0; i < sizeof u32s / sizeof u32s[0]; i++) {
            snprintf(what, sizeof what, "tensor %u field @%zu", t, u32s[i]);
            mutate_u32(base, n, r + u32s[i], what);
        }
        for (size_t dim = 0; dim < 8; dim++) {
            snprintf(what, sizeof what, "tensor %u dims[%zu]", t, dim);
            mutate_u64(base, n, r + 24 + 8 * dim, what);
        }
        static const size_t u64s[] = {88, 96, 120};
        for (size_t i = 0; i < sizeof u64s / sizeof u64s[0]; i++) {
            snprintf(what, sizeof what, "tensor %u field @%zu", t, u64s[i]);
            mutate_u64(base, n, r + u64s[i], what);
        }
    }
    for (uint32_t k = 0; k < node_count; k++) {
        size_t r = (size_t)(node_off + 192ull * k);
        char what[64];
        static const size_t u32s[] = {0, 4, 8, 12, 16, 20, 24, 36};
        for (size_t i = 0; i < sizeof u32s / sizeof u32s[0]; i++) {
            snprintf(what, sizeof what, "node %u field @%zu", k, u32s[i]);
            mutate_u32(base, n, r + u32s[i], what);
        }
        for (size_t j = 0; j < 16; j++) {
            snprintf(what, sizeof what, "node %u ints[%zu]", k, j);
            mutate_u64(base, n, r + 40 + 8 * j, what);
        }
        snprintf(what, sizeof what, "node %u act_alpha", k);
        mutate_f32(base, n, r + 28, what);
        snprintf(what, sizeof what, "node %u act_beta", k);
        mutate_f32(base, n, r + 32, what);
        for (size_t j = 0; j < 6; j++) {
            snprintf(what, sizeof what, "node %u floats[%zu]", k, j);
            mutate_f32(base, n, r + 168 + 4 * j, what);
        }
    }
    for (uint32_t i = 0; i < io_count; i++) {
        const uint64_t values[] = {0xFFFFFFFFu, tensor_count, tensor_count - 1, 0, 1};
        char what[64];
        snprintf(what, sizeof what, "io entry %u", i);
        mutate_field(base, n, (size_t)(io_off + 4ull * i), 4, values, 5, what);
    }
    for (uint32_t i = 0; i < edge_count; i++) {
        const uint64_t values[] = {0xFFFFFFFFu, tensor_count, 0, i};
        char what[64];
        snprintf(what, sizeof what, "edge entry %u", i);
        mutate_field(base, n, (size_t)(edge_off + 4ull * i), 4, values, 4, what);
    }
    /* names: a NUL, a duplicate, invalid UTF-8 */
    for (uint64_t i = 0; i < str_size && i < 64; i += 7) {
        const uint64_t values[] = {0x00, 0xFF, 0x80};
        mutate_field(base, n, (size_t)(str_off + i), 1, values, 3, "string table byte");
    }

    /* ---- random byte flips (fixed seed), mostly in the header and tables ---- */
    {
        unsigned char* buf = malloc(n);
        REQUIRE(buf, "out of memory");
        size_t meta_end = data_off < n ? (size_t)data_off : n;
        for (int v = 0; v < 600; v++) {
            memcpy(buf, base, n);
            int flips = 1 + (int)(rnd() % 4);
            for (int f = 0; f < flips; f++) {
                size_t pos = (rnd() % 5) ? (size_t)(rnd() % meta_end) : (size_t)(rnd() % n);
                unsigned char x = (unsigned char)(rnd() & 0xFF);
                buf[pos] ^= x ? x : 0x01;
            }
            char label[64];
            snprintf(label, sizeof label, "random flips, variant %d", v);
            try_load(buf, n, label);
        }
        free(buf);
    }

    /* ---- odd whole files ---- */
    {
        unsigned char junk[4096];
        for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)rnd();
        try_load(junk, sizeof junk, "random bytes");
        memset(junk, 0, sizeof junk);
        memcpy(junk, "ACCM", 4);
        try_load(junk, sizeof junk, "magic then zeros");
        memcpy(junk, base, 128); /* a real header, nothing behind it */
        try_load(junk, sizeof junk, "header then zeros");
    }

    /* ---- from a file: truncated and corrupt files fail the same way ---- */
    {
        char name[64];
        snprintf(name, sizeof name, "corrupt_%ld.accm", (long)getpid());
        char* tmp = test_path(m.dir, name);
        size_t lens[] = {0, 3, 64, 127, 128, n / 2, n - 1};
        for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            FILE* f = fopen(tmp, "wb");
            REQUIRE(f, "cannot write %s", tmp);
            if (lens[i]) REQUIRE(fwrite(base, 1, lens[i], f) == lens[i], "write");
            fclose(f);
            accel_model* model = (accel_model*)(uintptr_t)0x40;
            accel_status s = accel_model_load_file(g_dev, tmp, &model);
            EXPECT(s == ACCEL_ERR_MODEL_FORMAT, "loading a file truncated to %zu bytes gave %s", lens[i],
                   accel_status_name(s));
            EXPECT(model == (accel_model*)(uintptr_t)0x40, "out_model changed on failure");
            if (s == ACCEL_OK) accel_model_release(model);
        }
        unlink(tmp);
        free(tmp);
    }

    accel_memory_stats st;
    memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    EXPECT_OK(accel_device_get_stats(g_dev, &st));
    EXPECT(
        st.bytes_in_use == 0 && st.live_buffers == 0,
        "after every variant was released: %llu bytes in use, %llu live buffers (a failed load leaked device memory?)",
        (unsigned long long)st.bytes_in_use, (unsigned long long)st.live_buffers);
    printf("corrupt: %zu loads (%zu truncations), %zu loaded and ran (%zu of those ran OK), %zu with a wrong status\n",
           g_loads, truncations, g_loaded, g_ran_ok, g_bad_status);
    accel_device_release(g_dev);
    free(base);
    free(path);
    test_manifest_free(&m);
    return test_finish();
}
