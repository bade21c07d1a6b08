/* test_infer.c - the libdnn stand-in through the vendor's API, as a user (or the bpu driver) uses it:
 * load, introspect, run with cached memory and flushes, padded aligned layouts, int8 scales, the task
 * callback, timeouts, the task limit, error codes. argv[1]: the folder of make_test_models.py. */
#include <stdbool.h> /* the real HB_DNN_INITIALIZE_INFER_CTRL_PARAM uses `false` */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dnn/hb_dnn.h"
#include "dnn/hb_dnn_status.h"

#include "check.h"

/* The stand-in's test hook: while held, tasks are accepted but wait (see src/dnn.cc). */
void standin_hbdnn_hold(int on);

#define OK(call) CHECK((call) == 0)

static hbDNNHandle_t load(const char* dir, const char* file, hbPackedDNNHandle_t* packed) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    const char* names[1] = {path};
    OK(hbDNNInitializeFromFiles(packed, names, 1));
    const char** list = NULL;
    int32_t count = 0;
    OK(hbDNNGetModelNameList(&list, &count, *packed));
    CHECK(count == 1);
    hbDNNHandle_t h = NULL;
    OK(hbDNNGetModelHandle(&h, *packed, list[0]));
    return h;
}

static void make_tensor(hbDNNTensor* t, const hbDNNTensorProperties* p) {
    memset(t, 0, sizeof *t);
    t->properties = *p;
    OK(hbSysAllocCachedMem(&t->sysMem[0], (uint32_t)p->alignedByteSize));
}

static int callback_calls;
static int32_t callback_status = 12345;
static void on_done(hbDNNTaskHandle_t task, int32_t status, void* userdata) {
    (void)task;
    callback_calls += *(int*)userdata;
    callback_status = status;
}

static void test_double(const char* dir) {
    hbPackedDNNHandle_t packed = NULL;
    hbDNNHandle_t h = load(dir, "double.bin", &packed);
    int32_t n_in = 0, n_out = 0;
    OK(hbDNNGetInputCount(&n_in, h));
    OK(hbDNNGetOutputCount(&n_out, h));
    CHECK(n_in == 1 && n_out == 1);
    const char* name = NULL;
    OK(hbDNNGetInputName(&name, h, 0));
    CHECK(strcmp(name, "x") == 0);
    CHECK(hbDNNGetInputName(&name, h, 1) == HB_DNN_INVALID_ARGUMENT);

    hbDNNTensorProperties pin, pout;
    OK(hbDNNGetInputTensorProperties(&pin, h, 0));
    OK(hbDNNGetOutputTensorProperties(&pout, h, 0));
    CHECK(pin.tensorType == HB_DNN_TENSOR_TYPE_S8 && pin.quantiType == SCALE && pin.scale.scaleLen == 1);
    CHECK(pin.validShape.numDimensions == 4 && pin.validShape.dimensionSize[1] == 3);
    CHECK(pin.alignedShape.dimensionSize[1] == 4 && pin.alignedShape.dimensionSize[3] == 8);
    CHECK(pin.alignedByteSize == 4 * 4 * 8 && pin.stride[3] == 1 && pin.stride[2] == 8 && pin.stride[1] == 32);
    CHECK(pout.alignedByteSize == 3 * 4 * 8);

    hbDNNTensor in, out;
    make_tensor(&in, &pin);
    make_tensor(&out, &pout);
    int8_t* x = (int8_t*)in.sysMem[0].virAddr;
    int8_t* y = (int8_t*)out.sysMem[0].virAddr;
    memset(x, 99, (size_t)pin.alignedByteSize); /* the padding too: it must never be read */
    for (int c = 0; c < 3; c++)
        for (int hh = 0; hh < 4; hh++)
            for (int w = 0; w < 5; w++) x[c * 32 + hh * 8 + w] = (int8_t)(c * 20 + hh * 5 + w - 30);
    memset(y, 77, (size_t)pout.alignedByteSize);
    OK(hbSysFlushMem(&out.sysMem[0], HB_SYS_MEM_CACHE_CLEAN));

    /* Without CLEAN the BPU reads what the device side holds: zeros, so y == 0 everywhere valid. */
    hbDNNInferCtrlParam ctrl;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&ctrl);
    hbDNNTensor* outs = &out;
    hbDNNTaskHandle_t task = NULL;
    OK(hbDNNInfer(&task, &outs, &in, h, &ctrl));
    OK(hbDNNWaitTaskDone(task, 0));
    OK(hbDNNReleaseTask(task));
    OK(hbSysFlushMem(&out.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE));
    CHECK(y[0] == 0 && y[2 * 32 + 3 * 8 + 4] == 0 && y[5] == 77); /* valid zeros, padding untouched */

    /* With CLEAN: y_q == x_q (2 * 0.05 / 0.1 == 1), the padding still untouched. */
    OK(hbSysFlushMem(&in.sysMem[0], HB_SYS_MEM_CACHE_CLEAN));
    task = NULL;
    int one = 1;
    OK(hbDNNInfer(&task, &outs, &in, h, &ctrl));
    OK(hbDNNSetTaskDoneCb(task, on_done, &one));
    OK(hbDNNWaitTaskDone(task, 1000));
    OK(hbDNNReleaseTask(task));
    CHECK(y[0] == 0);                                   /* not invalidated yet: the stale CPU side */
    OK(hbSysFlushMem(&out.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE));
    for (int c = 0; c < 3; c++)
        for (int hh = 0; hh < 4; hh++)
            for (int w = 0; w < 8; w++) {
                int8_t got = y[c * 32 + hh * 8 + w];
                CHECK(w < 5 ? got == (int8_t)(c * 20 + hh * 5 + w - 30) : got == 77);
            }
    CHECK(callback_calls == 1 && callback_status == 0);

    /* Errors: a task handle not NULL, a wrong shape, a bad handle, a freed memory, a bad priority. */
    task = (hbDNNTaskHandle_t)&in;
    CHECK(hbDNNInfer(&task, &outs, &in, h, &ctrl) == HB_DNN_INVALID_ARGUMENT);
    task = NULL;
    hbDNNTensor wrong = in;
    wrong.properties.validShape.dimensionSize[1] = 2;
    CHECK(hbDNNInfer(&task, &outs, &wrong, h, &ctrl) == HB_DNN_INVALID_ARGUMENT);
    CHECK(hbDNNInfer(&task, &outs, &in, (hbDNNHandle_t)&in, &ctrl) == HB_DNN_INVALID_DNN_HANDLE);
    ctrl.priority = 256;
    CHECK(hbDNNInfer(&task, &outs, &in, h, &ctrl) == HB_DNN_INVALID_ARGUMENT);
    ctrl.priority = 0;
    CHECK(task == NULL);
    CHECK(strcmp(hbDNNGetErrorDesc(HB_DNN_TIMEOUT), "timeout") == 0);

    OK(hbSysFreeMem(&in.sysMem[0]));
    OK(hbSysFreeMem(&out.sysMem[0]));
    OK(hbDNNRelease(packed));
    CHECK(hbDNNRelease(packed) == HB_DNN_INVALID_PACKED_DNN_HANDLE);
}

