// pool.h - the emulated device's memory: one region reserved when the device opens, handed out in
// 64-byte aligned blocks by a best-fit allocator (O(log n) per allocation and free: free blocks are
// indexed by size and by address, neighbours coalesce on free). In debug mode every block is framed
// by guard bytes so that a write past either end is caught on free and after every job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

namespace accel_emu {

constexpr uint64_t kAlignment = 64;
constexpr uint64_t kGuardBytes = 64;  // on each side of a block, debug mode only
constexpr uint8_t kGuardPattern = 0xAB;

struct Block {
    uint8_t* ptr = nullptr;  // the caller's bytes (after the leading guard)
    uint64_t size = 0;       // usable bytes, a multiple of kAlignment
    uint64_t offset = 0;     // of the whole block (guards included) in the region
    uint64_t span = 0;       // bytes of the whole block (guards included)
};

struct PoolStats {
    uint64_t bytes_in_use = 0;
    uint64_t peak_bytes_in_use = 0;
    uint64_t allocations = 0;
};

class Pool {
public:
    Pool() = default;
    ~Pool();
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    // Reserves `bytes` of address space (committed lazily by the OS). False if the OS refuses.
    bool reserve(uint64_t bytes, bool debug);
    // A block of at least `size` bytes, or false if no free range is large enough.
    bool allocate(uint64_t size, Block* out);
    // Returns the block; false (and *problem set) if its guard bytes were overwritten (debug mode).
    bool release(const Block& block, std::string* problem);
    // Checks the block's guard bytes (always true outside debug mode).
    bool check(const Block& block, std::string* problem) const;

    PoolStats stats() const;
    uint64_t capacity() const { return capacity_; }
    bool debug() const { return debug_; }

private:
    void insert_free(uint64_t offset, uint64_t span);
    void erase_free(std::map<uint64_t, uint64_t>::iterator by_offset);

    mutable std::mutex mutex_;
    uint8_t* base_ = nullptr;
    uint64_t capacity_ = 0;
    bool debug_ = false;
    std::map<uint64_t, uint64_t> free_by_offset_;       // offset -> span
    std::set<std::pair<uint64_t, uint64_t>> free_by_size_;  // (span, offset): best fit, then lowest address
    PoolStats stats_;
};

}  // namespace accel_emu
