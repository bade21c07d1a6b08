// memory.cc - hbSysAllocMem, hbSysAllocCachedMem, hbSysFlushMem, hbSysWriteMem, hbSysReadMem,
// hbSysFreeMem over a registry of blocks (see memory.h).
#include "memory.h"

#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <new>

#include "dnn/hb_sys.h"

namespace standin {
namespace {

struct Block {
    uint64_t phy = 0;
    uint32_t size = 0;
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

// The block that `mem` describes (its phyAddr and virAddr must both match), or nullptr.
Block* find(Registry& r, const hbSysMem* mem) {
    auto it = r.by_phy.find(mem->phyAddr);
    if (it == r.by_phy.end() || it->second.cpu.get() != mem->virAddr) return nullptr;
    return &it->second;
}

// Runs fn(the CPU side) of the block `mem` describes, under the registry's lock, if that block holds
// `size` bytes; else HB_SYS_INVALID_ARGUMENT.
template <class Fn>
int32_t with_cpu_side(const hbSysMem* mem, uint32_t size, Fn fn) {
    if (!mem) return HB_SYS_INVALID_ARGUMENT;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    Block* block = find(r, mem);
    if (!block || size > block->size) return HB_SYS_INVALID_ARGUMENT;
    fn(block->cpu.get());
    return HB_SYS_SUCCESS;
}

int32_t allocate(hbSysMem* mem, uint32_t size, bool cached) {
    if (!mem || size == 0) return HB_SYS_INVALID_ARGUMENT;
    Block block;
    block.size = size;
    block.cpu.reset(new (std::nothrow) uint8_t[size]());
    if (cached) block.device.reset(new (std::nothrow) uint8_t[size]());
    if (!block.cpu || (cached && !block.device)) return HB_SYS_OUT_OF_MEMORY;
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    block.phy = r.next_phy;
    r.next_phy += ((uint64_t)size + 4095) / 4096 * 4096 + 4096;  // a gap: an overrun finds no block
    mem->phyAddr = block.phy;
    mem->virAddr = block.cpu.get();
    mem->memSize = size;
    r.by_phy.emplace(block.phy, std::move(block));
    return HB_SYS_SUCCESS;
}

}  // namespace

uint8_t* device_bytes(uint64_t phy, size_t bytes) {
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

using standin::registry;

extern "C" {

int32_t hbSysAllocMem(hbSysMem* mem, uint32_t size) { return standin::allocate(mem, size, false); }

int32_t hbSysAllocCachedMem(hbSysMem* mem, uint32_t size) { return standin::allocate(mem, size, true); }

int32_t hbSysFlushMem(hbSysMem* mem, int32_t flag) {
    if (!mem) return HB_SYS_INVALID_ARGUMENT;
    auto& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    standin::Block* block = standin::find(r, mem);
    if (!block || (flag != HB_SYS_MEM_CACHE_CLEAN && flag != HB_SYS_MEM_CACHE_INVALIDATE))
        return HB_SYS_INVALID_ARGUMENT;
    if (!block->device) return HB_SYS_SUCCESS;  // uncached: nothing to do
    if (flag == HB_SYS_MEM_CACHE_CLEAN) std::memcpy(block->device.get(), block->cpu.get(), block->size);
    else std::memcpy(block->cpu.get(), block->device.get(), block->size);
    return HB_SYS_SUCCESS;
}

int32_t hbSysWriteMem(hbSysMem* dest, char* src, uint32_t size) {
    if (!src) return HB_SYS_INVALID_ARGUMENT;
    return standin::with_cpu_side(dest, size, [&](uint8_t* cpu) { std::memcpy(cpu, src, size); });
}

int32_t hbSysReadMem(char* dest, hbSysMem* src, uint32_t size) {
    if (!dest) return HB_SYS_INVALID_ARGUMENT;
    return standin::with_cpu_side(src, size, [&](uint8_t* cpu) { std::memcpy(dest, cpu, size); });
}

// For the stand-in's own tests (C): the device side of a bus address range.
unsigned char* standin_device_bytes(unsigned long long phy, size_t bytes) { return standin::device_bytes(phy, bytes); }

int32_t hbSysFreeMem(hbSysMem* mem) {
    if (!mem) return HB_SYS_INVALID_ARGUMENT;
    auto& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!standin::find(r, mem)) return HB_SYS_INVALID_ARGUMENT;
    r.by_phy.erase(mem->phyAddr);
    mem->virAddr = nullptr;
    mem->phyAddr = 0;
    mem->memSize = 0;
    return HB_SYS_SUCCESS;
}

}  // extern "C"
