/* hb_ucp_sys.h - accel's stand-in for the memory part of Horizon's S100 runtime (hbUCP 3.x), written
 * from the facts in ../shared/vendor-apis.md and Horizon's public API documentation, for building and
 * testing the bpu driver without a board. Names, types, field order and values follow the vendor's
 * API so that the driver compiles unchanged against the real SDK; everything else here is ours.
 * Never installed; tests only. */
#ifndef ACCEL_STANDIN_HB_UCP_SYS_H
#define ACCEL_STANDIN_HB_UCP_SYS_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h> /* inside extern "C", as in the real header */

/* A block of memory the BPU can reach: its bus address, the CPU's mapping of it, its size. */
typedef struct hbUCPSysMem {
    uint64_t phyAddr;
    void* virAddr;
    uint64_t memSize;
} hbUCPSysMem;

/* Cached memory must be flushed by hand: CLEAN after the CPU wrote it (before the BPU reads),
 * INVALIDATE before the CPU reads what the BPU wrote. The stand-in keeps a separate "device" copy of
 * every cached block, so a missing flush gives stale data as it does on a board. */
typedef enum { HB_SYS_MEM_CACHE_INVALIDATE = 1, HB_SYS_MEM_CACHE_CLEAN = 2 } hbUCPSysMemFlushFlag;

/* deviceId is reserved: 0. */
int32_t hbUCPMalloc(hbUCPSysMem* mem, uint64_t size, int32_t deviceId);       /* uncached */
int32_t hbUCPMallocCached(hbUCPSysMem* mem, uint64_t size, int32_t deviceId); /* needs hbUCPMemFlush */
int32_t hbUCPMemFlush(hbUCPSysMem const* mem, int32_t flag);                  /* hbUCPSysMemFlushFlag */
int32_t hbUCPFree(hbUCPSysMem* mem);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STANDIN_HB_UCP_SYS_H */
