// memory.cc - hbUCPMalloc, hbUCPMallocCached, hbUCPMemFlush, hbUCPFree over the stand-ins' device
// memory (../../common/device_memory.h).
#include "device_memory.h"
#include "hobot/hb_ucp_status.h"
#include "hobot/hb_ucp_sys.h"

namespace {

int32_t allocate(hbUCPSysMem* mem, uint64_t size, int32_t device_id, bool cached) {
    if (!mem || device_id != 0) return HB_UCP_INVALID_ARGUMENT;
    uint64_t phy = 0;
    void* cpu = nullptr;
    switch (standin::mem_alloc(size, cached, &phy, &cpu)) {
        case standin::MemStatus::Ok:
            mem->phyAddr = phy;
            mem->virAddr = cpu;
            mem->memSize = size;
            return HB_UCP_SUCCESS;
        case standin::MemStatus::OutOfMemory: return HB_UCP_MEM_ALLOC_FAIL;
        default: return HB_UCP_INVALID_ARGUMENT;
    }
}

}  // namespace

extern "C" {

int32_t hbUCPMalloc(hbUCPSysMem* mem, uint64_t size, int32_t deviceId) { return allocate(mem, size, deviceId, false); }

int32_t hbUCPMallocCached(hbUCPSysMem* mem, uint64_t size, int32_t deviceId) {
    return allocate(mem, size, deviceId, true);
}

int32_t hbUCPMemFlush(hbUCPSysMem const* mem, int32_t flag) {
    if (!mem || (flag != HB_SYS_MEM_CACHE_CLEAN && flag != HB_SYS_MEM_CACHE_INVALIDATE)) return HB_UCP_INVALID_ARGUMENT;
    standin::Flush direction = flag == HB_SYS_MEM_CACHE_CLEAN ? standin::Flush::Clean : standin::Flush::Invalidate;
    return standin::mem_flush(mem->phyAddr, mem->virAddr, direction) == standin::MemStatus::Ok ? HB_UCP_SUCCESS
                                                                                               : HB_UCP_MEM_IS_INVALID;
}

int32_t hbUCPFree(hbUCPSysMem* mem) {
    if (!mem) return HB_UCP_INVALID_ARGUMENT;
    if (standin::mem_free(mem->phyAddr, mem->virAddr) != standin::MemStatus::Ok) return HB_UCP_MEM_IS_INVALID;
    mem->phyAddr = 0;
    mem->virAddr = nullptr;
    mem->memSize = 0;
    return HB_UCP_SUCCESS;
}

// Tests only (C): the device side of a bus address range, or NULL.
unsigned char* standin_hbucp_device_bytes(unsigned long long phy, unsigned long long bytes) {
    return standin::device_bytes(phy, bytes);
}

}  // extern "C"
