/* hb_ucp.h - accel's stand-in for the task API of Horizon's hbUCP 3.x (Unified Computing Platform;
 * see hb_ucp_sys.h for what a stand-in is and is not). A task is made by a front end (hbDNNInferV2
 * for models), then submitted with scheduling parameters, waited for or called back, and released.
 * Never installed; tests only. */
#ifndef ACCEL_STANDIN_HB_UCP_H
#define ACCEL_STANDIN_HB_UCP_H

#ifdef __cplusplus
extern "C" {
#endif

#include <stdint.h> /* inside extern "C", as in the real header */

/* The release these headers follow. */
#define HB_UCP_VERSION_MAJOR (3U)
#define HB_UCP_VERSION_MINOR (13U)
#define HB_UCP_VERSION_PATCH (6U)

typedef void* hbUCPTaskHandle_t;

typedef void (*hbUCPTaskDoneCb)(hbUCPTaskHandle_t taskHandle, int32_t status, void* userdata);

/* Every backend bit below (the real header's list, which names HB_UCP_BPU_CORE_ANY twice). */
#define HB_UCP_ALL_BACKENDS                                                                                        \
    (HB_UCP_CORE_ANY | HB_UCP_BPU_CORE_0 | HB_UCP_BPU_CORE_1 | HB_UCP_BPU_CORE_2 | HB_UCP_BPU_CORE_3 |             \
     HB_UCP_BPU_CORE_ANY | HB_UCP_BPU_CORE_ANY | HB_UCP_DSP_CORE_0 | HB_UCP_DSP_CORE_1 | HB_UCP_DSP_CORE_ANY |     \
     HB_UCP_GDC_CORE_0 | HB_UCP_GDC_CORE_1 | HB_UCP_GDC_CORE_ANY | HB_UCP_STITCH_CORE_0 | HB_UCP_LKOF_CORE_0 |     \
     HB_UCP_JPU_CORE_0 | HB_UCP_JPU_CORE_1 | HB_UCP_JPU_CORE_2 | HB_UCP_JPU_CORE_ANY | HB_UCP_VPU_CORE_0 |         \
     HB_UCP_VPU_CORE_1 | HB_UCP_VPU_CORE_2 | HB_UCP_VPU_CORE_ANY | HB_UCP_PYRAMID_CORE_0 | HB_UCP_PYRAMID_CORE_1 | \
     HB_UCP_PYRAMID_CORE_2 | HB_UCP_PYRAMID_CORE_3 | HB_UCP_PYRAMID_CORE_4 | HB_UCP_PYRAMID_CORE_ANY |             \
     HB_UCP_ISP_CORE_0 | HB_UCP_ISP_CORE_1 | HB_UCP_ISP_CORE_2 | HB_UCP_ISP_CORE_3)

/* hbUCPSchedParam.backend: which hardware may run the task, one bit per core; 0 lets the runtime
 * pick. The stand-in runs BPU tasks only; the other units' bits are the real header's. */
#define HB_UCP_CORE_ANY (0ULL << 0)
#define HB_UCP_BPU_CORE_0 (1ULL << 0)
#define HB_UCP_BPU_CORE_1 (1ULL << 1)
#define HB_UCP_BPU_CORE_2 (1ULL << 2)
#define HB_UCP_BPU_CORE_3 (1ULL << 3)
#define HB_UCP_BPU_CORE_ANY (1ULL << 7)
#define HB_UCP_DSP_CORE_0 (1ULL << 8)
#define HB_UCP_DSP_CORE_1 (1ULL << 9)
#define HB_UCP_DSP_CORE_ANY (1ULL << 15)
#define HB_UCP_GDC_CORE_0 (1ULL << 16)
#define HB_UCP_GDC_CORE_1 (1ULL << 17)
#define HB_UCP_GDC_CORE_ANY (1ULL << 19)
#define HB_UCP_STITCH_CORE_0 (1ULL << 20)
#define HB_UCP_LKOF_CORE_0 (1ULL << 24)
#define HB_UCP_JPU_CORE_0 (1ULL << 25)
#define HB_UCP_JPU_CORE_1 (1ULL << 26)
#define HB_UCP_JPU_CORE_2 (1ULL << 27)
#define HB_UCP_JPU_CORE_ANY (1ULL << 29)
#define HB_UCP_VPU_CORE_0 (1ULL << 30)
#define HB_UCP_VPU_CORE_1 (1ULL << 31)
#define HB_UCP_VPU_CORE_2 (1ULL << 32)
#define HB_UCP_VPU_CORE_ANY (1ULL << 33)
#define HB_UCP_PYRAMID_CORE_0 (1ULL << 35)
#define HB_UCP_PYRAMID_CORE_1 (1ULL << 36)
#define HB_UCP_PYRAMID_CORE_2 (1ULL << 37)
#define HB_UCP_PYRAMID_CORE_3 (1ULL << 38)
#define HB_UCP_PYRAMID_CORE_4 (1ULL << 39)
#define HB_UCP_PYRAMID_CORE_ANY (1ULL << 40)
#define HB_UCP_ISP_CORE_0 (1ULL << 42)
#define HB_UCP_ISP_CORE_1 (1ULL << 43)
#define HB_UCP_ISP_CORE_2 (1ULL << 44)
#define HB_UCP_ISP_CORE_3 (1ULL << 45)

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
