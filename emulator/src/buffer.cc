// buffer.cc - device buffers: pool-backed or imported host memory, and the runtime's copies in and out.
#include <cstdio>
#include <cstring>
#include <new>

#include "driver_kit/buffer_checks.h"
#include "driver_kit/buffer_copy.h"
#include "handles.h"
#include "status.h"

namespace accel_emu {

namespace {

accel_buffer* new_buffer(accel_device* d) {
    auto* b = new (std::nothrow) accel_buffer();
    if (!b) return nullptr;
    b->header.driver = &kDriverTable;
    b->device = d;
    d->refs.fetch_add(1, std::memory_order_relaxed);
    b->id = d->next_buffer_id.fetch_add(1);
    d->live_buffers++;
    return b;
}

std::string outside(const accel_buffer* b, uint64_t offset, uint64_t size) {
    return format("range [%llu, %llu+%llu) exceeds buffer #%llu of %llu bytes", (unsigned long long)offset,
                  (unsigned long long)offset, (unsigned long long)size, (unsigned long long)b->id,
                  (unsigned long long)b->size);
}

}  // namespace

extern const accel_kit::BufferRules kBufferRules = accel_kit::member_rules<accel_buffer>(outside);

accel_status buffer_alloc(accel_device* d, uint64_t size, accel_buffer** out) {
    Block block;
    if (!d->pool.allocate(size, &block)) {
        PoolStats s = d->pool.stats();
        return fail(ACCEL_ERR_OUT_OF_MEMORY,
                    format("emu: cannot allocate %llu bytes: %llu of the pool's %llu bytes are in use "
                           "(open the device with a larger pool=, e.g. emu:pool=1G)",
                           (unsigned long long)size, (unsigned long long)s.bytes_in_use,
                           (unsigned long long)d->pool.capacity()));
    }
    accel_buffer* b = new_buffer(d);
    if (!b) {
        d->pool.release(block, nullptr);
        return fail(ACCEL_ERR_OUT_OF_MEMORY, "emu: out of host memory");
    }
    b->block = block;
    b->host = block.ptr;
    b->size = block.size;
    if (d->options.debug) {
        std::lock_guard<std::mutex> lock(d->check_mutex);
        d->live.insert(b);
    }
    *out = b;
    return ACCEL_OK;
}

accel_status buffer_import(accel_device* d, void* host, uint64_t size, accel_buffer** out) {
    if (reinterpret_cast<uintptr_t>(host) % kAlignment != 0)
        return fail(ACCEL_ERR_ALIGNMENT, format("accel_buffer_import: host pointer %p is not %llu-byte aligned", host,
                                                (unsigned long long)kAlignment));
    accel_buffer* b = new_buffer(d);
    if (!b) return fail(ACCEL_ERR_OUT_OF_MEMORY, "emu: out of host memory");
    b->host = static_cast<uint8_t*>(host);
    b->size = size;
    *out = b;
    return ACCEL_OK;
}

void buffer_retain(accel_buffer* b) { b->refs.fetch_add(1, std::memory_order_relaxed); }

void buffer_release(accel_buffer* b) {
    if (b->refs.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    accel_device* d = b->device;
    if (b->block.ptr) {
        std::string problem;
        if (d->options.debug) {
            std::lock_guard<std::mutex> lock(d->check_mutex);
            d->live.erase(b);
        }
        if (!d->pool.release(b->block, &problem)) {
            std::string report = format("buffer #%llu (%llu bytes), found when it was freed: %s",
                                        (unsigned long long)b->id, (unsigned long long)b->size, problem.c_str());
            fprintf(stderr, "accel emu: memory corruption: %s\n", report.c_str());
            std::lock_guard<std::mutex> lock(d->check_mutex);
            if (d->deferred_corruption.empty()) d->deferred_corruption = report;
        }
    }
    d->live_buffers--;
    delete b;
    device_release(d);
}

accel_status buffer_sync(accel_buffer* b, accel_sync_direction, uint64_t offset, uint64_t size) {
    // Host and emulated device share coherent memory: only the range is checked, as a board would.
    return accel_kit::check_sync_range(b, offset, &size, kBufferRules);
}

accel_status buffer_write(accel_buffer* b, uint64_t offset, const void* src, uint64_t size) {
    accel_status s = accel_kit::check_range("accel_buffer_write", b, offset, size, kBufferRules);
    if (s != ACCEL_OK) return s;
    if (size) memmove(b->host + offset, src, size);
    b->device->bytes_copied += size;
    return ACCEL_OK;
}

accel_status buffer_write_strided(accel_buffer* b, uint64_t offset, const void* src, uint32_t ndim,
                                  const int64_t* shape, const int64_t* strides, uint32_t elem) {
    uint64_t bytes = 0;
    uint32_t dim = 0;
    accel_kit::DenseSize dense = accel_kit::dense_bytes(ndim, shape, elem, &bytes, &dim);
    if (dense == accel_kit::DenseSize::NegativeDim)
        return fail(ACCEL_ERR_SHAPE,
                    format("accel_buffer_write_strided: shape[%u] is negative (%lld)", dim, (long long)shape[dim]));
    if (dense == accel_kit::DenseSize::Overflow)
        return fail(ACCEL_ERR_SHAPE, "accel_buffer_write_strided: shape overflows");
    accel_status s = accel_kit::check_range("accel_buffer_write_strided", b, offset, bytes, kBufferRules);
    if (s != ACCEL_OK) return s;
    if (bytes) accel_kit::copy_strided(b->host + offset, static_cast<const uint8_t*>(src), ndim, shape, strides, elem);
    b->device->bytes_copied += bytes;
    return ACCEL_OK;
}

accel_status buffer_read(accel_buffer* b, uint64_t offset, void* dst, uint64_t size) {
    accel_status s = accel_kit::check_range("accel_buffer_read", b, offset, size, kBufferRules);
    if (s != ACCEL_OK) return s;
    if (size) memmove(dst, b->host + offset, size);
    b->device->bytes_copied += size;
    return ACCEL_OK;
}

}  // namespace accel_emu
