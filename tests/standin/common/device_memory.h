// device_memory.h - a stand-in BPU's memory: every block has a CPU side (its virtual address) and a
// device side (what the emulated BPU reads and writes, found by bus address). Uncached blocks share
// one buffer for both; cached blocks keep two, so that data moves between them only on a flush, as
// on a board where a missing CLEAN leaves the BPU reading stale data and a missing INVALIDATE leaves
// the CPU reading it. Each stand-in library links its own copy (hidden symbols): its own registry.
#pragma once

#include <cstddef>
#include <cstdint>

namespace standin {

enum class MemStatus { Ok, InvalidArgument, OutOfMemory };
enum class Flush { Clean, Invalidate };

// Blocks larger than this are refused (OutOfMemory) without asking the allocator.
constexpr uint64_t kMaxBlockBytes = uint64_t(4) << 30;

// A new zeroed block of `size` (> 0) bytes: its bus address and CPU side.
MemStatus mem_alloc(uint64_t size, bool cached, uint64_t* phy, void** cpu);

// Moves a cached block's bytes between its sides (nothing for an uncached one). The block is the one
// whose bus address and CPU side are `phy` and `cpu`.
MemStatus mem_flush(uint64_t phy, const void* cpu, Flush direction);

// Copies between a block's CPU side and caller memory (`size` bytes from its start).
MemStatus mem_write_cpu(uint64_t phy, const void* cpu, const void* src, uint64_t size);
MemStatus mem_read_cpu(uint64_t phy, const void* cpu, void* dst, uint64_t size);

MemStatus mem_free(uint64_t phy, const void* cpu);

// The device side of the block at `phy` holding at least `bytes` from there, or nullptr (an address
// no block covers, or a range running past the block's end).
uint8_t* device_bytes(uint64_t phy, uint64_t bytes);

// Number of blocks allocated and not freed (for the leak checks of the tests).
size_t live_blocks();

}  // namespace standin
