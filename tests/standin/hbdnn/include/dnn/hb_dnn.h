/* hb_dnn.h - accel's stand-in for the inference API of Horizon's X3/X5 libdnn (the 1.2x layout: zero
 * points, quantizeAxis, stride and customId present; X3's 1.6.1 layout differs and needs its own SDK's
 * headers). See hb_sys.h for what a stand-in is and is not. Never installed; tests only.
 *
 * What the stand-in library does (tests/standin/hbdnn/src) is documented there; in short it runs the
 * packed model's embedded .accm on accel's emulator and reproduces what makes the real runtime hard:
 * aligned (padded) shapes and strides, int8 tensors with scales, image inputs (NV12 in one block or as
 * NV12_SEPARATE planes, Y, YUV444, RGB, BGR; ../../FORMAT.md), cached memory that must be flushed,
 * the limit of 32 tasks in flight, timeouts and the vendor's error codes. */
#ifndef ACCEL_STANDIN_HB_DNN_H
#define ACCEL_STANDIN_HB_DNN_H

/* As the real hb_dnn.h (libdnn 1.24.5), this includes hb_sys.h alone: the status codes and hbDNNGetErrorDesc are
 * in hb_dnn_status.h, which a user includes (so a missing include fails here as it does on a board). */
#include "hb_sys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The release these headers follow; the bpu driver's CMake refuses an SDK older than it needs by them. */
#define HB_DNN_VERSION_MAJOR 1U
#define HB_DNN_VERSION_MINOR 24U
#define HB_DNN_VERSION_PATCH 5U

#define HB_DNN_TENSOR_MAX_DIMENSIONS 8

typedef void* hbPackedDNNHandle_t; /* the models of one or more files */
typedef void* hbDNNHandle_t;       /* one model */
typedef void* hbDNNTaskHandle_t;   /* one inference */

typedef enum { HB_DNN_LAYOUT_NHWC = 0, HB_DNN_LAYOUT_NCHW = 2, HB_DNN_LAYOUT_NONE = 255 } hbDNNTensorLayout;

/* Image types first (0..5), then plain element types (6..18). */
typedef enum {
    HB_DNN_IMG_TYPE_Y,
    HB_DNN_IMG_TYPE_NV12,
    HB_DNN_IMG_TYPE_NV12_SEPARATE,
    HB_DNN_IMG_TYPE_YUV444,
    HB_DNN_IMG_TYPE_RGB,
    HB_DNN_IMG_TYPE_BGR,
    HB_DNN_TENSOR_TYPE_S4,
    HB_DNN_TENSOR_TYPE_U4,
    HB_DNN_TENSOR_TYPE_S8,
    HB_DNN_TENSOR_TYPE_U8,
    HB_DNN_TENSOR_TYPE_F16,
    HB_DNN_TENSOR_TYPE_S16,
    HB_DNN_TENSOR_TYPE_U16,
    HB_DNN_TENSOR_TYPE_F32,
    HB_DNN_TENSOR_TYPE_S32,
    HB_DNN_TENSOR_TYPE_U32,
    HB_DNN_TENSOR_TYPE_F64,
    HB_DNN_TENSOR_TYPE_S64,
    HB_DNN_TENSOR_TYPE_U64,
    HB_DNN_TENSOR_TYPE_MAX
} hbDNNDataType;

typedef struct {
    int32_t dimensionSize[HB_DNN_TENSOR_MAX_DIMENSIONS];
    int32_t numDimensions;
} hbDNNTensorShape;

/* real = q / 2^shiftData[i] */
typedef struct {
    int32_t shiftLen;
    uint8_t* shiftData;
} hbDNNQuantiShift;

/* real = (q - zeroPointData[i]) * scaleData[i] (no zero point when zeroPointLen is 0); quantizing
 * rounds to nearest and saturates to the element type. */
typedef struct {
    int32_t scaleLen;
    float* scaleData;
    int32_t zeroPointLen;
    int8_t* zeroPointData;
} hbDNNQuantiScale;

typedef enum { NONE, SHIFT, SCALE } hbDNNQuantiType;

/* validShape is the logical shape; alignedShape and stride (bytes) describe the padded buffer the BPU
 * reads or writes, alignedByteSize bytes in all. */
typedef struct {
    hbDNNTensorShape validShape;
    hbDNNTensorShape alignedShape;
    int32_t tensorLayout; /* hbDNNTensorLayout */
    int32_t tensorType;   /* hbDNNDataType */
    hbDNNQuantiShift shift;
    hbDNNQuantiScale scale;
    hbDNNQuantiType quantiType;
    int32_t quantizeAxis;
    int32_t alignedByteSize;
    int32_t stride[HB_DNN_TENSOR_MAX_DIMENSIONS];
} hbDNNTensorProperties;

