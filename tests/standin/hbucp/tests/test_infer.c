/* test_infer.c - the hbUCP stand-in through the vendor's API, as a user (or the bpu driver) uses it:
 * load, introspect, hbDNNInferV2 in sync mode (no task pointer) and async (hbUCPSubmitTask), tasks of
 * two models, cached memory and its flushes, dense float and padded int8 tensors with scales and
 * int32 zero points, dynamic strides, callbacks, timeouts, the task limit, error codes.
 * argv[1]: the folder of make_test_models.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hobot/dnn/hb_dnn.h"
#include "hobot/dnn/hb_dnn_status.h"
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_status.h"

#include "check.h"

/* The stand-in's test hook: while held, submitted tasks are accepted but wait (see src/ucp.cc). */
void standin_hbucp_hold(int on);

#define OK(call) CHECK((call) == 0)

static const char* dir;

static hbDNNPackedHandle_t load(const char* file) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    const char* names[1] = {path};
    hbDNNPackedHandle_t packed = NULL;
    OK(hbDNNInitializeFromFiles(&packed, names, 1));
    return packed;
}

static hbDNNHandle_t model(hbDNNPackedHandle_t packed, const char* name) {
    hbDNNHandle_t h = NULL;
    OK(hbDNNGetModelHandle(&h, packed, name));
    return h;
}

/* A tensor of the model's input or output `index`, in cached memory of `bytes` (0: alignedByteSize). */
static hbDNNTensor make_tensor(hbDNNHandle_t h, int output, int index, uint64_t bytes) {
    hbDNNTensor t;
    memset(&t, 0, sizeof t);
    if (output) OK(hbDNNGetOutputTensorProperties(&t.properties, h, index));
    else OK(hbDNNGetInputTensorProperties(&t.properties, h, index));
    OK(hbUCPMallocCached(&t.sysMem, bytes ? bytes : (uint64_t)t.properties.alignedByteSize, 0));
    return t;
}

static int submit_wait(hbUCPTaskHandle_t task, uint64_t backend, int32_t priority) {
    hbUCPSchedParam sched;
    HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
    sched.backend = backend;
    sched.priority = priority;
    int32_t r = hbUCPSubmitTask(task, &sched);
    if (r == 0) r = hbUCPWaitTaskDone(task, 10000);
    OK(hbUCPReleaseTask(task));
    return r;
}

static int callback_calls;
static int32_t callback_status = 12345;
static void on_done(hbUCPTaskHandle_t task, int32_t status, void* userdata) {
    (void)task;
    __atomic_add_fetch(&callback_calls, *(int*)userdata, __ATOMIC_SEQ_CST);
    __atomic_store_n(&callback_status, status, __ATOMIC_SEQ_CST);
}

/* Fills x[2,3,4] (dense float32) and checks y = 2x + 1. */
static void fill_affine(hbDNNTensor* x, float base) {
    float* v = (float*)x->sysMem.virAddr;
    for (int i = 0; i < 24; i++) v[i] = base + 0.5f * (float)i;
}
static int affine_ok(hbDNNTensor* y, float base) {
    const float* v = (const float*)y->sysMem.virAddr;
    for (int i = 0; i < 24; i++)
        if (v[i] != 2.0f * (base + 0.5f * (float)i) + 1.0f) return 0;
    return 1;
}

/* x[1,3,4,5] int8 at strides [256,64,16,1] (padding 99, never read); y_q == x_q - 3 + zp[c] at
 * strides [96,32,8,1] (padding 77, never written). */
