// device_memory.cc - the block registry behind device_memory.h.
#include "device_memory.h"

#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <new>

namespace standin {
namespace {

struct Block {
    uint64_t phy = 0;
    uint64_t size = 0;
    std::unique_ptr<uint8_t[]> cpu;
    std::unique_ptr<uint8_t[]> device;  // null for an uncached block: the device reads `cpu`
    uint8_t* device_side() { return device ? device.get() : cpu.get(); }
};

struct Registry {
    std::mutex mutex;
    std::map<uint64_t, Block> by_phy;  // keyed by the block's first bus address
    uint64_t next_phy = 0x80000000ull;  // bus addresses: made up, 4 KiB apart at least
};

Registry& registry() {
    static Registry* r = new Registry;  // never destroyed: tasks may end after exit begins
    return *r;
}

// The block whose bus address and CPU side are `phy` and `cpu` (both must match), or nullptr.
Block* find(Registry& r, uint64_t phy, const void* cpu) {
    auto it = r.by_phy.find(phy);
    if (it == r.by_phy.end() || it->second.cpu.get() != cpu) return nullptr;
    return &it->second;
}

// Runs fn(the CPU side) of the block, under the registry's lock, if it holds `size` bytes.
template <class Fn>
MemStatus with_cpu_side(uint64_t phy, const void* cpu, uint64_t size, Fn fn) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    Block* block = find(r, phy, cpu);
    if (!block || size > block->size) return MemStatus::InvalidArgument;
    fn(block->cpu.get());
    return MemStatus::Ok;
}

}  // namespace

MemStatus mem_alloc(uint64_t size, bool cached, uint64_t* phy, void** cpu) {
    if (!phy || !cpu || size == 0) return MemStatus::InvalidArgument;
    if (size > kMaxBlockBytes) return MemStatus::OutOfMemory;
    Block block;
    block.size = size;
    block.cpu.reset(new (std::nothrow) uint8_t[size]());
    if (cached) block.device.reset(new (std::nothrow) uint8_t[size]());
    if (!block.cpu || (cached && !block.device)) return MemStatus::OutOfMemory;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    block.phy = r.next_phy;
    r.next_phy += (size + 4095) / 4096 * 4096 + 4096;  // a gap: an overrun finds no block
    *phy = block.phy;
    *cpu = block.cpu.get();
    r.by_phy.emplace(block.phy, std::move(block));
    return MemStatus::Ok;
}

MemStatus mem_flush(uint64_t phy, const void* cpu, Flush direction) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    Block* block = find(r, phy, cpu);
    if (!block) return MemStatus::InvalidArgument;
    if (!block->device) return MemStatus::Ok;  // uncached: nothing to do
    if (direction == Flush::Clean) std::memcpy(block->device.get(), block->cpu.get(), block->size);
    else std::memcpy(block->cpu.get(), block->device.get(), block->size);
    return MemStatus::Ok;
}

MemStatus mem_write_cpu(uint64_t phy, const void* cpu, const void* src, uint64_t size) {
    if (!src) return MemStatus::InvalidArgument;
    return with_cpu_side(phy, cpu, size, [&](uint8_t* side) { std::memcpy(side, src, size); });
}

MemStatus mem_read_cpu(uint64_t phy, const void* cpu, void* dst, uint64_t size) {
    if (!dst) return MemStatus::InvalidArgument;
    return with_cpu_side(phy, cpu, size, [&](uint8_t* side) { std::memcpy(dst, side, size); });
}

MemStatus mem_free(uint64_t phy, const void* cpu) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!find(r, phy, cpu)) return MemStatus::InvalidArgument;
    r.by_phy.erase(phy);
    return MemStatus::Ok;
}

uint8_t* device_bytes(uint64_t phy, uint64_t bytes) {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    auto it = r.by_phy.upper_bound(phy);
    if (it == r.by_phy.begin()) return nullptr;
    Block& block = std::prev(it)->second;
    uint64_t offset = phy - block.phy;
    if (offset > block.size || bytes > block.size - offset) return nullptr;
    return block.device_side() + offset;
}

size_t live_blocks() {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.by_phy.size();
}

}  // namespace standin
