/* pool: device memory on emu:pool=1M - alignment, rounding, stats, exhaustion and recovery, coalescing,
 * import of host memory, and the runtime's copies (write, read, write_strided) with their range checks and
 * bytes_copied accounting. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static accel_memory_stats stats_of(accel_device* d) {
    accel_memory_stats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    REQUIRE_OK(accel_device_get_stats(d, &s));
    return s;
}

static uint64_t round64(uint64_t v) { return (v + 63) / 64 * 64; }

static void* host_ptr(accel_buffer* b) {
    void* p = NULL;
    REQUIRE_OK(accel_buffer_host_ptr(b, &p));
    REQUIRE(p, "host pointer is NULL");
    return p;
}

static uint64_t size_of(accel_buffer* b) {
    uint64_t s = 0;
    REQUIRE_OK(accel_buffer_size(b, &s));
    return s;
}

int main(void) {
    test_name = "pool";
    const uint64_t POOL = 1u << 20;
    accel_device* d = test_open("emu:pool=1M,cores=1");
    accel_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE_OK(accel_device_get_info(d, &info));
    EXPECT(info.pool_bytes == POOL, "pool_bytes %llu", (unsigned long long)info.pool_bytes);
    EXPECT(info.alignment == 64, "alignment %llu", (unsigned long long)info.alignment);
    EXPECT(info.debug == 0, "debug is on");

    const accel_memory_stats s0 = stats_of(d);
    EXPECT(s0.live_buffers == 0, "a fresh device has %llu live buffers", (unsigned long long)s0.live_buffers);
    EXPECT(s0.bytes_in_use <= s0.peak_bytes_in_use, "bytes_in_use > peak on a fresh device");
    EXPECT(s0.jobs_submitted == 0 && s0.jobs_completed == 0 && s0.bytes_copied == 0,
           "a fresh device has non-zero counters");

    /* ---- alignment, rounding, stats ---- */
    static const uint64_t sizes[] = {1, 63, 64, 65, 100, 127, 128, 1000, 4096, 4097};
    enum { N = sizeof sizes / sizeof sizes[0] };
    accel_buffer* bufs[N];
    uint64_t total = 0;
    for (size_t i = 0; i < N; i++) {
        bufs[i] = NULL;
        REQUIRE_OK(accel_buffer_alloc(d, sizes[i], &bufs[i]));
        unsigned char* p = host_ptr(bufs[i]);
        EXPECT((uintptr_t)p % 64 == 0, "buffer of %llu bytes: host pointer %p is not 64-byte aligned",
               (unsigned long long)sizes[i], (void*)p);
        uint64_t usable = size_of(bufs[i]);
        EXPECT(usable == round64(sizes[i]), "buffer of %llu bytes: usable size %llu, expected %llu",
               (unsigned long long)sizes[i], (unsigned long long)usable, (unsigned long long)round64(sizes[i]));
        memset(p, (int)i, (size_t)usable); /* the whole usable size is ours */
        total += round64(sizes[i]);
    }
    for (size_t i = 0; i < N; i++) { /* no buffer overlaps another */
        unsigned char* p = host_ptr(bufs[i]);
        for (uint64_t k = 0; k < size_of(bufs[i]); k++)
            if (p[k] != (unsigned char)i) {
                EXPECT(0, "buffer %zu was overwritten by another buffer at byte %llu", i, (unsigned long long)k);
                break;
            }
    }
    accel_memory_stats s1 = stats_of(d);
    EXPECT(s1.live_buffers == s0.live_buffers + N, "live_buffers %llu, expected %llu",
           (unsigned long long)s1.live_buffers, (unsigned long long)(s0.live_buffers + N));
    EXPECT(s1.allocations == s0.allocations + N, "allocations %llu, expected %llu", (unsigned long long)s1.allocations,
           (unsigned long long)(s0.allocations + N));
    EXPECT(s1.bytes_in_use == s0.bytes_in_use + total, "bytes_in_use %llu, expected %llu (+ the rounded sizes)",
           (unsigned long long)s1.bytes_in_use, (unsigned long long)(s0.bytes_in_use + total));
    EXPECT(s1.peak_bytes_in_use >= s1.bytes_in_use, "peak %llu < in use %llu", (unsigned long long)s1.peak_bytes_in_use,
           (unsigned long long)s1.bytes_in_use);
    EXPECT(s1.bytes_copied == s0.bytes_copied, "allocating counted copies");

    /* retain/release: a retained buffer survives one release */
    accel_buffer_retain(bufs[0]);
    accel_buffer_release(bufs[0]);
    EXPECT(stats_of(d).live_buffers == s1.live_buffers, "a retained buffer was freed by one release");
    EXPECT(host_ptr(bufs[0]) != NULL, "retained buffer unusable");

    for (size_t i = 0; i < N; i++) accel_buffer_release(bufs[i]);
    accel_memory_stats s2 = stats_of(d);
    EXPECT(s2.live_buffers == s0.live_buffers, "live_buffers %llu after releasing all, expected %llu",
           (unsigned long long)s2.live_buffers, (unsigned long long)s0.live_buffers);
    EXPECT(s2.bytes_in_use == s0.bytes_in_use, "bytes_in_use %llu after releasing all, expected %llu",
           (unsigned long long)s2.bytes_in_use, (unsigned long long)s0.bytes_in_use);
    EXPECT(s2.allocations == s1.allocations, "allocations changed on release (%llu -> %llu)",
           (unsigned long long)s1.allocations, (unsigned long long)s2.allocations);
    EXPECT(s2.peak_bytes_in_use >= s1.bytes_in_use, "peak %llu fell below an earlier use %llu",
           (unsigned long long)s2.peak_bytes_in_use, (unsigned long long)s1.bytes_in_use);

    /* ---- exhaustion ---- */
    accel_buffer* b = (accel_buffer*)(uintptr_t)0x40;
    accel_status s = accel_buffer_alloc(d, 2 * POOL, &b);
    EXPECT(s == ACCEL_ERR_OUT_OF_MEMORY, "allocating twice the pool gave %s", accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    EXPECT(b == (accel_buffer*)(uintptr_t)0x40, "out_buffer changed on failure");
    s = accel_buffer_alloc(d, UINT64_MAX, &b);
    EXPECT(s == ACCEL_ERR_OUT_OF_MEMORY, "allocating UINT64_MAX bytes gave %s", accel_status_name(s));
    s = accel_buffer_alloc(d, UINT64_MAX - 30, &b); /* rounding up must not wrap around */
    EXPECT(s == ACCEL_ERR_OUT_OF_MEMORY, "allocating UINT64_MAX-30 bytes gave %s", accel_status_name(s));
    EXPECT(b == (accel_buffer*)(uintptr_t)0x40, "out_buffer changed on failure");

    enum { CHUNK = 64 << 10, MAXC = 64 };
    accel_buffer* chunks[MAXC];
    size_t nchunks = 0;
    for (;;) {
        REQUIRE(nchunks < MAXC, "a 1M pool gave more than %d chunks of 64K", MAXC);
        accel_buffer* c = NULL;
        s = accel_buffer_alloc(d, CHUNK, &c);
        if (s != ACCEL_OK) break;
        chunks[nchunks++] = c;
    }
    EXPECT(s == ACCEL_ERR_OUT_OF_MEMORY, "exhausting the pool gave %s, not ACCEL_ERR_OUT_OF_MEMORY",
           accel_status_name(s));
    EXPECT_ERROR_REPORTED(s);
    EXPECT(nchunks >= 12 && nchunks <= 16, "a 1M pool gave %zu chunks of 64K", nchunks);
    accel_memory_stats s3 = stats_of(d);
    EXPECT(s3.live_buffers == s0.live_buffers + nchunks, "a failed allocation changed live_buffers");
    EXPECT(s3.allocations == s2.allocations + nchunks,
           "a failed allocation was counted in allocations (%llu, expected %llu)", (unsigned long long)s3.allocations,
           (unsigned long long)(s2.allocations + nchunks));
    EXPECT(s3.peak_bytes_in_use <= POOL, "peak %llu exceeds the pool", (unsigned long long)s3.peak_bytes_in_use);
    /* freeing one makes the same allocation succeed again */
    accel_buffer_release(chunks[nchunks / 2]);
    chunks[nchunks / 2] = NULL;
    EXPECT_OK(accel_buffer_alloc(d, CHUNK, &chunks[nchunks / 2]));
    for (size_t i = 0; i < nchunks; i++) accel_buffer_release(chunks[i]);
    EXPECT(stats_of(d).bytes_in_use == s0.bytes_in_use, "bytes_in_use did not return to its baseline");

    /* ---- coalescing: many small blocks freed in a scattered order leave one big free range ---- */
    enum { SMALL = 1024, NSMALL = 1024 };
    accel_buffer** small = calloc(NSMALL, sizeof *small);
    REQUIRE(small, "out of memory");
    size_t nsmall = 0;
    for (; nsmall < NSMALL; nsmall++) {
        if (accel_buffer_alloc(d, SMALL, &small[nsmall]) != ACCEL_OK) break;
    }
    EXPECT(nsmall >= 900, "only %zu blocks of 1K fit in a 1M pool", nsmall);
    /* odd ones first (each freed block has used neighbours), then every third, then the rest */
    for (size_t i = 1; i < nsmall; i += 2) accel_buffer_release(small[i]), small[i] = NULL;
    for (size_t i = 0; i < nsmall; i += 3)
        if (small[i]) accel_buffer_release(small[i]), small[i] = NULL;
    for (size_t i = nsmall; i-- > 0;)
        if (small[i]) accel_buffer_release(small[i]), small[i] = NULL;
    free(small);
    accel_memory_stats s4 = stats_of(d);
    EXPECT(s4.bytes_in_use == s0.bytes_in_use, "bytes_in_use %llu after freeing the small blocks",
           (unsigned long long)s4.bytes_in_use);
    uint64_t big_size = POOL - s0.bytes_in_use - 4096;
    accel_buffer* big = NULL;
    s = accel_buffer_alloc(d, big_size, &big);
    EXPECT(s == ACCEL_OK,
           "allocating %llu bytes (nearly the whole pool) after freeing many small blocks gave %s (%s): "
           "free neighbours were not coalesced",
           (unsigned long long)big_size, accel_status_name(s), s ? accel_last_error_message() : "");
    if (s == ACCEL_OK) {
        memset(host_ptr(big), 0x5A, (size_t)big_size);
        accel_buffer_release(big);
    }

    /* ---- import ---- */
    unsigned char* host = NULL;
    REQUIRE(posix_memalign((void**)&host, 64, 8192) == 0, "posix_memalign");
    memset(host, 0, 8192);
    accel_memory_stats s5 = stats_of(d);
    b = (accel_buffer*)(uintptr_t)0x40;
    s = accel_buffer_import(d, host + 1, 4096, &b);
    EXPECT(s == ACCEL_ERR_ALIGNMENT, "importing a misaligned pointer gave %s", accel_status_name(s));
    if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
    EXPECT(b == (accel_buffer*)(uintptr_t)0x40, "out_buffer changed on failure");
    s = accel_buffer_import(d, host + 32, 4096, &b);
    EXPECT(s == ACCEL_ERR_ALIGNMENT, "importing a 32-byte aligned pointer gave %s", accel_status_name(s));
    EXPECT(stats_of(d).live_buffers == s5.live_buffers, "a failed import changed live_buffers");
    accel_buffer* imp = NULL;
    REQUIRE_OK(accel_buffer_import(d, host, 4096, &imp));
    EXPECT(host_ptr(imp) == host, "an imported buffer's host pointer is not the caller's memory (no copy)");
    EXPECT(size_of(imp) == 4096, "imported buffer size %llu", (unsigned long long)size_of(imp));
    accel_memory_stats s6 = stats_of(d);
    EXPECT(s6.live_buffers == s5.live_buffers + 1, "import did not count a live buffer");
    EXPECT(s6.allocations == s5.allocations, "import counted a pool allocation");
    const char msg[] = "zero copy";
    EXPECT_OK(accel_buffer_write(imp, 100, msg, sizeof msg));
    EXPECT(memcmp(host + 100, msg, sizeof msg) == 0, "a write to an imported buffer did not reach the caller's memory");
    host[200] = 42;
    unsigned char got = 0;
    EXPECT_OK(accel_buffer_read(imp, 200, &got, 1));
    EXPECT(got == 42, "a read of an imported buffer did not see the caller's memory");
    EXPECT_STATUS(accel_buffer_write(imp, 4000, msg, 200), ACCEL_ERR_INVALID_ARGUMENT);
    accel_buffer_release(imp);
    EXPECT(stats_of(d).live_buffers == s5.live_buffers, "releasing an imported buffer did not end it");
    EXPECT(host[100] == 'z', "releasing an imported buffer changed the caller's memory");
    free(host);

    /* ---- write / read / sync range checks and bytes_copied ---- */
    accel_buffer* rb = test_alloc(d, 256);
    REQUIRE(size_of(rb) == 256, "size");
    unsigned char src[512], dst[512];
    for (int i = 0; i < 512; i++) src[i] = (unsigned char)(i * 7 + 1);
    accel_memory_stats c0 = stats_of(d);
    EXPECT_OK(accel_buffer_write(rb, 0, src, 256));
    EXPECT_OK(accel_buffer_write(rb, 100, src, 156)); /* ends exactly at the end */
    EXPECT_OK(accel_buffer_write(rb, 256, src, 0));   /* empty, at the end */
    memset(dst, 0, sizeof dst);
    EXPECT_OK(accel_buffer_read(rb, 0, dst, 256));
    EXPECT(memcmp(dst, src, 100) == 0 && memcmp(dst + 100, src, 156) == 0, "read back differs from what was written");
    EXPECT_OK(accel_buffer_read(rb, 255, dst, 1));
    accel_memory_stats c1 = stats_of(d);
    EXPECT(c1.bytes_copied == c0.bytes_copied + 256 + 156 + 256 + 1, "bytes_copied moved by %llu, expected %d",
           (unsigned long long)(c1.bytes_copied - c0.bytes_copied), 256 + 156 + 256 + 1);
    struct {
        uint64_t off, size;
    } bad[] = {{0, 257},  {1, 256},        {200, 100},      {256, 1},        {257, 0},
               {1000, 1}, {UINT64_MAX, 2}, {2, UINT64_MAX}, {UINT64_MAX, 0}, {128, UINT64_MAX - 64}};
    memcpy(dst, src, sizeof dst);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        /* size may be huge: src/dst are never read that far when the range is checked first */
        s = accel_buffer_write(rb, bad[i].off, src, bad[i].size);
        EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "write(offset %llu, size %llu) into 256 bytes gave %s",
               (unsigned long long)bad[i].off, (unsigned long long)bad[i].size, accel_status_name(s));
        if (s != ACCEL_OK) EXPECT_ERROR_REPORTED(s);
        s = accel_buffer_read(rb, bad[i].off, dst, bad[i].size);
        EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "read(offset %llu, size %llu) from 256 bytes gave %s",
               (unsigned long long)bad[i].off, (unsigned long long)bad[i].size, accel_status_name(s));
        if (bad[i].size != 0 || bad[i].off > 256) {
            s = accel_buffer_sync(rb, ACCEL_SYNC_TO_DEVICE, bad[i].off, bad[i].size);
            EXPECT(s == ACCEL_ERR_INVALID_ARGUMENT, "sync(offset %llu, size %llu) of 256 bytes gave %s",
                   (unsigned long long)bad[i].off, (unsigned long long)bad[i].size, accel_status_name(s));
        }
    }
    EXPECT(memcmp(dst, src, sizeof dst) == 0, "a failed read wrote into the destination");
    accel_memory_stats c2 = stats_of(d);
    EXPECT(c2.bytes_copied == c1.bytes_copied, "failed copies were counted in bytes_copied (+%llu)",
           (unsigned long long)(c2.bytes_copied - c1.bytes_copied));
    EXPECT_OK(accel_buffer_sync(rb, ACCEL_SYNC_TO_DEVICE, 0, 0));
    EXPECT_OK(accel_buffer_sync(rb, ACCEL_SYNC_TO_HOST, 0, 256));
    EXPECT_OK(accel_buffer_sync(rb, ACCEL_SYNC_TO_HOST, 64, 0));
    EXPECT_OK(accel_buffer_sync(rb, ACCEL_SYNC_TO_DEVICE, 255, 1));

    /* ---- write_strided ---- */
    /* a 4x6 float array written through its transpose (a 6x4 non-contiguous view) gives the dense transpose */
    float a[4][6], t[6][4], back[6][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++) a[i][j] = (float)(i * 10 + j), t[j][i] = a[i][j];
    int64_t shape2[2] = {6, 4};
    int64_t strides2[2] = {(int64_t)sizeof(float), 6 * (int64_t)sizeof(float)};
    accel_memory_stats w0 = stats_of(d);
    EXPECT_OK(accel_buffer_write_strided(rb, 0, a, 2, shape2, strides2, sizeof(float)));
    EXPECT_OK(accel_buffer_read(rb, 0, back, sizeof back));
    EXPECT(memcmp(back, t, sizeof t) == 0, "write_strided of a transposed 2-D array is not the dense transpose");
    accel_memory_stats w1 = stats_of(d);
    EXPECT(w1.bytes_copied == w0.bytes_copied + sizeof t + sizeof back,
           "write_strided counted %llu bytes, expected %zu",
           (unsigned long long)(w1.bytes_copied - w0.bytes_copied - sizeof back), sizeof t);
    /* a contiguous 3-D array at an offset */
    float cube[2][3][4], cube_back[2][3][4];
    for (int i = 0; i < 24; i++) (&cube[0][0][0])[i] = (float)i * 0.5f;
    int64_t shape3[3] = {2, 3, 4}, strides3[3] = {48, 16, 4};
    EXPECT_OK(accel_buffer_write_strided(rb, 64, cube, 3, shape3, strides3, 4));
    EXPECT_OK(accel_buffer_read(rb, 64, cube_back, sizeof cube_back));
    EXPECT(memcmp(cube, cube_back, sizeof cube) == 0, "write_strided of a contiguous array differs");
    /* negative stride: a reversed vector */
    float v[8], rev[8];
    for (int i = 0; i < 8; i++) v[i] = (float)i;
    int64_t shape1[1] = {8}, neg1[1] = {-(int64_t)sizeof(float)};
    EXPECT_OK(accel_buffer_write_strided(rb, 0, &v[7], 1, shape1, neg1, sizeof(float)));
    EXPECT_OK(accel_buffer_read(rb, 0, rev, sizeof rev));
    for (int i = 0; i < 8; i++)
        EXPECT(rev[i] == (float)(7 - i), "negative stride: element %d is %g", i, (double)rev[i]);
    /* zero stride: a broadcast scalar; every other row reversed in 2-D */
    float one = 3.25f, bc[5];
    int64_t shape5[1] = {5}, zero1[1] = {0};
    EXPECT_OK(accel_buffer_write_strided(rb, 128, &one, 1, shape5, zero1, sizeof(float)));
    EXPECT_OK(accel_buffer_read(rb, 128, bc, sizeof bc));
    for (int i = 0; i < 5; i++) EXPECT(bc[i] == 3.25f, "zero stride: element %d is %g", i, (double)bc[i]);
    /* 2-D: rows every other one (stride 2 rows), columns reversed */
    float grid[6][5], picked[3][5];
    for (int i = 0; i < 30; i++) (&grid[0][0])[i] = (float)i;
    int64_t shp[2] = {3, 5}, str[2] = {2 * 5 * 4, -4};
    EXPECT_OK(accel_buffer_write_strided(rb, 0, &grid[0][4], 2, shp, str, 4));
    EXPECT_OK(accel_buffer_read(rb, 0, picked, sizeof picked));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++)
            EXPECT(picked[i][j] == grid[2 * i][4 - j], "strided 2-D: [%d][%d] is %g, expected %g", i, j,
                   (double)picked[i][j], (double)grid[2 * i][4 - j]);
    /* 0-D: one element */
    double scalar = 2.5, scalar_back = 0;
    EXPECT_OK(accel_buffer_write_strided(rb, 8, &scalar, 0, NULL, NULL, sizeof scalar));
    EXPECT_OK(accel_buffer_read(rb, 8, &scalar_back, sizeof scalar_back));
    EXPECT(scalar_back == 2.5, "0-D write_strided wrote %g", scalar_back);
    /* range checks: 65 floats do not fit in 256 bytes; nor 64 at offset 4 */
    float big_src[80];
    memset(big_src, 0, sizeof big_src);
    accel_memory_stats w2 = stats_of(d);
    int64_t s65[1] = {65}, s64[1] = {64}, st4[1] = {4};
    EXPECT_STATUS(accel_buffer_write_strided(rb, 0, big_src, 1, s65, st4, 4), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_write_strided(rb, 4, big_src, 1, s64, st4, 4), ACCEL_ERR_INVALID_ARGUMENT);
    EXPECT_STATUS(accel_buffer_write_strided(rb, 300, big_src, 1, s64, st4, 4), ACCEL_ERR_INVALID_ARGUMENT);
    int64_t huge[2] = {INT64_MAX / 2, 4}, huge_str[2] = {16, 4};
    s = accel_buffer_write_strided(rb, 0, big_src, 2, huge, huge_str, 4);
    EXPECT(s != ACCEL_OK, "write_strided of an enormous shape succeeded");
    int64_t negshape[1] = {-1};
    s = accel_buffer_write_strided(rb, 0, big_src, 1, negshape, st4, 4);
    EXPECT(s != ACCEL_OK, "write_strided with a negative dimension succeeded");
    EXPECT(stats_of(d).bytes_copied == w2.bytes_copied, "failed strided writes were counted in bytes_copied");
    EXPECT_STATUS(accel_buffer_write_strided(rb, 0, big_src, 1, s64, st4, 0), ACCEL_ERR_INVALID_ARGUMENT);
    accel_buffer_release(rb);

    accel_memory_stats end = stats_of(d);
    EXPECT(end.live_buffers == s0.live_buffers && end.bytes_in_use == s0.bytes_in_use,
           "at the end: %llu live buffers, %llu bytes in use (baseline %llu, %llu)",
           (unsigned long long)end.live_buffers, (unsigned long long)end.bytes_in_use,
           (unsigned long long)s0.live_buffers, (unsigned long long)s0.bytes_in_use);
    accel_device_release(d);
    return test_finish();
}
