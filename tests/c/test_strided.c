/* strided: accel_buffer_write_strided takes an array of any rank that is at most ACCEL_MAX_DIMS-
 * dimensional once unit dimensions are dropped and contiguous neighbours merged (what NumPy arrays of
 * up to 64 dimensions and their slices are), copies it exactly once in C order, copies nothing for a
 * zero-size array, and refuses the rest with a message naming the dimension counts. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "test_util.h"

#define MAX_RANK 64

static uint64_t bytes_copied(accel_device* d) {
    accel_memory_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.struct_size = sizeof stats;
    REQUIRE_OK(accel_device_get_stats(d, &stats));
    return stats.bytes_copied;
}

/* C-order byte strides of `shape` with a gap: each dimension not of extent 1 steps over `gap` times
 * the span of the dimensions inside it (gap 1: dense; 2: no two of them contiguous). */
static void strides_of(uint32_t ndim, const int64_t* shape, int64_t element_size, int64_t gap, int64_t* strides) {
    int64_t step = element_size;
    for (uint32_t i = ndim; i-- > 0;) {
        strides[i] = step;
        if (shape[i] != 1) step *= shape[i] * gap;
    }
}

/* Writes the `ndim`-dimensional uint8 array at `src` into `buf` and checks its bytes are, in C order,
 * what an element-by-element walk of the strides reads. */
static void expect_copied(accel_device* d, accel_buffer* buf, const uint8_t* src, uint32_t ndim, const int64_t* shape,
                          const int64_t* strides, const char* what) {
    uint8_t* dst = NULL;
    REQUIRE_OK(accel_buffer_host_ptr(buf, (void**)&dst));
    uint64_t count = 1;
    for (uint32_t i = 0; i < ndim; i++) count *= (uint64_t)shape[i];
    memset(dst, 0xEE, count);
    const uint64_t before = bytes_copied(d);
    accel_status s = accel_buffer_write_strided(buf, 0, src, ndim, shape, strides, 1);
    EXPECT(s == ACCEL_OK, "%s: %s (%s)", what, accel_status_name(s), s ? accel_last_error_message() : "");
    if (s != ACCEL_OK) return;
    EXPECT(bytes_copied(d) - before == count, "%s: bytes_copied grew by %llu, expected %llu", what,
           (unsigned long long)(bytes_copied(d) - before), (unsigned long long)count);
    int64_t index[MAX_RANK] = {0};
    for (uint64_t n = 0; n < count; n++) {
        int64_t offset = 0;
        for (uint32_t i = 0; i < ndim; i++) offset += index[i] * strides[i];
        if (dst[n] != src[offset]) {
            EXPECT(0, "%s: element %llu is %u, expected %u", what, (unsigned long long)n, dst[n], src[offset]);
            return;
        }
        for (uint32_t i = ndim; i-- > 0;) {
            if (++index[i] < shape[i]) break;
            index[i] = 0;
        }
    }
}

int main(void) {
    test_name = "strided";
    accel_device* d = test_open("emu:cores=1,pool=4M");
    accel_buffer* buf = test_alloc(d, 1 << 16);
    static uint8_t src[1 << 18];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (uint8_t)(i * 7 + 3);
    int64_t shape[MAX_RANK], strides[MAX_RANK];

    /* 64 dimensions, all but six of extent 1: six at heart (NumPy's deepest array) */
    for (int i = 0; i < MAX_RANK; i++) shape[i] = 1;
    shape[3] = 2, shape[10] = 3, shape[20] = 2, shape[40] = 4, shape[50] = 2, shape[63] = 5;
    strides_of(MAX_RANK, shape, 1, 2, strides); /* every dimension strided: nothing merges but the units */
    expect_copied(d, buf, src, MAX_RANK, shape, strides, "64 dims, 6 not unit");

    /* 12 dimensions of 2, dense but for the outermost stride (a slice): they merge into two */
    for (int i = 0; i < 12; i++) shape[i] = 2;
    strides_of(12, shape, 1, 1, strides);
    strides[0] *= 3;
    expect_copied(d, buf, src, 12, shape, strides, "12 dims, a slice of a dense array");

    /* a transposed 2-D array (no merging possible) and a reversed one (negative strides) */
    int64_t t_shape[2] = {16, 8}, t_strides[2] = {1, 16};
    expect_copied(d, buf, src, 2, t_shape, t_strides, "transposed");
    int64_t r_shape[3] = {4, 1, 16}, r_strides[3] = {-16, 999, 1};
    expect_copied(d, buf, src + 48, 3, r_shape, r_strides, "reversed rows, a unit dim with any stride");

    /* a zero-size array copies nothing, whatever its rank */
    for (int i = 0; i < 20; i++) shape[i] = i == 13 ? 0 : 3;
    strides_of(20, shape, 1, 2, strides);
    const uint64_t before = bytes_copied(d);
    EXPECT_OK(accel_buffer_write_strided(buf, 0, src, 20, shape, strides, 1));
    EXPECT(bytes_copied(d) == before, "a zero-size write copied %llu bytes",
           (unsigned long long)(bytes_copied(d) - before));

    /* more than ACCEL_MAX_DIMS left after merging: refused, both counts named */
    const uint32_t rank = ACCEL_MAX_DIMS + 3;
    for (uint32_t i = 0; i < rank; i++) shape[i] = 2;
    strides_of(rank, shape, 1, 2, strides);
    accel_status s = accel_buffer_write_strided(buf, 0, src, rank, shape, strides, 1);
    EXPECT_STATUS(s, ACCEL_ERR_INVALID_ARGUMENT);
    if (s != ACCEL_OK) {
        EXPECT_ERROR_REPORTED(s);
        char want[64];
        snprintf(want, sizeof want, "the array has %u dimensions, %u once", rank, rank);
        EXPECT(strstr(accel_last_error_message(), want), "the refusal '%s' does not say '%s'",
               accel_last_error_message(), want);
    }

    /* a negative extent: refused, naming the dimension */
    int64_t n_shape[3] = {2, -1, 2}, n_strides[3] = {4, 2, 1};
    s = accel_buffer_write_strided(buf, 0, src, 3, n_shape, n_strides, 1);
    EXPECT_STATUS(s, ACCEL_ERR_INVALID_ARGUMENT);
    if (s != ACCEL_OK)
        EXPECT(strstr(accel_last_error_message(), "dimension 1 is -1"), "the refusal '%s' does not name dimension 1",
               accel_last_error_message());

    accel_buffer_release(buf);
    accel_device_release(d);
    return test_finish();
}
