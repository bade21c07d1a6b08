// op_defs.h - the OpDef of each op, defined in its file here (ops/) and listed by find_op (registry.cc).
#pragma once

#include "ops.h"

namespace accel_emu {

extern const OpDef kConvDef;
extern const OpDef kGemmDef;
extern const OpDef kMatMulDef;
extern const OpDef kAddDef;
extern const OpDef kSubDef;
extern const OpDef kMulDef;
extern const OpDef kDivDef;
extern const OpDef kActivationDef;
extern const OpDef kMaxPoolDef;
extern const OpDef kAvgPoolDef;
extern const OpDef kGlobalAvgPoolDef;
extern const OpDef kCopyDef;
extern const OpDef kTransposeDef;
extern const OpDef kConcatDef;
extern const OpDef kSoftmaxDef;
extern const OpDef kConvTransposeDef;
extern const OpDef kResizeDef;
extern const OpDef kReduceDef;
extern const OpDef kSliceDef;
extern const OpDef kGatherDef;
extern const OpDef kPowDef;
extern const OpDef kMinDef;
extern const OpDef kMaxDef;
extern const OpDef kLayerNormDef;
extern const OpDef kExpandDef;
extern const OpDef kCastDef;
extern const OpDef kQuantizeDef;
extern const OpDef kDequantizeDef;
extern const OpDef kQConvDef;
extern const OpDef kQMatMulDef;
extern const OpDef kQGemmDef;
extern const OpDef kQAddDef;
extern const OpDef kQMulDef;
extern const OpDef kQActivationDef;
extern const OpDef kQAvgPoolDef;
extern const OpDef kQGlobalAvgPoolDef;
extern const OpDef kQSoftmaxDef;
extern const OpDef kDynQuantDef;
extern const OpDef kMatMulIntegerDef;
extern const OpDef kConvIntegerDef;
extern const OpDef kCompareDef;
extern const OpDef kLogicDef;
extern const OpDef kWhereDef;
extern const OpDef kArgReduceDef;
extern const OpDef kTopKDef;
extern const OpDef kCumSumDef;
extern const OpDef kOneHotDef;
extern const OpDef kRnnDef;
extern const OpDef kPadDef;
extern const OpDef kGroupNormDef;

}  // namespace accel_emu
