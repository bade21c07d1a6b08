# test_libdnn_check.cmake (cmake -P): the bpu driver's configure refuses an X3 libdnn 1.6.1 and says why,
# and accepts the 1.2x API. Writes a fake SDK prefix under WORK whose headers declare what 1.6.1's do (in
# our words: version 1.6.1; scales without zero points; properties without quantizeAxis and stride; no
# hbDNNSetTaskDoneCb; no dnn/hb_dnn_status.h), configures libdnn_check/ on it and expects the refusal
# naming the version and each missing piece; then on the libdnn stand-in (1.24.5's API), expects success.
# -D: WORK (a scratch folder), STANDIN_INCLUDE, GENERATOR, CXX.
set(prefix "${WORK}/libdnn-1.6.1")
file(REMOVE_RECURSE "${WORK}")
file(WRITE "${prefix}/include/dnn/hb_sys.h" [=[
#pragma once
#include <stdint.h>
typedef enum { HB_BPU_CORE_ANY = 0, HB_BPU_CORE_0 = 1, HB_BPU_CORE_1 = 2 } hbBPUCore;
typedef enum { HB_DSP_CORE_ANY = 0, HB_DSP_CORE_0 = 1, HB_DSP_CORE_1 = 2 } hbDSPCore;
typedef struct { uint64_t phyAddr; void *virAddr; uint32_t memSize; } hbSysMem;
int32_t hbSysAllocCachedMem(hbSysMem *mem, uint32_t size);
int32_t hbSysFlushMem(hbSysMem *mem, int32_t flag);
int32_t hbSysFreeMem(hbSysMem *mem);
]=])
file(WRITE "${prefix}/include/dnn/hb_dnn.h" [=[
#pragma once
#include "hb_sys.h"
#define HB_DNN_VERSION_MAJOR 1U
#define HB_DNN_VERSION_MINOR 6U
#define HB_DNN_VERSION_PATCH 1U
#define HB_DNN_TENSOR_MAX_DIMENSIONS 8
typedef void *hbPackedDNNHandle_t;
typedef void *hbDNNHandle_t;
typedef void *hbDNNTaskHandle_t;
typedef struct { int32_t dimensionSize[HB_DNN_TENSOR_MAX_DIMENSIONS]; int32_t numDimensions; } hbDNNTensorShape;
typedef struct { int32_t shiftLen; uint8_t *shiftData; } hbDNNQuantiShift;
typedef struct { int32_t scaleLen; float *scaleData; } hbDNNQuantiScale;
typedef enum { NONE, SHIFT, SCALE } hbDNNQuantiType;
typedef struct {
  hbDNNTensorShape validShape, alignedShape;
  int32_t tensorLayout, tensorType;
  hbDNNQuantiShift shift;
  hbDNNQuantiScale scale;
  hbDNNQuantiType quantiType;
  int32_t alignedByteSize;
} hbDNNTensorProperties;
typedef struct { hbSysMem sysMem[4]; hbDNNTensorProperties properties; } hbDNNTensor;
typedef struct { int32_t bpuCoreId, dspCoreId, priority, more, reserved1, reserved2, reserved3, reserved4; } hbDNNInferCtrlParam;
int32_t hbDNNInfer(hbDNNTaskHandle_t *task, hbDNNTensor **output, const hbDNNTensor *input, hbDNNHandle_t model,
                   hbDNNInferCtrlParam *ctrl);
int32_t hbDNNWaitTaskDone(hbDNNTaskHandle_t task, int32_t timeout);
int32_t hbDNNReleaseTask(hbDNNTaskHandle_t task);
]=])

function(configure name include out_rc out_text)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${CMAKE_CURRENT_LIST_DIR}/libdnn_check" -B "${WORK}/${name}" -G "${GENERATOR}"
            "-DCMAKE_CXX_COMPILER=${CXX}" "-DSDK_INCLUDE=${include}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_rc} "${rc}" PARENT_SCOPE)
  set(${out_text} "${out}${err}" PARENT_SCOPE)
endfunction()

configure(old "${prefix}/include" rc text)
message("--- configure on a libdnn 1.6.1 prefix (must fail):\n${text}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the configure accepted libdnn 1.6.1")
endif()
# The message names the version, every missing piece and what to install. (CMake wraps FATAL_ERROR text:
# match words, not whole lines.)
foreach(expected "is 1.6.1" "hbDNNSetTaskDoneCb" "hbDNNGetErrorDesc" "stride" "quantizeAxis" "zeroPointLen"
                 "RDK OS 3.x" "ACCEL_BPU_SDK")
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the refusal does not say '${expected}'")
  endif()
endforeach()

configure(new "${STANDIN_INCLUDE}" rc text)
message("--- configure on the libdnn stand-in (1.24.5's API, must pass):\n${text}")
if(NOT rc EQUAL 0 OR NOT text MATCHES "libdnn 1\\.24\\.5 in .* has all the driver needs")
  message(FATAL_ERROR "the configure refused the 1.24.5 API")
endif()
