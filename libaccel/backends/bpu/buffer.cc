// buffer.cc - device buffers: BPU memory from the runtime (cached, so flushed by hand), and the
// runtime's copies in and out of it.
//
// Coherence: jobs CLEAN their inputs before the task starts and INVALIDATE their outputs before they
// are reported done, so accel_buffer_write/_read and the host pointer see and give the right bytes
// with no accel_buffer_sync. accel_buffer_sync is there for the host pointer's users who share the
// memory with something else; the runtime flushes whole blocks, so it flushes the whole buffer (an
// INVALIDATE then also drops host writes elsewhere in the buffer that were not cleaned).
#include <cstring>
#include <new>

#include "driver_kit/buffer_checks.h"
#include "driver_kit/buffer_copy.h"
#include "entry_points.h"
#include "handles.h"
#include "status.h"

namespace accel_bpu {
namespace {

std::string outside(const accel_buffer* b, uint64_t offset, uint64_t size) {
    return format("bytes [%llu, %llu) are not all inside buffer #%llu of %llu bytes", (unsigned long long)offset,
                  (unsigned long long)(offset + size), (unsigned long long)b->id,
                  (unsigned long long)b->memory->size());
}

}  // namespace

extern const accel_kit::BufferRules kBufferRules = {
    [](const accel_buffer* b) { return b->memory->host(); },
    [](const accel_buffer* b) { return b->memory->size(); },
    outside,
};

accel_status buffer_alloc(accel_device* d, uint64_t size, accel_buffer** out) {
    if (size == 0) return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_buffer_alloc: size 0");
    std::unique_ptr<Memory> memory;
    Status s = d->runtime->allocate(size, kAlignment, &memory);
    if (!s.ok()) return fail(s.code, "accel_buffer_alloc: " + s.message);
    auto* b = new (std::nothrow) accel_buffer();
    if (!b) return fail(ACCEL_ERR_OUT_OF_MEMORY, "bpu: out of host memory");
    b->header.driver = &kDriverTable;
    b->device = d;
    d->refs.fetch_add(1, std::memory_order_relaxed);
    b->memory = std::move(memory);
    b->id = d->next_buffer_id.fetch_add(1);
    d->live_buffers++;
    {
        std::lock_guard<std::mutex> lock(d->stats_mutex);
        d->bytes_in_use += b->memory->size();
        if (d->bytes_in_use > d->peak_bytes_in_use) d->peak_bytes_in_use = d->bytes_in_use;
        d->allocations++;
    }
    *out = b;
    return ACCEL_OK;
}

accel_status buffer_import(accel_device*, void*, uint64_t, accel_buffer**) {
    return fail(ACCEL_ERR_UNSUPPORTED,
                "accel_buffer_import: the BPU runtime cannot use memory it did not "
                "allocate: use accel_buffer_alloc and write into its host pointer");
}

void buffer_retain(accel_buffer* b) { b->refs.fetch_add(1, std::memory_order_relaxed); }

void buffer_release(accel_buffer* b) {
    if (b->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    accel_device* d = b->device;
    {
        std::lock_guard<std::mutex> lock(d->stats_mutex);
        d->bytes_in_use -= b->memory->size();
    }
    d->live_buffers--;
    delete b;
    device_release(d);
}

accel_status buffer_sync(accel_buffer* b, accel_sync_direction direction, uint64_t offset, uint64_t size) {
    accel_status s = accel_kit::check_sync_range(b, offset, &size, kBufferRules);
    if (s != ACCEL_OK) return s;
    Status f = b->memory->flush(direction == ACCEL_SYNC_TO_DEVICE);
    return f.ok() ? ACCEL_OK : fail(f.code, "accel_buffer_sync: " + f.message);
}

accel_status buffer_write(accel_buffer* b, uint64_t offset, const void* src, uint64_t size) {
    accel_status s = accel_kit::check_range("accel_buffer_write", b, offset, size, kBufferRules);
    if (s != ACCEL_OK) return s;
    if (size) memmove(static_cast<uint8_t*>(b->memory->host()) + offset, src, size);
    b->device->bytes_copied += size;
    return ACCEL_OK;
}

accel_status buffer_write_strided(accel_buffer* b, uint64_t offset, const void* src, uint32_t ndim,
                                  const int64_t* shape, const int64_t* strides, uint32_t element_size) {
    if (ndim > ACCEL_MAX_DIMS)
        return fail(ACCEL_ERR_INVALID_ARGUMENT,
                    format("accel_buffer_write_strided: %u dimensions (at most %d)", ndim, ACCEL_MAX_DIMS));
    uint64_t bytes = 0;
    uint32_t dim = 0;
    accel_kit::DenseSize dense = accel_kit::dense_bytes(ndim, shape, element_size, &bytes, &dim);
    if (dense == accel_kit::DenseSize::NegativeDim)
        return fail(ACCEL_ERR_SHAPE,
                    format("accel_buffer_write_strided: dimension %u is negative (%lld)", dim, (long long)shape[dim]));
    if (dense == accel_kit::DenseSize::Overflow)
        return fail(ACCEL_ERR_SHAPE, "accel_buffer_write_strided: the shape's size overflows");
    accel_status s = accel_kit::check_range("accel_buffer_write_strided", b, offset, bytes, kBufferRules);
    if (s != ACCEL_OK) return s;
    if (bytes)
        accel_kit::copy_strided(static_cast<uint8_t*>(b->memory->host()) + offset, static_cast<const uint8_t*>(src),
                                ndim, shape, strides, element_size);
    b->device->bytes_copied += bytes;
    return ACCEL_OK;
}

accel_status buffer_read(accel_buffer* b, uint64_t offset, void* dst, uint64_t size) {
    accel_status s = accel_kit::check_range("accel_buffer_read", b, offset, size, kBufferRules);
    if (s != ACCEL_OK) return s;
    if (size) memmove(dst, static_cast<const uint8_t*>(b->memory->host()) + offset, size);
    b->device->bytes_copied += size;
    return ACCEL_OK;
}

}  // namespace accel_bpu
