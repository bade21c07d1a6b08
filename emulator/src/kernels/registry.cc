// registry.cc - op code (FORMAT.md) to kernel definition.
#include "op_defs.h"

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
    }
    return nullptr;
}

}  // namespace accel_emu
