/* test_memory.c - the stand-in's cached memory behaves like a board's: the device side sees CPU writes
 * only after CLEAN, the CPU sees device writes only after INVALIDATE; uncached memory needs neither. */
#include <stdio.h>
#include <string.h>

#include "dnn/hb_sys.h"

#include "check.h"

/* From the stand-in (tests only): the device side of a bus address range. */
unsigned char* standin_device_bytes(unsigned long long phy, size_t bytes);

int main(void) {
    hbSysMem cached, plain;
    CHECK(hbSysAllocCachedMem(&cached, 64) == HB_SYS_SUCCESS && cached.virAddr && cached.memSize == 64);
    CHECK(hbSysAllocMem(&plain, 64) == HB_SYS_SUCCESS);
    CHECK(cached.phyAddr != plain.phyAddr);

    memset(cached.virAddr, 7, 64);
    unsigned char* dev = standin_device_bytes(cached.phyAddr, 64);
    CHECK(dev && dev[0] == 0);                          /* not flushed: the device sees stale bytes */
    CHECK(hbSysFlushMem(&cached, HB_SYS_MEM_CACHE_CLEAN) == HB_SYS_SUCCESS);
    CHECK(dev[0] == 7 && dev[63] == 7);
    dev[5] = 42;                                        /* the BPU writes */
    CHECK(((unsigned char*)cached.virAddr)[5] == 7);    /* the CPU still sees its cache */
    CHECK(hbSysFlushMem(&cached, HB_SYS_MEM_CACHE_INVALIDATE) == HB_SYS_SUCCESS);
    CHECK(((unsigned char*)cached.virAddr)[5] == 42);

    memset(plain.virAddr, 3, 64);
    CHECK(standin_device_bytes(plain.phyAddr, 64)[10] == 3); /* uncached: one memory */
    CHECK(standin_device_bytes(plain.phyAddr, 65) == NULL);  /* past the block */
    CHECK(standin_device_bytes(plain.phyAddr + 64, 1) == NULL);

    CHECK(hbSysFlushMem(&cached, 3) == HB_SYS_INVALID_ARGUMENT);
    CHECK(hbSysFreeMem(&cached) == HB_SYS_SUCCESS && cached.virAddr == NULL);
    CHECK(hbSysFreeMem(&cached) == HB_SYS_INVALID_ARGUMENT);  /* twice */
    CHECK(hbSysFreeMem(&plain) == HB_SYS_SUCCESS);
    puts("test_memory: ok");
    return 0;
}
