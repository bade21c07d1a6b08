/* test_facts.c - the libdnn stand-in's headers against the real X5 libdnn 1.24.5's facts
 * (../../facts/hbdnn_x5_1.24.5.txt): every struct's size, every field's offset and size, every enum
 * value and constant. See ../../facts/facts_check.h. Includes what a user of the real SDK includes. */
#include <dnn/hb_dnn.h>
#include <dnn/hb_dnn_status.h>
#include <dnn/hb_sys.h>

#include "../../facts/facts_check.h"

static const Fact facts[] = {
    /* hb_dnn.h */
    FACT_VALUE(HB_DNN_VERSION_MAJOR), FACT_VALUE(HB_DNN_VERSION_MINOR), FACT_VALUE(HB_DNN_VERSION_PATCH),
    FACT_VALUE(HB_DNN_TENSOR_MAX_DIMENSIONS),
    FACT_SIZEOF(hbPackedDNNHandle_t), FACT_SIZEOF(hbDNNHandle_t), FACT_SIZEOF(hbDNNTaskHandle_t),
    FACT_VALUE(HB_DNN_LAYOUT_NHWC), FACT_VALUE(HB_DNN_LAYOUT_NCHW), FACT_VALUE(HB_DNN_LAYOUT_NONE),
    FACT_SIZEOF(hbDNNTensorLayout),
    FACT_VALUE(HB_DNN_IMG_TYPE_Y), FACT_VALUE(HB_DNN_IMG_TYPE_NV12), FACT_VALUE(HB_DNN_IMG_TYPE_NV12_SEPARATE),
    FACT_VALUE(HB_DNN_IMG_TYPE_YUV444), FACT_VALUE(HB_DNN_IMG_TYPE_RGB), FACT_VALUE(HB_DNN_IMG_TYPE_BGR),
    FACT_VALUE(HB_DNN_TENSOR_TYPE_S4), FACT_VALUE(HB_DNN_TENSOR_TYPE_U4), FACT_VALUE(HB_DNN_TENSOR_TYPE_S8),
    FACT_VALUE(HB_DNN_TENSOR_TYPE_U8), FACT_VALUE(HB_DNN_TENSOR_TYPE_F16), FACT_VALUE(HB_DNN_TENSOR_TYPE_S16),
    FACT_VALUE(HB_DNN_TENSOR_TYPE_U16), FACT_VALUE(HB_DNN_TENSOR_TYPE_F32), FACT_VALUE(HB_DNN_TENSOR_TYPE_S32),
    FACT_VALUE(HB_DNN_TENSOR_TYPE_U32), FACT_VALUE(HB_DNN_TENSOR_TYPE_F64), FACT_VALUE(HB_DNN_TENSOR_TYPE_S64),
    FACT_VALUE(HB_DNN_TENSOR_TYPE_U64), FACT_VALUE(HB_DNN_TENSOR_TYPE_MAX), FACT_SIZEOF(hbDNNDataType),
    FACT_SIZEOF(hbDNNTensorShape), FACT_FIELD(hbDNNTensorShape, dimensionSize),
    FACT_FIELD(hbDNNTensorShape, numDimensions),
    FACT_SIZEOF(hbDNNQuantiShift), FACT_FIELD(hbDNNQuantiShift, shiftLen), FACT_FIELD(hbDNNQuantiShift, shiftData),
    FACT_POINTEE(hbDNNQuantiShift, shiftData),
    FACT_SIZEOF(hbDNNQuantiScale), FACT_FIELD(hbDNNQuantiScale, scaleLen), FACT_FIELD(hbDNNQuantiScale, scaleData),
    FACT_POINTEE(hbDNNQuantiScale, scaleData), FACT_FIELD(hbDNNQuantiScale, zeroPointLen),
    FACT_FIELD(hbDNNQuantiScale, zeroPointData), FACT_POINTEE(hbDNNQuantiScale, zeroPointData),
    FACT_VALUE(NONE), FACT_VALUE(SHIFT), FACT_VALUE(SCALE), FACT_SIZEOF(hbDNNQuantiType),
    FACT_SIZEOF(hbDNNTensorProperties), FACT_FIELD(hbDNNTensorProperties, validShape),
    FACT_FIELD(hbDNNTensorProperties, alignedShape), FACT_FIELD(hbDNNTensorProperties, tensorLayout),
    FACT_FIELD(hbDNNTensorProperties, tensorType), FACT_FIELD(hbDNNTensorProperties, shift),
    FACT_FIELD(hbDNNTensorProperties, scale), FACT_FIELD(hbDNNTensorProperties, quantiType),
    FACT_FIELD(hbDNNTensorProperties, quantizeAxis), FACT_FIELD(hbDNNTensorProperties, alignedByteSize),
    FACT_FIELD(hbDNNTensorProperties, stride),
    FACT_SIZEOF(hbDNNTensor), FACT_FIELD(hbDNNTensor, sysMem), FACT_FIELD(hbDNNTensor, properties),
    FACT_SIZEOF(hbDNNRoi), FACT_FIELD(hbDNNRoi, left), FACT_FIELD(hbDNNRoi, top), FACT_FIELD(hbDNNRoi, right),
    FACT_FIELD(hbDNNRoi, bottom),
    FACT_VALUE(HB_DNN_PRIORITY_LOWEST), FACT_VALUE(HB_DNN_PRIORITY_HIGHEST), FACT_VALUE(HB_DNN_PRIORITY_PREEMP),
    FACT_SIZEOF(hbDNNTaskPriority),
    FACT_SIZEOF(hbDNNInferCtrlParam), FACT_FIELD(hbDNNInferCtrlParam, bpuCoreId),
    FACT_FIELD(hbDNNInferCtrlParam, dspCoreId), FACT_FIELD(hbDNNInferCtrlParam, priority),
    FACT_FIELD(hbDNNInferCtrlParam, more), FACT_FIELD(hbDNNInferCtrlParam, customId),
    FACT_FIELD(hbDNNInferCtrlParam, reserved1), FACT_FIELD(hbDNNInferCtrlParam, reserved2),
    FACT_SIZEOF(hbDNNTaskDoneCb),
    /* hb_dnn_status.h */
    FACT_VALUE(HB_DNN_SUCCESS), FACT_VALUE(HB_DNN_INVALID_ARGUMENT), FACT_VALUE(HB_DNN_INVALID_MODEL),
    FACT_VALUE(HB_DNN_MODEL_NUMBER_EXCEED_LIMIT), FACT_VALUE(HB_DNN_INVALID_PACKED_DNN_HANDLE),
    FACT_VALUE(HB_DNN_INVALID_DNN_HANDLE), FACT_VALUE(HB_DNN_CAN_NOT_OPEN_FILE), FACT_VALUE(HB_DNN_OUT_OF_MEMORY),
    FACT_VALUE(HB_DNN_TIMEOUT), FACT_VALUE(HB_DNN_TASK_NUM_EXCEED_LIMIT),
    FACT_VALUE(HB_DNN_TASK_BATCH_SIZE_EXCEED_LIMIT), FACT_VALUE(HB_DNN_INVALID_TASK_HANDLE),
    FACT_VALUE(HB_DNN_RUN_TASK_FAILED), FACT_VALUE(HB_DNN_MODEL_IS_RUNNING), FACT_VALUE(HB_DNN_INCOMPATIBLE_MODEL),
    FACT_VALUE(HB_DNN_API_USE_ERROR), FACT_VALUE(HB_DNN_MULTI_PROGRESS_USE_ERROR), FACT_SIZEOF(hbDNNStatus),
    /* hb_sys.h */
    FACT_VALUE(HB_BPU_CORE_ANY), FACT_VALUE(HB_BPU_CORE_0), FACT_VALUE(HB_BPU_CORE_1), FACT_SIZEOF(hbBPUCore),
    FACT_VALUE(HB_DSP_CORE_ANY), FACT_VALUE(HB_DSP_CORE_0), FACT_VALUE(HB_DSP_CORE_1), FACT_SIZEOF(hbDSPCore),
    FACT_SIZEOF(hbSysMem), FACT_FIELD(hbSysMem, phyAddr), FACT_FIELD(hbSysMem, virAddr), FACT_FIELD(hbSysMem, memSize),
    FACT_VALUE(HB_SYS_MEM_CACHE_INVALIDATE), FACT_VALUE(HB_SYS_MEM_CACHE_CLEAN), FACT_SIZEOF(hbSysMemFlushFlag),
    FACT_VALUE(HB_SYS_SUCCESS), FACT_VALUE(HB_SYS_INVALID_ARGUMENT), FACT_VALUE(HB_SYS_OUT_OF_MEMORY),
    FACT_VALUE(HB_SYS_REGISTER_MEM_FAILED), FACT_SIZEOF(hbSysStatus),
};

FACTS_MAIN(facts)