static const int8_t kZero[3] = {-2, 0, 5};
static void fill_double(hbDNNTensor* x, hbDNNTensor* y) {
    int8_t* v = (int8_t*)x->sysMem.virAddr;
    memset(v, 99, 256);
    for (int c = 0; c < 3; c++)
        for (int h = 0; h < 4; h++)
            for (int w = 0; w < 5; w++) v[c * 64 + h * 16 + w] = (int8_t)(c * 20 + h * 5 + w - 30);
    memset(y->sysMem.virAddr, 77, 96);
}
static int double_ok(hbDNNTensor* y) {
    const int8_t* v = (const int8_t*)y->sysMem.virAddr;
    for (int c = 0; c < 3; c++)
        for (int h = 0; h < 4; h++)
            for (int w = 0; w < 8; w++) {
                int8_t want = w < 5 ? (int8_t)(c * 20 + h * 5 + w - 30 - 3 + kZero[c]) : 77;
                if (v[c * 32 + h * 8 + w] != want) return 0;
            }
    return 1;
}

static void test_load_errors(void) {
    const char* missing[1] = {"/nonexistent/model.hbm"};
    hbDNNPackedHandle_t packed = NULL;
    CHECK(hbDNNInitializeFromFiles(&packed, missing, 1) == HB_DNN_CAN_NOT_OPEN_FILE && packed == NULL);
    CHECK(HB_DNN_CAN_NOT_OPEN_FILE == -500001 && HB_DNN_INVALID_MODEL == -600002);
    const char junk[16] = "not a model";
    const void* data[1] = {junk};
    int32_t len[1] = {16};
    CHECK(hbDNNInitializeFromDDR(&packed, data, len, 1) == HB_DNN_INVALID_MODEL);
    CHECK(hbDNNInitializeFromFiles(&packed, NULL, 1) == HB_DNN_INVALID_ARGUMENT);
}

