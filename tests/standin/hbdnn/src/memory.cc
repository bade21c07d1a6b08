// memory.cc - hbSysAllocMem, hbSysAllocCachedMem, hbSysFlushMem, hbSysWriteMem, hbSysReadMem,
// hbSysFreeMem over the stand-ins' device memory (../../common/device_memory.h).
#include "device_memory.h"
#include "dnn/hb_sys.h"

namespace {

int32_t sys_status(standin::MemStatus s) {
    switch (s) {
        case standin::MemStatus::Ok: return HB_SYS_SUCCESS;
        case standin::MemStatus::OutOfMemory: return HB_SYS_OUT_OF_MEMORY;
        default: return HB_SYS_INVALID_ARGUMENT;
    }
}

int32_t allocate(hbSysMem* mem, uint32_t size, bool cached) {
    if (!mem) return HB_SYS_INVALID_ARGUMENT;
    uint64_t phy = 0;
    void* cpu = nullptr;
    standin::MemStatus s = standin::mem_alloc(size, cached, &phy, &cpu);
    if (s == standin::MemStatus::Ok) {
        mem->phyAddr = phy;
        mem->virAddr = cpu;
        mem->memSize = size;
    }
    return sys_status(s);
}

}  // namespace

extern "C" {

int32_t hbSysAllocMem(hbSysMem* mem, uint32_t size) { return allocate(mem, size, false); }

int32_t hbSysAllocCachedMem(hbSysMem* mem, uint32_t size) { return allocate(mem, size, true); }

int32_t hbSysFlushMem(hbSysMem* mem, int32_t flag) {
    if (!mem || (flag != HB_SYS_MEM_CACHE_CLEAN && flag != HB_SYS_MEM_CACHE_INVALIDATE)) return HB_SYS_INVALID_ARGUMENT;
    return sys_status(
        standin::mem_flush(mem->phyAddr, mem->virAddr,
                           flag == HB_SYS_MEM_CACHE_CLEAN ? standin::Flush::Clean : standin::Flush::Invalidate));
}

int32_t hbSysWriteMem(hbSysMem* dest, char* src, uint32_t size) {
    if (!dest) return HB_SYS_INVALID_ARGUMENT;
    return sys_status(standin::mem_write_cpu(dest->phyAddr, dest->virAddr, src, size));
}

int32_t hbSysReadMem(char* dest, hbSysMem* src, uint32_t size) {
    if (!src) return HB_SYS_INVALID_ARGUMENT;
    return sys_status(standin::mem_read_cpu(src->phyAddr, src->virAddr, dest, size));
}

// For the stand-in's own tests (C): the device side of a bus address range.
unsigned char* standin_device_bytes(unsigned long long phy, size_t bytes) { return standin::device_bytes(phy, bytes); }

int32_t hbSysFreeMem(hbSysMem* mem) {
    if (!mem) return HB_SYS_INVALID_ARGUMENT;
    int32_t status = sys_status(standin::mem_free(mem->phyAddr, mem->virAddr));
    if (status != HB_SYS_SUCCESS) return status;
    mem->virAddr = nullptr;
    mem->phyAddr = 0;
    mem->memSize = 0;
    return HB_SYS_SUCCESS;
}

// Deprecated in the real SDK (registering camera memory for the BPU): here every block is BPU memory.
int32_t hbSysRegisterMem(hbSysMem* mem) { return mem ? HB_SYS_SUCCESS : HB_SYS_INVALID_ARGUMENT; }
int32_t hbSysUnregisterMem(hbSysMem* mem) { return mem ? HB_SYS_SUCCESS : HB_SYS_INVALID_ARGUMENT; }

}  // extern "C"
