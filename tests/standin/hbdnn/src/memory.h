// memory.h - the stand-in's BPU memory: every block has a CPU side (virAddr) and a device side (what
// the emulated BPU reads and writes, found by phyAddr). Uncached blocks share one buffer for both;
// cached blocks keep two, so that data moves between them only through hbSysFlushMem, as on a board
// where a missing CLEAN leaves the BPU reading stale data and a missing INVALIDATE leaves the CPU
// reading it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace standin {

// The device side of the block at `phy` holding at least `bytes` from there, or nullptr (an address
// no block covers, or a range running past the block's end).
uint8_t* device_bytes(uint64_t phy, size_t bytes);

// Number of blocks allocated and not freed (for the leak checks of the tests).
size_t live_blocks();

}  // namespace standin