static void test_dense_sync(hbDNNPackedHandle_t packed) {
    const char** names = NULL;
    int32_t count = 0;
    OK(hbDNNGetModelNameList(&names, &count, packed));
    CHECK(count == 2 && strcmp(names[0], "affine") == 0 && strcmp(names[1], "double") == 0);
    hbDNNHandle_t h = model(packed, "affine");
    hbDNNHandle_t none = NULL;
    CHECK(hbDNNGetModelHandle(&none, packed, "nope") == HB_DNN_INVALID_ARGUMENT);
    int32_t n = 0;
    OK(hbDNNGetInputCount(&n, h));
    CHECK(n == 1);
    const char* name = NULL;
    OK(hbDNNGetOutputName(&name, h, 0));
    CHECK(strcmp(name, "y") == 0);
    CHECK(hbDNNGetOutputName(&name, h, 1) == HB_DNN_INVALID_ARGUMENT);

    hbDNNTensor x = make_tensor(h, 0, 0, 0), y = make_tensor(h, 1, 0, 0);
    const hbDNNTensorProperties* p = &x.properties;
    CHECK(p->tensorType == HB_DNN_TENSOR_TYPE_F32 && p->quantiType == NONE && p->validShape.numDimensions == 3);
    CHECK(p->stride[0] == 48 && p->stride[1] == 16 && p->stride[2] == 4 && p->alignedByteSize == 96);

    /* The device reads what it holds: zeros until CLEAN, so y == 1 everywhere. */
    fill_affine(&x, -3.0f);
    OK(hbDNNInferV2(NULL, &y, &x, h)); /* sync: no task pointer */
    OK(hbUCPMemFlush(&y.sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
    CHECK(((float*)y.sysMem.virAddr)[7] == 1.0f);

    OK(hbUCPMemFlush(&x.sysMem, HB_SYS_MEM_CACHE_CLEAN));
    OK(hbDNNInferV2(NULL, &y, &x, h));
    CHECK(!affine_ok(&y, -3.0f)); /* not invalidated yet: the CPU's stale copy */
    OK(hbUCPMemFlush(&y.sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
    CHECK(affine_ok(&y, -3.0f));
    OK(hbUCPFree(&x.sysMem));
    OK(hbUCPFree(&y.sysMem));
}

static void test_padded_async(hbDNNPackedHandle_t packed) {
    hbDNNHandle_t h = model(packed, "double");
    hbDNNTensor x = make_tensor(h, 0, 0, 0), y = make_tensor(h, 1, 0, 0);
    const hbDNNTensorProperties* pi = &x.properties;
    const hbDNNTensorProperties* po = &y.properties;
    CHECK(pi->tensorType == HB_DNN_TENSOR_TYPE_S8 && pi->quantiType == SCALE && pi->quantizeAxis == -1);
    CHECK(pi->scale.scaleLen == 1 && pi->scale.scaleData[0] == 0.05f && pi->scale.zeroPointLen == 1 &&
          pi->scale.zeroPointData[0] == 3);
    CHECK(pi->stride[0] == 256 && pi->stride[1] == 64 && pi->stride[2] == 16 && pi->stride[3] == 1);
    CHECK(pi->alignedByteSize == 256);
    CHECK(po->quantizeAxis == 1 && po->scale.scaleLen == 3 && po->scale.zeroPointLen == 3 &&
          po->scale.zeroPointData[2] == 5);
    CHECK(po->stride[0] == 96 && po->stride[1] == 32 && po->stride[2] == 8 && po->alignedByteSize == 96);

    fill_double(&x, &y);
    OK(hbUCPMemFlush(&x.sysMem, HB_SYS_MEM_CACHE_CLEAN));
    OK(hbUCPMemFlush(&y.sysMem, HB_SYS_MEM_CACHE_CLEAN));
    hbUCPTaskHandle_t task = NULL;
    OK(hbDNNInferV2(&task, &y, &x, h));
    CHECK(task != NULL);
    CHECK(hbUCPWaitTaskDone(task, 1) == HB_UCP_API_USE_ERROR); /* not submitted: it would never end */
    int one = 1;
    callback_calls = 0;
    OK(hbUCPSetTaskDoneCb(task, on_done, &one));
    CHECK(submit_wait(task, HB_UCP_BPU_CORE_1, 254) == 0);
    CHECK(callback_calls == 1 && callback_status == 0); /* the callback returned before the wait did */
    OK(hbUCPMemFlush(&y.sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
    CHECK(double_ok(&y));

    /* Errors: another shape, a static stride changed, memory too small or freed, a bad handle. */
    task = NULL;
    hbDNNTensor wrong = x;
    wrong.properties.validShape.dimensionSize[1] = 2;
    CHECK(hbDNNInferV2(&task, &y, &wrong, h) == HB_DNN_INVALID_ARGUMENT);
    wrong = x;
    wrong.properties.stride[2] = 8;
    CHECK(hbDNNInferV2(&task, &y, &wrong, h) == HB_DNN_INVALID_ARGUMENT);
    wrong = x;
    wrong.sysMem.memSize = 255;
    CHECK(hbDNNInferV2(&task, &y, &wrong, h) == HB_DNN_INVALID_ARGUMENT);
    CHECK(hbDNNInferV2(&task, &y, &x, (hbDNNHandle_t)&x) == HB_DNN_INVALID_DNN_HANDLE);
    CHECK(HB_DNN_INVALID_DNN_HANDLE == -100001 && task == NULL);

    /* A sched param the BPU cannot take, and an input freed between InferV2 and the submit. */
    OK(hbDNNInferV2(&task, &y, &x, h));
    hbUCPSchedParam sched;
    HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
    CHECK(sched.priority == 0 && sched.backend == HB_UCP_CORE_ANY && sched.deviceId == 0);
    CHECK(hbUCPSubmitTask(task, NULL) == HB_UCP_INVALID_ARGUMENT);
    sched.priority = 256;
    CHECK(hbUCPSubmitTask(task, &sched) == HB_UCP_INVALID_ARGUMENT);
    sched.priority = 0;
    sched.backend = HB_UCP_DSP_CORE_0;
    CHECK(hbUCPSubmitTask(task, &sched) == HB_UCP_INVALID_ARGUMENT);
    sched.backend = HB_UCP_BPU_CORE_ANY;
    sched.deviceId = 1;
    CHECK(hbUCPSubmitTask(task, &sched) == HB_UCP_INVALID_ARGUMENT);
    sched.deviceId = 0;
    hbDNNTensor x2 = make_tensor(h, 0, 0, 0);
    hbUCPTaskHandle_t task2 = NULL;
    OK(hbDNNInferV2(&task2, &y, &x2, h));
    OK(hbUCPFree(&x2.sysMem));
    CHECK(hbUCPSubmitTask(task2, &sched) == HB_UCP_MEM_IS_INVALID);
    OK(hbUCPReleaseTask(task2)); /* never submitted: freed, no callback */
    CHECK(hbUCPSubmitTask(task2, &sched) == HB_UCP_TASK_HANDLE_INVALID);
    CHECK(submit_wait(task, HB_UCP_BPU_CORE_ANY, 0) == 0);
    OK(hbUCPFree(&x.sysMem));
    OK(hbUCPFree(&y.sysMem));
}

/* One task of two models (affine, then double appended), started and waited for once. */
static void test_two_models(hbDNNPackedHandle_t packed) {
    hbDNNHandle_t ha = model(packed, "affine"), hd = model(packed, "double");
    hbDNNTensor ax = make_tensor(ha, 0, 0, 0), ay = make_tensor(ha, 1, 0, 0);
    hbDNNTensor dx = make_tensor(hd, 0, 0, 0), dy = make_tensor(hd, 1, 0, 0);
    fill_affine(&ax, 10.0f);
    fill_double(&dx, &dy);
    OK(hbUCPMemFlush(&ax.sysMem, HB_SYS_MEM_CACHE_CLEAN));
    OK(hbUCPMemFlush(&dx.sysMem, HB_SYS_MEM_CACHE_CLEAN));
    OK(hbUCPMemFlush(&dy.sysMem, HB_SYS_MEM_CACHE_CLEAN));
    hbUCPTaskHandle_t task = NULL;
    OK(hbDNNInferV2(&task, &ay, &ax, ha));
    hbUCPTaskHandle_t first = task;
    OK(hbDNNInferV2(&task, &dy, &dx, hd));
    CHECK(task == first);
    hbUCPSchedParam sched;
    HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
    sched.backend = HB_UCP_BPU_CORE_3;
    OK(hbUCPSubmitTask(task, &sched));
    CHECK(hbUCPSubmitTask(task, &sched) == HB_UCP_API_USE_ERROR);          /* once only */
    CHECK(hbDNNInferV2(&task, &ay, &ax, ha) == HB_DNN_API_USE_ERROR);    /* no appending once submitted */
    OK(hbUCPWaitTaskDone(task, 0));
    OK(hbUCPReleaseTask(task));
    OK(hbUCPMemFlush(&ay.sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
    OK(hbUCPMemFlush(&dy.sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
    CHECK(affine_ok(&ay, 10.0f) && double_ok(&dy));
    OK(hbUCPFree(&ax.sysMem));
    OK(hbUCPFree(&ay.sysMem));
    OK(hbUCPFree(&dx.sysMem));
    OK(hbUCPFree(&dy.sysMem));
}

/* x[1,4,6] uint8 whose strides the user sets: rows 16 bytes apart, in uncached memory. */
static void test_dynamic_strides(void) {
    hbDNNPackedHandle_t packed = load("dynamic.hbm");
    hbDNNHandle_t h = model(packed, "copy");
    hbDNNTensor x, y = make_tensor(h, 1, 0, 0);
    memset(&x, 0, sizeof x);
    OK(hbDNNGetInputTensorProperties(&x.properties, h, 0));
    CHECK(x.properties.stride[0] == -1 && x.properties.stride[1] == -1 && x.properties.stride[2] == 1);
    CHECK(x.properties.alignedByteSize == -1 && x.properties.tensorType == HB_DNN_TENSOR_TYPE_U8);
    OK(hbUCPMalloc(&x.sysMem, 64, 0));
    uint8_t* v = (uint8_t*)x.sysMem.virAddr;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 16; c++) v[r * 16 + c] = (uint8_t)(c < 6 ? r * 50 + c : 250);
    CHECK(hbDNNInferV2(NULL, &y, &x, h) == HB_DNN_INVALID_ARGUMENT); /* strides still -1 */
    x.properties.stride[0] = 64;
    x.properties.stride[1] = 4; /* rows overlapping */
    CHECK(hbDNNInferV2(NULL, &y, &x, h) == HB_DNN_INVALID_ARGUMENT);
    x.properties.stride[1] = 16;
    OK(hbDNNInferV2(NULL, &y, &x, h));
    OK(hbUCPMemFlush(&y.sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
    const float* out = (const float*)y.sysMem.virAddr;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++) CHECK(out[r * 6 + c] == (float)(r * 50 + c));
    x.properties.stride[1] = 20; /* reaches 3 * 20 + 6 = 66 bytes: more than the block */
    CHECK(hbDNNInferV2(NULL, &y, &x, h) == HB_DNN_INVALID_ARGUMENT);
    OK(hbUCPFree(&x.sysMem));
    OK(hbUCPFree(&y.sysMem));
    OK(hbDNNRelease(packed));
}

/* 32 tasks at most (created and not finished); waits time out; a released task is cancelled. */
static void test_limits(hbDNNPackedHandle_t packed) {
    enum { N = 34 };
    hbDNNHandle_t h = model(packed, "affine");
    hbDNNTensor x = make_tensor(h, 0, 0, 0), y[N];
    hbUCPTaskHandle_t tasks[N];
    memset(tasks, 0, sizeof tasks);
    for (int i = 0; i < N; i++) y[i] = make_tensor(h, 1, 0, 0);
    hbUCPSchedParam sched;
    HB_UCP_INITIALIZE_SCHED_PARAM(&sched);
    int one = 1;
    callback_calls = 0;
    standin_hbucp_hold(1);
    for (int i = 0; i < N; i++) {
        int32_t r = hbDNNInferV2(&tasks[i], &y[i], &x, h);
        if (i < 32) CHECK(r == 0 && tasks[i] != NULL);
        else CHECK(r == HB_DNN_TASK_NUM_EXCEED_LIMIT && tasks[i] == NULL);
    }
    CHECK(HB_DNN_TASK_NUM_EXCEED_LIMIT == -200001);
    OK(hbUCPReleaseTask(tasks[31])); /* never submitted: its slot is free again */
    tasks[31] = NULL;
    for (int i = 0; i < 31; i++) {
        OK(hbUCPSetTaskDoneCb(tasks[i], on_done, &one));
        OK(hbUCPSubmitTask(tasks[i], &sched));
    }
    CHECK(hbUCPWaitTaskDone(tasks[5], 1) == HB_UCP_TASK_TIMEOUT);
    CHECK(HB_UCP_TASK_TIMEOUT == -200002 && strcmp(hbUCPGetErrorDesc(HB_UCP_TASK_TIMEOUT), "task timed out") == 0);
    CHECK(strcmp(hbDNNGetErrorDesc(HB_DNN_TIMEOUT), hbUCPGetErrorDesc(HB_UCP_TASK_TIMEOUT)) == 0);
    CHECK(strcmp(hbUCPGetErrorDesc(-12345), "unknown error code") == 0);
    OK(hbUCPReleaseTask(tasks[5])); /* queued, never ran: cancelled, its callback told so */
    CHECK(callback_calls == 1 && callback_status == HB_UCP_TASK_RUN_FAILED);
    tasks[5] = NULL;
    OK(hbDNNInferV2(&tasks[32], &y[32], &x, h));
    OK(hbDNNInferV2(&tasks[31], &y[31], &x, h));
    CHECK(hbDNNInferV2(&tasks[33], &y[33], &x, h) == HB_DNN_TASK_NUM_EXCEED_LIMIT);
    OK(hbUCPSubmitTask(tasks[32], &sched));
    OK(hbUCPSubmitTask(tasks[31], &sched));
    standin_hbucp_hold(0);
    for (int i = 0; i < N; i++)
        if (tasks[i]) {
            OK(hbUCPWaitTaskDone(tasks[i], 0));
            OK(hbUCPReleaseTask(tasks[i]));
        }
    CHECK(callback_calls == 31);
    CHECK(hbUCPWaitTaskDone(tasks[0], 0) == HB_UCP_TASK_HANDLE_INVALID); /* released */
    CHECK(hbUCPReleaseTask(tasks[0]) == HB_UCP_TASK_HANDLE_INVALID);
    for (int i = 0; i < N; i++) OK(hbUCPFree(&y[i].sysMem));
    OK(hbUCPFree(&x.sysMem));
}

/* An NV12 frame as S100's y/uv pair of U8 inputs (dynamic strides, 32-byte rows here): the emulator model takes
 * the planes' bytes as they are (uint8 inputs), the row padding dropped. */
static void test_image_planes(void) {
    hbDNNPackedHandle_t packed = load("planes.hbm");
    hbDNNHandle_t h = model(packed, "planes");
    hbDNNTensor in[2], out[2] = {make_tensor(h, 1, 0, 0), make_tensor(h, 1, 1, 0)};
    const int rows[2] = {4, 2};
    for (int k = 0; k < 2; k++) {
        memset(&in[k], 0, sizeof in[k]);
        OK(hbDNNGetInputTensorProperties(&in[k].properties, h, k));
        CHECK(in[k].properties.tensorType == HB_DNN_TENSOR_TYPE_U8 && in[k].properties.stride[0] == -1 &&
              in[k].properties.stride[1] == -1 && in[k].properties.stride[2] == (k ? 2 : 1));
        in[k].properties.stride[1] = 32;
        in[k].properties.stride[0] = 32 * rows[k];
        OK(hbUCPMallocCached(&in[k].sysMem, (uint64_t)(32 * rows[k]), 0));
        uint8_t* v = (uint8_t*)in[k].sysMem.virAddr;
        for (int r = 0; r < rows[k]; r++)
            for (int c = 0; c < 32; c++) v[r * 32 + c] = (uint8_t)(c < 6 ? 100 * k + r * 10 + c : 255);
        OK(hbUCPMemFlush(&in[k].sysMem, HB_SYS_MEM_CACHE_CLEAN));
    }
    OK(hbDNNInferV2(NULL, out, in, h));
    for (int k = 0; k < 2; k++) {
        OK(hbUCPMemFlush(&out[k].sysMem, HB_SYS_MEM_CACHE_INVALIDATE));
        const float* got = (const float*)out[k].sysMem.virAddr;
        for (int r = 0; r < rows[k]; r++)
            for (int c = 0; c < 6; c++) CHECK(got[r * 6 + c] == (float)(100 * k + r * 10 + c));
        OK(hbUCPFree(&in[k].sysMem));
        OK(hbUCPFree(&out[k].sysMem));
    }
    OK(hbDNNRelease(packed));
}

int main(int argc, char** argv) {
    CHECK(argc == 2);
    dir = argv[1];
    test_load_errors();
    hbDNNPackedHandle_t packed = load("two.hbm");
    test_dense_sync(packed);
    test_padded_async(packed);
    test_two_models(packed);
    test_limits(packed);
    OK(hbDNNRelease(packed));
    CHECK(hbDNNRelease(packed) == HB_DNN_INVALID_PACKED_DNN_HANDLE);
    test_dynamic_strides();
    test_image_planes();
    puts("test_infer: ok");
    return 0;
}
