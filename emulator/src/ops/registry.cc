// registry.cc - op code (FORMAT.md) to op definition.
#include "ops/op_defs.h"

namespace accel_emu {

const OpDef* find_op(uint32_t op) {
    switch (static_cast<Op>(op)) {
        case Op::Conv: return &kConvDef;
        case Op::Gemm: return &kGemmDef;
        case Op::MatMul: return &kMatMulDef;
        case Op::Add: return &kAddDef;
        case Op::Sub: return &kSubDef;
        case Op::Mul: return &kMulDef;
        case Op::Div: return &kDivDef;
        case Op::Activation: return &kActivationDef;
        case Op::MaxPool: return &kMaxPoolDef;
        case Op::AvgPool: return &kAvgPoolDef;
        case Op::GlobalAvgPool: return &kGlobalAvgPoolDef;
        case Op::Copy: return &kCopyDef;
        case Op::Transpose: return &kTransposeDef;
        case Op::Concat: return &kConcatDef;
        case Op::Softmax: return &kSoftmaxDef;
        case Op::ConvTranspose: return &kConvTransposeDef;
        case Op::Resize: return &kResizeDef;
        case Op::Reduce: return &kReduceDef;
        case Op::Slice: return &kSliceDef;
        case Op::Gather: return &kGatherDef;
        case Op::Pow: return &kPowDef;
        case Op::Min: return &kMinDef;
        case Op::Max: return &kMaxDef;
        case Op::LayerNorm: return &kLayerNormDef;
        case Op::Expand: return &kExpandDef;
        case Op::Cast: return &kCastDef;
        case Op::Quantize: return &kQuantizeDef;
        case Op::Dequantize: return &kDequantizeDef;
        case Op::QConv: return &kQConvDef;
        case Op::QMatMul: return &kQMatMulDef;
        case Op::QGemm: return &kQGemmDef;
        case Op::QAdd: return &kQAddDef;
        case Op::QMul: return &kQMulDef;
        case Op::QActivation: return &kQActivationDef;
        case Op::QAvgPool: return &kQAvgPoolDef;
        case Op::QGlobalAvgPool: return &kQGlobalAvgPoolDef;
        case Op::QSoftmax: return &kQSoftmaxDef;
        case Op::DynQuant: return &kDynQuantDef;
        case Op::MatMulInteger: return &kMatMulIntegerDef;
        case Op::ConvInteger: return &kConvIntegerDef;
        case Op::Compare: return &kCompareDef;
        case Op::Logic: return &kLogicDef;
        case Op::Where: return &kWhereDef;
        case Op::ArgReduce: return &kArgReduceDef;
        case Op::TopK: return &kTopKDef;
        case Op::CumSum: return &kCumSumDef;
        case Op::OneHot: return &kOneHotDef;
        case Op::Rnn: return &kRnnDef;
        case Op::Pad: return &kPadDef;
        case Op::GroupNorm: return &kGroupNormDef;
    }
    return nullptr;
}

}  // namespace accel_emu
