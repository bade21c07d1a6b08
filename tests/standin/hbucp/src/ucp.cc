// ucp.cc - the stand-in's hbUCP task API and status descriptions: tasks made by hbDNNInferV2 are
// submitted with scheduling parameters (priority, BPU core bits) to the emulator, waited for with
// timeouts, called back, released.
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"
#include "runtime.h"

namespace standin {
namespace ucp {

// The emulator with the BPU's int8 rules: the stand-in computes a quantized model as the BPU does.
Engine& engine() {
    // Four emulated cores, one per HB_UCP_BPU_CORE_n bit.
    static Engine* e =
        new Engine({"emu:cores=4,max_inflight=64,int8=bpu", kTaskLimit, HB_UCP_SUCCESS, HB_UCP_TASK_RUN_FAILED});
    return *e;  // never destroyed: jobs may complete during exit
}

namespace {

constexpr uint64_t kBpuCores = HB_UCP_BPU_CORE_0 | HB_UCP_BPU_CORE_1 | HB_UCP_BPU_CORE_2 | HB_UCP_BPU_CORE_3;

bool sched_valid(const hbUCPSchedParam& p) {
    return p.priority >= HB_UCP_PRIORITY_LOWEST && p.priority <= HB_UCP_PRIORITY_HIGHEST && p.deviceId == 0 &&
           (p.backend & ~(kBpuCores | HB_UCP_BPU_CORE_ANY)) == 0;  // a model runs on BPU cores only
}

}  // namespace
}  // namespace ucp
}  // namespace standin

using namespace standin;
using standin::ucp::engine;