static void test_limits(const char* dir) {
    hbPackedDNNHandle_t packed = NULL;
    hbDNNHandle_t h = load(dir, "slow.bin", &packed);
    hbDNNTensorProperties pin, pout;
    OK(hbDNNGetInputTensorProperties(&pin, h, 0));
    OK(hbDNNGetOutputTensorProperties(&pout, h, 0));
    hbDNNTensor in, out[40];
    make_tensor(&in, &pin);
    hbDNNInferCtrlParam ctrl;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&ctrl);
    hbDNNTaskHandle_t tasks[40] = {0};
    for (int i = 0; i < 40; i++) make_tensor(&out[i], &pout);
    standin_hbdnn_hold(1);
    int accepted = 0;
    for (int i = 0; i < 40; i++) {
        hbDNNTensor* o = &out[i];
        int32_t r = hbDNNInfer(&tasks[i], &o, &in, h, &ctrl);
        if (i < 32) CHECK(r == 0 && tasks[i] != NULL);
        else CHECK(r == HB_DNN_TASK_NUM_EXCEED_LIMIT && tasks[i] == NULL); /* 32 in flight at most */
        accepted += r == 0;
    }
    CHECK(accepted == 32);
    CHECK(hbDNNWaitTaskDone(tasks[5], 1) == HB_DNN_TIMEOUT);
    OK(hbDNNReleaseTask(tasks[5])); /* never started: cancelled, and its slot is free again */
    tasks[5] = NULL;
    hbDNNTensor* o = &out[32];
    OK(hbDNNInfer(&tasks[32], &o, &in, h, &ctrl));
    standin_hbdnn_hold(0);
    for (int i = 0; i < 40; i++)
        if (tasks[i]) {
            OK(hbDNNWaitTaskDone(tasks[i], 0));
            OK(hbDNNReleaseTask(tasks[i]));
        }
    CHECK(hbDNNWaitTaskDone(tasks[0], 0) == HB_DNN_INVALID_TASK_HANDLE); /* released */
    for (int i = 0; i < 40; i++) OK(hbSysFreeMem(&out[i].sysMem[0]));
    OK(hbSysFreeMem(&in.sysMem[0]));
    OK(hbDNNRelease(packed));
}

/* An NV12 image input given as NV12_SEPARATE: the Y plane in sysMem[0] and the UV plane in sysMem[1], two
 * blocks of their own; rows padded to 16 bytes, the padding never read. The model gives the frame's bytes
 * back as floats (6 rows of 6: Y's 4, then UV's 2). Then the same frame as NV12 in one block. */