typedef struct {
    hbSysMem sysMem[4]; /* planes; one for every non-NV12_SEPARATE type */
    hbDNNTensorProperties properties;
} hbDNNTensor;

/* A region of an image input, for hbDNNRoiInfer (pixels, edges included). */
typedef struct {
    int32_t left;
    int32_t top;
    int32_t right;
    int32_t bottom;
} hbDNNRoi;

typedef enum {
    HB_DNN_PRIORITY_LOWEST = 0,
    HB_DNN_PRIORITY_HIGHEST = 255,
    HB_DNN_PRIORITY_PREEMP = HB_DNN_PRIORITY_HIGHEST
} hbDNNTaskPriority;

typedef struct {
    int32_t bpuCoreId; /* hbBPUCore */
    int32_t dspCoreId; /* hbDSPCore */
    int32_t priority;  /* 0..255; 255 preempts */
    int32_t more;      /* 1: more small tasks will be appended to this one */
    int64_t customId;
    int32_t reserved1;
    int32_t reserved2;
} hbDNNInferCtrlParam;

/* As the real macro: a bare block (not do-while) using `false`, so it needs <stdbool.h> in C and a
 * use that compiles here compiles on a board. */
#define HB_DNN_INITIALIZE_INFER_CTRL_PARAM(param)   \
    {                                               \
        (param)->bpuCoreId = HB_BPU_CORE_ANY;       \
        (param)->dspCoreId = HB_DSP_CORE_ANY;       \
        (param)->priority = HB_DNN_PRIORITY_LOWEST; \
        (param)->more = false;                      \
        (param)->customId = 0;                      \
        (param)->reserved1 = 0;                     \
        (param)->reserved2 = 0;                     \
    }

typedef void (*hbDNNTaskDoneCb)(hbDNNTaskHandle_t taskHandle, int32_t status, void* userdata);

const char* hbDNNGetVersion(void);

int32_t hbDNNInitializeFromFiles(hbPackedDNNHandle_t* packedDNNHandle, const char** modelFileNames,
                                 int32_t modelFileCount);
int32_t hbDNNInitializeFromDDR(hbPackedDNNHandle_t* packedDNNHandle, const void** modelData, int32_t* modelDataLengths,
                               int32_t modelDataCount);
int32_t hbDNNRelease(hbPackedDNNHandle_t packedDNNHandle);

int32_t hbDNNGetModelNameList(const char*** modelNameList, int32_t* modelNameCount,
                              hbPackedDNNHandle_t packedDNNHandle);
int32_t hbDNNGetModelHandle(hbDNNHandle_t* dnnHandle, hbPackedDNNHandle_t packedDNNHandle, const char* modelName);

int32_t hbDNNGetInputCount(int32_t* inputCount, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetInputName(const char** name, hbDNNHandle_t dnnHandle, int32_t inputIndex);
int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle, int32_t inputIndex);
int32_t hbDNNGetOutputCount(int32_t* outputCount, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetOutputName(const char** name, hbDNNHandle_t dnnHandle, int32_t outputIndex);
int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle, int32_t outputIndex);

/* Starts one inference: *taskHandle must be NULL and receives the task; `output` points at an array of
 * as many tensors as the model has outputs, `input` at its inputs. */
int32_t hbDNNInfer(hbDNNTaskHandle_t* taskHandle, hbDNNTensor** output, const hbDNNTensor* input,
                   hbDNNHandle_t dnnHandle, hbDNNInferCtrlParam* inferCtrlParam);
/* Inference on regions of image inputs. Declared as the real header does; the stand-in fails it
 * (HB_DNN_API_USE_ERROR): nothing of ours uses it. */
int32_t hbDNNRoiInfer(hbDNNTaskHandle_t* taskHandle, hbDNNTensor** output, const hbDNNTensor* input, hbDNNRoi* rois,
                      int32_t roiCount, hbDNNHandle_t dnnHandle, hbDNNInferCtrlParam* inferCtrlParam);
int32_t hbDNNSetTaskDoneCb(hbDNNTaskHandle_t taskHandle, hbDNNTaskDoneCb cb, void* userdata);
/* timeout in milliseconds; 0 or less waits for ever. */
int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t taskHandle, int32_t timeout);
/* Frees a task: one not started is cancelled, one running is stopped; returns at once. */
int32_t hbDNNReleaseTask(hbDNNTaskHandle_t taskHandle);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STANDIN_HB_DNN_H */
