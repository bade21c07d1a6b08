/* test_memory.c - the hbUCP stand-in's memory behaves like a board's: the device side of cached
 * memory sees CPU writes only after CLEAN, the CPU sees device writes only after INVALIDATE; uncached
 * memory needs neither; the vendor's codes for bad arguments, exhaustion and double frees. */
#include <stdio.h>
#include <string.h>

#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"

#include "check.h"

/* From the stand-in (tests only): the device side of a bus address range. */
unsigned char* standin_hbucp_device_bytes(unsigned long long phy, unsigned long long bytes);

int main(void) {
    hbUCPSysMem cached, plain, none;
    CHECK(hbUCPMallocCached(&cached, 64, 0) == HB_UCP_SUCCESS && cached.virAddr && cached.memSize == 64);
    CHECK(hbUCPMalloc(&plain, 64, 0) == HB_UCP_SUCCESS);
    CHECK(cached.phyAddr != plain.phyAddr);
    CHECK(hbUCPMallocCached(&none, 0, 0) == HB_UCP_INVALID_ARGUMENT);
    CHECK(hbUCPMallocCached(&none, 64, 1) == HB_UCP_INVALID_ARGUMENT); /* deviceId is reserved: 0 */
    CHECK(hbUCPMallocCached(&none, 1ull << 40, 0) == HB_UCP_MEM_ALLOC_FAIL);
    CHECK(hbUCPMalloc(NULL, 64, 0) == HB_UCP_INVALID_ARGUMENT);

    memset(cached.virAddr, 7, 64);
    unsigned char* dev = standin_hbucp_device_bytes(cached.phyAddr, 64);
    CHECK(dev && dev[0] == 0);                         /* not flushed: the device sees stale bytes */
    CHECK(hbUCPMemFlush(&cached, HB_SYS_MEM_CACHE_CLEAN) == HB_UCP_SUCCESS);
    CHECK(dev[0] == 7 && dev[63] == 7);
    dev[5] = 42;                                       /* the BPU writes */
    CHECK(((unsigned char*)cached.virAddr)[5] == 7);   /* the CPU still sees its cache */
    CHECK(hbUCPMemFlush(&cached, HB_SYS_MEM_CACHE_INVALIDATE) == HB_UCP_SUCCESS);
    CHECK(((unsigned char*)cached.virAddr)[5] == 42);

    memset(plain.virAddr, 3, 64);
    CHECK(standin_hbucp_device_bytes(plain.phyAddr, 64)[10] == 3); /* uncached: one memory */
    CHECK(hbUCPMemFlush(&plain, HB_SYS_MEM_CACHE_CLEAN) == HB_UCP_SUCCESS);
    CHECK(standin_hbucp_device_bytes(plain.phyAddr, 65) == NULL);  /* past the block */
    CHECK(standin_hbucp_device_bytes(plain.phyAddr + 64, 1) == NULL);

    CHECK(hbUCPMemFlush(&cached, 3) == HB_UCP_INVALID_ARGUMENT);
    CHECK(hbUCPMemFlush(NULL, HB_SYS_MEM_CACHE_CLEAN) == HB_UCP_INVALID_ARGUMENT);
    hbUCPSysMem copy = cached;
    CHECK(hbUCPFree(&cached) == HB_UCP_SUCCESS && cached.virAddr == NULL && cached.memSize == 0);
    CHECK(hbUCPFree(&copy) == HB_UCP_MEM_IS_INVALID);                          /* twice */
    CHECK(hbUCPMemFlush(&copy, HB_SYS_MEM_CACHE_CLEAN) == HB_UCP_MEM_IS_INVALID); /* freed */
    CHECK(hbUCPFree(&plain) == HB_UCP_SUCCESS);
    CHECK(strcmp(hbUCPGetErrorDesc(HB_UCP_MEM_ALLOC_FAIL), "memory allocation failed") == 0);
    puts("test_memory: ok");
    return 0;
}
