/* hb_dnn.h - accel's stand-in for the model API of Horizon's S100 libdnn (the hbUCP generation: one
 * memory block per tensor, valid shapes of up to 10 dimensions with byte strides, int32 zero points,
 * no aligned shape, layout or shift; inference makes hbUCP tasks). See ../hb_ucp_sys.h for what a
 * stand-in is and is not. Never installed; tests only.
 *
 * The stand-in library (tests/standin/hbucp/src) runs the model file's embedded .accm on accel's
 * emulator and reproduces what makes the real runtime hard: padded strides, int8 tensors with scales
 * and zero points, cached memory that must be flushed, a task limit, timeouts and the error codes. */
#ifndef ACCEL_STANDIN_S100_HB_DNN_H
#define ACCEL_STANDIN_S100_HB_DNN_H

/* As the real header: hb_ucp.h and hb_ucp_sys.h, not the status headers (a user includes those). */
#include "hobot/hb_ucp.h"
#include "hobot/hb_ucp_sys.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HB_DNN_TENSOR_MAX_DIMENSIONS (10)

typedef void* hbDNNPackedHandle_t; /* the models of one or more files */
typedef void* hbDNNHandle_t;       /* one model */

/* Plain element types only (the X3/X5 image types are gone): S4 is 0. */
typedef enum {
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
    HB_DNN_TENSOR_TYPE_BOOL8,
    HB_DNN_TENSOR_TYPE_MAX
} hbDNNDataType;

typedef struct hbDNNTensorShape {
    int32_t dimensionSize[HB_DNN_TENSOR_MAX_DIMENSIONS];
    int32_t numDimensions;
} hbDNNTensorShape;

/* real = (q - zeroPointData[i]) * scaleData[i] (q * scaleData[i] when zeroPointLen is 0), i along
 * quantizeAxis (one entry: per tensor); quantizing rounds to nearest and saturates. */
typedef struct hbDNNQuantiScale {
    int32_t scaleLen;
    float* scaleData;
    int32_t zeroPointLen;
    int32_t* zeroPointData;
} hbDNNQuantiScale;

typedef enum { NONE, SCALE } hbDNNQuantiType;

/* stride[i]: bytes between neighbours along dimension i of validShape; larger than dense where the
 * BPU pads. -1 marks a dynamic stride: the user sets it in the tensor passed to hbDNNInferV2 (and
 * alignedByteSize is then -1 too). alignedByteSize: bytes of the whole padded buffer. */
typedef struct hbDNNTensorProperties {
    hbDNNTensorShape validShape;
    int32_t tensorType; /* hbDNNDataType */
    hbDNNQuantiScale scale;
    hbDNNQuantiType quantiType;
    int32_t quantizeAxis;
    int64_t alignedByteSize;
    int64_t stride[HB_DNN_TENSOR_MAX_DIMENSIONS];
} hbDNNTensorProperties;

typedef struct hbDNNTensor {
    hbUCPSysMem sysMem;
    hbDNNTensorProperties properties;
} hbDNNTensor;

typedef enum { HB_DNN_DESC_TYPE_UNKNOWN = 0, HB_DNN_DESC_TYPE_STRING } hbDNNDescType;

const char* hbDNNGetVersion(void);

int32_t hbDNNInitializeFromFiles(hbDNNPackedHandle_t* dnnPackedHandle, char const** modelFileNames,
                                 int32_t modelFileCount);
int32_t hbDNNInitializeFromDDR(hbDNNPackedHandle_t* dnnPackedHandle, const void** modelData, int32_t* modelDataLengths,
                               int32_t modelDataCount);
int32_t hbDNNRelease(hbDNNPackedHandle_t dnnPackedHandle);

int32_t hbDNNGetModelNameList(char const*** modelNameList, int32_t* modelNameCount,
                              hbDNNPackedHandle_t dnnPackedHandle);
int32_t hbDNNGetModelHandle(hbDNNHandle_t* dnnHandle, hbDNNPackedHandle_t dnnPackedHandle, char const* modelName);

int32_t hbDNNGetInputCount(int32_t* inputCount, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetInputName(char const** name, hbDNNHandle_t dnnHandle, int32_t inputIndex);
int32_t hbDNNGetInputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle, int32_t inputIndex);
int32_t hbDNNGetOutputCount(int32_t* outputCount, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetOutputName(char const** name, hbDNNHandle_t dnnHandle, int32_t outputIndex);
int32_t hbDNNGetOutputTensorProperties(hbDNNTensorProperties* properties, hbDNNHandle_t dnnHandle, int32_t outputIndex);

/* One inference of a model. taskHandle NULL: runs it now and returns when it ended (sync).
 * *taskHandle NULL: makes a new task (not started: hbUCPSubmitTask starts it). *taskHandle a task made
 * so and not submitted yet: appends this model's run to it. `output` and `input` point at arrays of
 * as many tensors as the model has outputs and inputs. */
int32_t hbDNNInferV2(hbUCPTaskHandle_t* taskHandle, hbDNNTensor* output, hbDNNTensor const* input,
                     hbDNNHandle_t dnnHandle);

/* Declared as the real header declares them; the stand-in library does not define them (nothing of
 * ours calls them: a call fails to link, never silently does something else). */
int32_t hbDNNGetInputDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle,
                          int32_t inputIndex);
int32_t hbDNNGetOutputDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle,
                           int32_t outputIndex);
int32_t hbDNNGetModelDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetCompileBpuCoreNum(int32_t* bpuCoreNum, hbDNNHandle_t dnnHandle);
int32_t hbDNNGetHBMDesc(char const** desc, uint32_t* size, int32_t* type, hbDNNPackedHandle_t dnnPackedHandle,
                        int32_t index);
int32_t hbDNNGetTaskOutputTensorProperties(hbDNNTensorProperties* properties, hbUCPTaskHandle_t taskHandle,
                                           int32_t subTaskIndex, int32_t outputIndex);

#ifdef __cplusplus
}
#endif

#endif /* ACCEL_STANDIN_S100_HB_DNN_H */
