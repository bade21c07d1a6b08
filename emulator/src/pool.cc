#include "pool.h"

#include <sys/mman.h>

#include <cstring>

#include "status.h"

namespace accel_emu {

namespace {
uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Index of the first byte in [p, p+n) that is not the guard pattern, or n.
uint64_t first_bad_guard_byte(const uint8_t* p, uint64_t n) {
    for (uint64_t i = 0; i < n; i++)
        if (p[i] != kGuardPattern) return i;
    return n;
}
}  // namespace

Pool::~Pool() {
    if (base_) munmap(base_, capacity_);
}

bool Pool::reserve(uint64_t bytes, bool debug) {
    capacity_ = round_up(bytes, kAlignment);
    debug_ = debug;
    // MAP_NORESERVE: the region is the device's, but pages cost host memory only once touched.
    void* p = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        capacity_ = 0;
        return false;
    }
    base_ = static_cast<uint8_t*>(p);
    insert_free(0, capacity_);
    return true;
}

void Pool::insert_free(uint64_t offset, uint64_t span) {
    free_by_offset_.emplace(offset, span);
    free_by_size_.emplace(span, offset);
}

void Pool::erase_free(std::map<uint64_t, uint64_t>::iterator it) {
    free_by_size_.erase({it->second, it->first});
    free_by_offset_.erase(it);
}

bool Pool::allocate(uint64_t size, Block* out) {
    if (size == 0 || size > capacity_) return false;
    const uint64_t usable = round_up(size, kAlignment);
    const uint64_t guard = debug_ ? kGuardBytes : 0;
    const uint64_t span = usable + 2 * guard;
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = free_by_size_.lower_bound({span, 0});  // best fit: the smallest free range that is enough
    if (best == free_by_size_.end()) return false;
    const uint64_t offset = best->second, free_span = best->first;
    if (free_span > span) {
        // Split: the remainder reuses both index nodes, so the common path allocates no host memory.
        auto by_size = free_by_size_.extract(best);
        auto by_offset = free_by_offset_.extract(offset);
        by_size.value() = {free_span - span, offset + span};
        by_offset.key() = offset + span;
        by_offset.mapped() = free_span - span;
        free_by_size_.insert(std::move(by_size));
        free_by_offset_.insert(std::move(by_offset));
    } else {
        erase_free(free_by_offset_.find(offset));
    }
    Block b;
    b.offset = offset;
    b.span = span;
    b.size = usable;
    b.ptr = base_ + offset + guard;
    if (debug_) {
        std::memset(base_ + offset, kGuardPattern, guard);
        std::memset(b.ptr + usable, kGuardPattern, guard);
    }
    stats_.bytes_in_use += span;
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
    stats_.allocations++;
    *out = b;
    return true;
}

bool Pool::check(const Block& b, std::string* problem) const {
    if (!debug_ || !b.ptr) return true;
    const uint8_t* lead = b.ptr - kGuardBytes;
    const uint8_t* trail = b.ptr + b.size;
    uint64_t bad_lead = first_bad_guard_byte(lead, kGuardBytes);
    if (bad_lead != kGuardBytes) {
        if (problem)
            *problem = format("guard bytes before the start overwritten (%llu bytes before the buffer)",
                              (unsigned long long)(kGuardBytes - bad_lead));
        return false;
    }
    uint64_t bad_trail = first_bad_guard_byte(trail, kGuardBytes);
    if (bad_trail != kGuardBytes) {
        if (problem)
            *problem = format("guard bytes after the end overwritten (at byte %llu of a %llu-byte buffer)",
                              (unsigned long long)(b.size + bad_trail), (unsigned long long)b.size);
        return false;
    }
    return true;
}

bool Pool::release(const Block& b, std::string* problem) {
    if (!b.ptr) return true;
    bool intact = check(b, problem);
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t offset = b.offset, span = b.span;
    // Coalesce with the free neighbours so that fragmentation does not grow with use. A neighbour's
    // index nodes are reused for the merged range, so freeing allocates no host memory either.
    decltype(free_by_offset_)::node_type by_offset;
    decltype(free_by_size_)::node_type by_size;
    auto absorb = [&](std::map<uint64_t, uint64_t>::iterator it) {
        auto size_node = free_by_size_.extract({it->second, it->first});
        auto offset_node = free_by_offset_.extract(it);
        if (!by_offset) {
            by_offset = std::move(offset_node);
            by_size = std::move(size_node);
        }
    };
    auto next = free_by_offset_.lower_bound(offset);
    if (next != free_by_offset_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == offset) {
            offset = prev->first;
            span += prev->second;
            absorb(prev);
        }
    }
    if (next != free_by_offset_.end() && next->first == b.offset + b.span) {
        span += next->second;
        absorb(next);
    }
    if (by_offset) {
        by_offset.key() = offset;
        by_offset.mapped() = span;
        by_size.value() = {span, offset};
        free_by_offset_.insert(std::move(by_offset));
        free_by_size_.insert(std::move(by_size));
    } else {
        insert_free(offset, span);
    }
    stats_.bytes_in_use -= b.span;
    return intact;
}

PoolStats Pool::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

}  // namespace accel_emu
