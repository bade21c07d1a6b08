// buffer.cc - the vart driver's buffers. A buffer is host memory, or, where possible, a runner's own
// HOST_PHY buffer lent out: an allocation of exactly the byte size of a tensor of a loaded model takes
// that runner buffer if it is not lent yet (the zero-copy path: a job that uses it on its runner for
// that tensor copies nothing). Syncs on a lent buffer are the runner buffer's syncs.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "driver_kit/buffer_checks.h"
#include "driver_kit/buffer_copy.h"
#include "entry_points.h"
#include "handles.h"

namespace accel_vart {
namespace {

void count_alloc(accel_device* d, uint64_t size) {
    uint64_t now = d->bytes_in_use.fetch_add(size) + size;
    uint64_t peak = d->peak_bytes.load();
    while (now > peak && !d->peak_bytes.compare_exchange_weak(peak, now)) {
    }
    d->live_buffers.fetch_add(1);
    d->allocations.fetch_add(1);
}

accel_buffer* new_buffer(accel_device* d, uint8_t* host, uint64_t size) {
    auto* b = new accel_buffer;
    b->header.driver = &kDriverTable;
    b->device = d;
    b->host = host;
    b->size = size;
    device_retain(d);
    count_alloc(d, size);
    return b;
}

// Lends a runner buffer of exactly `size` bytes, if a loaded model has one free; nullptr if none.
accel_buffer* borrow(accel_device* d, uint64_t size) {
    std::vector<std::shared_ptr<Runners>> models;
    {
        std::lock_guard<std::mutex> lock(d->mutex);
        for (auto& w : d->models)
            if (auto m = w.lock()) models.push_back(std::move(m));
    }
    for (auto& m : models) {
        std::lock_guard<std::mutex> lock(m->lend_mutex);
        for (size_t s = 0; s < m->slots.size(); s++) {
            Slot& slot = m->slots[s];
            for (int out = 0; out < 2; out++) {
                auto& bufs = out ? slot.outputs : slot.inputs;
                auto& lent = out ? slot.lent_outputs : slot.lent_inputs;
                for (size_t i = 0; i < bufs.size(); i++) {
                    if (lent[i]) continue;
                    auto mem = bufs[i]->data({});
                    if (mem.second != size || mem.first % kAlignment != 0) continue;
                    lent[i] = true;
                    accel_buffer* b = new_buffer(d, reinterpret_cast<uint8_t*>((uintptr_t)mem.first), size);
                    b->lender = m;
                    b->slot = s;
                    b->index = i;
                    b->is_output = out != 0;
                    b->runner_buffer = bufs[i];
                    return b;
                }
            }
        }
    }
    return nullptr;
}

std::string outside(const accel_buffer* b, uint64_t offset, uint64_t size) {
    return format("[%llu, +%llu) is outside the %llu-byte buffer", (unsigned long long)offset, (unsigned long long)size,
                  (unsigned long long)b->size);
}

}  // namespace

extern const accel_kit::BufferRules kBufferRules = accel_kit::member_rules<accel_buffer>(outside);

accel_status buffer_alloc(accel_device* d, uint64_t size, accel_buffer** out) {
    if (size == 0) return fail(ACCEL_ERR_INVALID_ARGUMENT, "buffer size 0");
    if (size > (1ull << 40)) return fail(ACCEL_ERR_OUT_OF_MEMORY, format("%llu bytes", (unsigned long long)size));
    if (accel_buffer* lent = borrow(d, size)) {
        *out = lent;
        return ACCEL_OK;
    }
    uint64_t rounded = (size + kAlignment - 1) / kAlignment * kAlignment;
    void* host = std::aligned_alloc(kAlignment, rounded);
    if (!host) return fail(ACCEL_ERR_OUT_OF_MEMORY, format("%llu bytes of host memory", (unsigned long long)rounded));
    accel_buffer* b = new_buffer(d, static_cast<uint8_t*>(host), rounded);
    b->owned = true;
    *out = b;
    return ACCEL_OK;
}

accel_status buffer_import(accel_device* d, void* host, uint64_t size, accel_buffer** out) {
    if (!host || size == 0) return fail(ACCEL_ERR_INVALID_ARGUMENT, "import of a null pointer or of 0 bytes");
    if ((uintptr_t)host % kAlignment != 0)
        return fail(ACCEL_ERR_ALIGNMENT,
                    format("imported pointer %p is not %llu-byte aligned", host, (unsigned long long)kAlignment));
    *out = new_buffer(d, static_cast<uint8_t*>(host), size);
    return ACCEL_OK;
}

void buffer_retain(accel_buffer* b) { b->refs.fetch_add(1); }

void buffer_release(accel_buffer* b) {
    if (!b || b->refs.fetch_sub(1) != 1) return;
    accel_device* d = b->device;
    if (b->lender) {
        std::lock_guard<std::mutex> lock(b->lender->lend_mutex);
        Slot& slot = b->lender->slots[b->slot];
        (b->is_output ? slot.lent_outputs : slot.lent_inputs)[b->index] = false;
    }
    if (b->owned) std::free(b->host);
    d->bytes_in_use.fetch_sub(b->size);
    d->live_buffers.fetch_sub(1);
    delete b;  // a lent buffer's runners (and graph) go with the last of their users
    device_release(d);
}

accel_status buffer_sync(accel_buffer* b, accel_sync_direction direction, uint64_t offset, uint64_t size) {
    if (accel_status st = accel_kit::check_sync_range(b, offset, &size, kBufferRules)) return st;
    if (b->runner_buffer && size > 0) {
        if (direction == ACCEL_SYNC_TO_DEVICE) b->runner_buffer->sync_for_write(offset, size);
        else b->runner_buffer->sync_for_read(offset, size);
    }
    return ACCEL_OK;
}

accel_status buffer_write(accel_buffer* b, uint64_t offset, const void* src, uint64_t size) {
    if (accel_status st = accel_kit::check_range("accel_buffer_write", b, offset, size, kBufferRules)) return st;
    if (size && !src) return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_buffer_write: null source");
    if (size) std::memcpy(b->host + offset, src, size);
    b->device->bytes_copied.fetch_add(size);
    return ACCEL_OK;
}

accel_status buffer_read(accel_buffer* b, uint64_t offset, void* dst, uint64_t size) {
    if (accel_status st = accel_kit::check_range("accel_buffer_read", b, offset, size, kBufferRules)) return st;
    if (size && !dst) return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_buffer_read: null destination");
    if (size) std::memcpy(dst, b->host + offset, size);
    b->device->bytes_copied.fetch_add(size);
    return ACCEL_OK;
}

accel_status buffer_write_strided(accel_buffer* b, uint64_t offset, const void* src, uint32_t ndim,
                                  const int64_t* shape, const int64_t* strides, uint32_t element_size) {
    if (ndim > ACCEL_MAX_DIMS || element_size == 0 || (ndim && (!shape || !strides)) || !src)
        return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_buffer_write_strided: bad shape, strides or element size");
    uint64_t count = 1;
    for (uint32_t i = 0; i < ndim; i++) {
        if (shape[i] < 0) return fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_buffer_write_strided: negative dim");
        if (shape[i] && count > (1ull << 40) / (uint64_t)shape[i])
            return fail(ACCEL_ERR_SHAPE, "accel_buffer_write_strided: too many elements");
        count *= (uint64_t)shape[i];
    }
    if (count > (1ull << 40) / element_size) return fail(ACCEL_ERR_SHAPE, "accel_buffer_write_strided: too large");
    if (accel_status st =
            accel_kit::check_range("accel_buffer_write_strided", b, offset, count * element_size, kBufferRules))
        return st;
    if (count)
        accel_kit::copy_strided(b->host + offset, static_cast<const uint8_t*>(src), ndim, shape, strides, element_size);
    b->device->bytes_copied.fetch_add(count * element_size);
    return ACCEL_OK;
}

}  // namespace accel_vart
