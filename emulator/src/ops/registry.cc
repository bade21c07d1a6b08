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
    }
    return nullptr;
}

}  // namespace accel_emu
