/* hb_ucp.h - accel's stand-in for the task API of Horizon's hbUCP 3.x (Unified Computing Platform;
 * see hb_ucp_sys.h for what a stand-in is and is not). A task is made by a front end (hbDNNInferV2
 * for models), then submitted with scheduling parameters, waited for or called back, and released.
 * Never installed; tests only. */
#ifndef ACCEL_STANDIN_HB_UCP_H
#define ACCEL_STANDIN_HB_UCP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void* hbUCPTaskHandle_t;

typedef void (*hbUCPTaskDoneCb)(hbUCPTaskHandle_t taskHandle, int32_t status, void* userdata);

/* hbUCPSchedParam.backend: which hardware may run the task, one bit per core; 0 lets the runtime
 * pick. Only the BPU and DSP bits are declared here (the vendor has more: GDC, codecs, pyramid, ISP). */
#define HB_UCP_CORE_ANY (0ULL)
#define HB_UCP_BPU_CORE_0 (1ULL << 0)
#define HB_UCP_BPU_CORE_1 (1ULL << 1)
#define HB_UCP_BPU_CORE_2 (1ULL << 2)
#define HB_UCP_BPU_CORE_3 (1ULL << 3)
#define HB_UCP_BPU_CORE_ANY (1ULL << 7)
#define HB_UCP_DSP_CORE_0 (1ULL << 8)
#define HB_UCP_DSP_CORE_1 (1ULL << 9)
#define HB_UCP_DSP_CORE_ANY (1ULL << 15)

/* 0..255, higher first; 254 and 255 may preempt lower tasks on a board (the stand-in only orders). */
typedef enum hbUCPTaskPriority { HB_UCP_PRIORITY_LOWEST = 0, HB_UCP_PRIORITY_HIGHEST = 255 } hbUCPTaskPriority;

/* Defaults: lowest priority, device 0, custom id 0, any core. */
#define HB_UCP_INITIALIZE_SCHED_PARAM(param)        \
    {                                               \
        (param)->priority = HB_UCP_PRIORITY_LOWEST; \
        (param)->deviceId = 0U;                     \
        (param)->customId = 0;                      \
        (param)->backend = HB_UCP_CORE_ANY;         \
    }

typedef struct hbUCPSchedParam {
    int32_t priority; /* hbUCPTaskPriority range */
    int64_t customId; /* orders tasks of equal priority: smaller first */
    uint64_t backend; /* HB_UCP_*_CORE_* bits */
    uint32_t deviceId;
} hbUCPSchedParam;

const char* hbUCPGetVersion(void);
const char* hbUCPGetSocName(void);

/* Starts a task made by hbDNNInferV2 (once: a task is submitted at most one time). */
int32_t hbUCPSubmitTask(hbUCPTaskHandle_t taskHandle, hbUCPSchedParam* schedParam);
/* timeout in milliseconds; 0 (or less) waits for ever. Returns the task's status once it ended. */
int32_t hbUCPWaitTaskDone(hbUCPTaskHandle_t taskHandle, int32_t timeout);
/* Called once the task ended, on a runtime thread (at once, on this thread, if it already has). */
int32_t hbUCPSetTaskDoneCb(hbUCPTaskHandle_t taskHandle, hbUCPTaskDoneCb taskDoneCb, void* userdata);
/* Frees a task: one not started is cancelled, one running is let finish first. */
int32_t hbUCPReleaseTask(hbUCPTaskHandle_t taskHandle);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STANDIN_HB_UCP_H */
