/* hb_sys.h - accel's stand-in for the memory part of Horizon's X3/X5 runtime (libdnn 1.2x), written
 * from the facts in ../shared/vendor-apis.md and Horizon's public API documentation, for building and
 * testing the bpu driver without a board. Names, types, field order and values follow the vendor's API
 * so that the driver compiles unchanged against the real SDK; everything else here is ours.
 * Never installed; tests only. */
#ifndef ACCEL_STANDIN_HB_SYS_H
#define ACCEL_STANDIN_HB_SYS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* BPU / DSP core selection bits (hbDNNInferCtrlParam.bpuCoreId, .dspCoreId); 0 lets the runtime pick. */
typedef enum { HB_BPU_CORE_ANY = 0, HB_BPU_CORE_0 = 1 << 0, HB_BPU_CORE_1 = 1 << 1 } hbBPUCore;
typedef enum { HB_DSP_CORE_ANY = 0, HB_DSP_CORE_0 = 1 << 0, HB_DSP_CORE_1 = 1 << 1 } hbDSPCore;

/* A block of memory the BPU can reach: its bus address, the CPU's mapping of it, its size. */
typedef struct {
    uint64_t phyAddr;
    void* virAddr;
    uint32_t memSize;
} hbSysMem;

/* Cached memory must be flushed by hand: CLEAN after the CPU wrote it (before the BPU reads),
 * INVALIDATE before the CPU reads what the BPU wrote. The stand-in keeps a separate "device" copy, so a
 * missing flush gives stale data as it does on a board. */
typedef enum { HB_SYS_MEM_CACHE_INVALIDATE = 1, HB_SYS_MEM_CACHE_CLEAN = 2 } hbSysMemFlushFlag;

typedef enum {
    HB_SYS_SUCCESS = 0,
    HB_SYS_INVALID_ARGUMENT = -6000129,
    HB_SYS_OUT_OF_MEMORY = -6000130,
    HB_SYS_REGISTER_MEM_FAILED = -6000131
} hbSysStatus;

int32_t hbSysAllocMem(hbSysMem* mem, uint32_t size);       /* uncached: no flush needed */
int32_t hbSysAllocCachedMem(hbSysMem* mem, uint32_t size); /* cached: hbSysFlushMem required */
int32_t hbSysFlushMem(hbSysMem* mem, int32_t flag);        /* hbSysMemFlushFlag */
int32_t hbSysWriteMem(hbSysMem* dest, char* src, uint32_t size);
int32_t hbSysReadMem(char* dest, hbSysMem* src, uint32_t size);
int32_t hbSysFreeMem(hbSysMem* mem);
/* Deprecated in the real SDK ("kept for compatibility"): the stand-in accepts and ignores them. */
int32_t hbSysRegisterMem(hbSysMem* mem);
int32_t hbSysUnregisterMem(hbSysMem* mem);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STANDIN_HB_SYS_H */