extern "C" {

const char* hbUCPGetVersion(void) { return "3.13.6 (accel stand-in)"; }

const char* hbUCPGetSocName(void) { return "accel-standin-s100"; }

const char* hbUCPGetErrorDesc(int32_t code) {
    switch (code) {
        case HB_UCP_SUCCESS: return "success";
        case HB_UCP_INVALID_ARGUMENT: return "invalid argument";
        case HB_UCP_API_USE_ERROR: return "api used wrongly";
        case HB_UCP_INIT_FAILED: return "initialization failed";
        case HB_UCP_UNKNOWN_ERROR: return "unknown error";
        case HB_UCP_TASK_NUMBER_EXCEED_LIMIT: return "too many tasks";
        case HB_UCP_TASK_TIMEOUT: return "task timed out";
        case HB_UCP_TASK_RUN_FAILED: return "task failed to run";
        case HB_UCP_TASK_HANDLE_INVALID: return "invalid task handle";
        case HB_UCP_OP_NUMBER_EXCEED_LIMIT: return "too many operators";
        case HB_UCP_OP_NOT_REGISTER: return "operator not registered";
        case HB_UCP_OP_CMD_UNAVAILABLE: return "operator command unavailable";
        case HB_UCP_MEM_ALLOC_FAIL: return "memory allocation failed";
        case HB_UCP_MEM_FREE_FAIL: return "memory free failed";
        case HB_UCP_MEM_FLUSH_FAIL: return "memory clean failed";
        case HB_UCP_MEM_INVALIDATE_FAIL: return "memory invalidate failed";
        case HB_UCP_MEM_IS_INVALID: return "memory is not valid";
        case HB_UCP_MEM_MAP_FAIL: return "memory map failed";
        case HB_UCP_MEM_UNMAP_FAIL: return "memory unmap failed";
        case HB_UCP_FILE_OPEN_FAILED: return "file cannot be opened";
        case HB_UCP_MODEL_NUMBER_EXCEED_LIMIT: return "too many models";
        case HB_UCP_MODEL_INVALID: return "invalid model";
        case HB_UCP_MODEL_IS_INUSE: return "model in use";
        case HB_UCP_MODEL_INCOMPATIBLE: return "model incompatible with this runtime";
        case HB_UCP_DSP_UNAVAILABLE: return "dsp unavailable";
        case HB_UCP_DSP_XV_ALLOC_FAIL: return "dsp xv allocation failed";
        case HB_UCP_DSP_XV_FREE_FAIL: return "dsp xv free failed";
        case HB_UCP_DSP_IDMA_COPY_FAIL: return "dsp idma copy failed";
        case HB_UCP_DSP_IDMA_BAD_INIT: return "dsp idma badly initialized";
        case HB_UCP_DSP_MMAP_FAIL: return "dsp map failed";
        case HB_UCP_DSP_INVALID_SCALE: return "dsp invalid scale";
        case HB_UCP_DSP_UNMAP_FAIL: return "dsp unmap failed";
        case HB_UCP_DSP_OFFLINE: return "dsp offline";
        case HB_UCP_CODEC_OPERATION_NOT_ALLOWED: return "codec operation not allowed";
        case HB_UCP_CODEC_INSUFFICIENT_RES: return "codec resources insufficient";
        case HB_UCP_CODEC_NO_FREE_INSTANCE: return "no free codec instance";
        case HB_UCP_CODEC_INVALID_INSTANCE: return "invalid codec instance";
        case HB_UCP_CODEC_BUFFER_WAIT_TIMEOUT: return "codec buffer wait timed out";
        case HB_UCP_CODEC_IS_INUSE: return "codec in use";
        case HB_UCP_ISP_NO_AVAILABLE_SLOT: return "no isp slot available";
        case HB_UCP_ISP_CTX_INUSE: return "isp context in use";
        default: return "unknown error code";
    }
}

// The dnn codes are aliases of the ucp ones.
const char* hbDNNGetErrorDesc(int32_t code) { return hbUCPGetErrorDesc(code); }

int32_t hbUCPSubmitTask(hbUCPTaskHandle_t handle, hbUCPSchedParam* sched) {
    Task* task = engine().known_task(handle);
    if (!task) return HB_UCP_TASK_HANDLE_INVALID;
    if (!sched || !ucp::sched_valid(*sched)) return HB_UCP_INVALID_ARGUMENT;
    if (engine().submitted(task)) return HB_UCP_API_USE_ERROR;
    // The input stage reads the device side of the inputs now: a CLEAN after this comes too late.
    if (engine().stage_inputs(task) != Result::Ok) return HB_UCP_MEM_IS_INVALID;  // freed since hbDNNInferV2
    if (engine().submit(task, sched->priority, sched->backend & ucp::kBpuCores) != Result::Ok)
        return HB_UCP_TASK_RUN_FAILED;
    return HB_UCP_SUCCESS;
}

int32_t hbUCPWaitTaskDone(hbUCPTaskHandle_t handle, int32_t timeout) {
    Task* task = engine().known_task(handle);
    if (!task) return HB_UCP_TASK_HANDLE_INVALID;
    int32_t status = HB_UCP_SUCCESS;
    switch (engine().wait(task, timeout, &status)) {
        case Result::Ok: return status;
        case Result::Timeout: return HB_UCP_TASK_TIMEOUT;
        default: return HB_UCP_API_USE_ERROR;  // never submitted: it would never end
    }
}

int32_t hbUCPSetTaskDoneCb(hbUCPTaskHandle_t handle, hbUCPTaskDoneCb cb, void* userdata) {
    Task* task = engine().known_task(handle);
    if (!task) return HB_UCP_TASK_HANDLE_INVALID;
    engine().set_callback(task, cb, userdata);
    return HB_UCP_SUCCESS;
}

int32_t hbUCPReleaseTask(hbUCPTaskHandle_t handle) {
    return engine().release_task(engine().known_task(handle)) == Result::Ok ? HB_UCP_SUCCESS
                                                                            : HB_UCP_TASK_HANDLE_INVALID;
}

// Tests only: while held, submitted tasks are accepted (and counted against the limit) but wait;
// releasing the hold runs them in order. Lets a test fill the task limit or time out a wait.
void standin_hbucp_hold(int on) { engine().hold(on != 0); }

}  // extern "C"