static void test_nv12_separate(const char* dir) {
    hbPackedDNNHandle_t packed = NULL;
    hbDNNHandle_t h = load(dir, "frame.bin", &packed);
    hbDNNTensorProperties pin, pout;
    OK(hbDNNGetInputTensorProperties(&pin, h, 0));
    OK(hbDNNGetOutputTensorProperties(&pout, h, 0));
    CHECK(pin.tensorType == HB_DNN_IMG_TYPE_NV12_SEPARATE && pin.tensorLayout == HB_DNN_LAYOUT_NCHW);
    CHECK(pin.validShape.numDimensions == 4 && pin.validShape.dimensionSize[1] == 3 &&
          pin.validShape.dimensionSize[2] == 4 && pin.validShape.dimensionSize[3] == 6);
    CHECK(pin.stride[0] == 0 && pin.stride[3] == 0 && pin.alignedByteSize == 16 * 6); /* 6 rows of 16 */

    hbDNNTensor in, out;
    memset(&in, 0, sizeof in);
    in.properties = pin;
    OK(hbSysAllocCachedMem(&in.sysMem[1], 16 * 2)); /* UV first: the blocks are apart, in any order */
    OK(hbSysAllocCachedMem(&in.sysMem[0], 16 * 4));
    make_tensor(&out, &pout);
    uint8_t* y_plane = (uint8_t*)in.sysMem[0].virAddr;
    uint8_t* uv_plane = (uint8_t*)in.sysMem[1].virAddr;
    memset(y_plane, 99, 16 * 4);
    memset(uv_plane, 99, 16 * 2);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++) y_plane[r * 16 + c] = (uint8_t)(r * 10 + c);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 6; c++) uv_plane[r * 16 + c] = (uint8_t)(200 + r * 10 + c);
    OK(hbSysFlushMem(&in.sysMem[0], HB_SYS_MEM_CACHE_CLEAN));
    OK(hbSysFlushMem(&in.sysMem[1], HB_SYS_MEM_CACHE_CLEAN));
    hbDNNInferCtrlParam ctrl;
    HB_DNN_INITIALIZE_INFER_CTRL_PARAM(&ctrl);
    hbDNNTensor* outs = &out;
    hbDNNTaskHandle_t task = NULL;
    OK(hbDNNInfer(&task, &outs, &in, h, &ctrl));
    OK(hbDNNWaitTaskDone(task, 0));
    OK(hbDNNReleaseTask(task));
    OK(hbSysFlushMem(&out.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE));
    const float* got = (const float*)out.sysMem[0].virAddr;
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 6; c++) CHECK(got[r * 6 + c] == (float)(r < 4 ? r * 10 + c : 200 + (r - 4) * 10 + c));

    /* A UV block smaller than the plane: refused. */
    hbDNNTensor small = in;
    small.sysMem[1].memSize = 16;
    task = NULL;
    CHECK(hbDNNInfer(&task, &outs, &small, h, &ctrl) == HB_DNN_INVALID_ARGUMENT && task == NULL);

    /* The same frame as NV12 in one block (the user may change the type): Y rows, then UV rows. */
    hbDNNTensor one;
    memset(&one, 0, sizeof one);
    one.properties = pin;
    one.properties.tensorType = HB_DNN_IMG_TYPE_NV12;
    OK(hbSysAllocCachedMem(&one.sysMem[0], (uint32_t)pin.alignedByteSize));
    memcpy(one.sysMem[0].virAddr, y_plane, 16 * 4);
    memcpy((uint8_t*)one.sysMem[0].virAddr + 16 * 4, uv_plane, 16 * 2);
    ((uint8_t*)one.sysMem[0].virAddr)[16 * 4 + 1] = 7;
    OK(hbSysFlushMem(&one.sysMem[0], HB_SYS_MEM_CACHE_CLEAN));
    task = NULL;
    OK(hbDNNInfer(&task, &outs, &one, h, &ctrl));
    OK(hbDNNWaitTaskDone(task, 0));
    OK(hbDNNReleaseTask(task));
    OK(hbSysFlushMem(&out.sysMem[0], HB_SYS_MEM_CACHE_INVALIDATE));
    CHECK(got[4 * 6 + 1] == 7.0f && got[3 * 6 + 5] == 35.0f);

    OK(hbSysFreeMem(&one.sysMem[0]));
    OK(hbSysFreeMem(&in.sysMem[0]));
    OK(hbSysFreeMem(&in.sysMem[1]));
    OK(hbSysFreeMem(&out.sysMem[0]));
    OK(hbDNNRelease(packed));
}

int main(int argc, char** argv) {
    CHECK(argc == 2);
    test_double(argv[1]);
    test_limits(argv[1]);
    test_nv12_separate(argv[1]);
    puts("test_infer: ok");
    return 0;
}
