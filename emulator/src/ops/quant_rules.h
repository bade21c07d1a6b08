// quant_rules.h - whose integer arithmetic a model's quantized ops compute (FORMAT.md, int8_rules): one
// QuantRules object per rule set, onnxruntime's (ort: float multipliers, round half to even), the DPU's
// (dpu: power-of-two scales, fix points, shifts that round half up) and the BPU's (bpu: 15-bit integer
// multipliers and shifts). The graph's rule set picks the object in one place (quant_rules); the ops ask it
// what they compute and never name a rule set.
#pragma once

#include <cstdint>

#include "graph.h"
#include "math/fixpoint.h"
#include "math/pool.h"
#include "math/qbinary.h"
#include "math/qbinary_row.h"
#include "math/qgemm.h"
#include "ops/op_util.h"

namespace accel_emu {

class QuantRules {
public:
    virtual ~QuantRules() = default;

    // The activations an op that the devices fuse them into (qconv, qmatmul, qgemm, qadd, qmul) may carry:
    // ActRule::Fused under a device's rules, MustBeNone under onnxruntime's (its kernels fuse none).
    virtual kern::ActRule fused_act_rule() const = 0;
    // Does a convolution or matmul fuse act? (the devices: relu and clip, and leaky relu on the DPU).
    virtual bool fuses(Act act) const = 0;
    // Is there a quantized softmax? (onnxruntime's QLinearSoftmax; a device runs softmax in float).
    virtual bool has_qsoftmax() const = 0;
    // May qgemm scale its product by an alpha other than 1? (not with an integer requantization).
    virtual bool takes_gemm_alpha() const = 0;

    // The int8 GEMM's epilogue for an 8-bit output: QOut::Q8 (a float multiplier) or QOut::Fixed.
    virtual QOut gemm_q8_out() const = 0;
    // QOut::Fixed: the requantization of a sum of x times channel c of w into y with n's fused activation,
    // and y's bounds; false for an activation the rules do not fuse (which the ops refuse at load).
    virtual bool fixed_requant(const Node& n, const TensorDesc& x, const TensorDesc& w, size_t c, const TensorDesc& y,
                               FixedRequant* r, int32_t* y_min, int32_t* y_max) const = 0;

    // The rule of qadd or qmul from A and B to Y, relu fused or not.
    virtual QBinRule binary_rule(QBinOp op, const TensorDesc& a, const TensorDesc& b, const TensorDesc& y,
                                 bool relu) const = 0;
    // qactivation's table: each byte of x through n's activation into y.
    virtual void activation_table(const Node& n, const TensorDesc& x, const TensorDesc& y,
                                  uint8_t table[256]) const = 0;
    // quantize: float x into y (per tensor or per axis); `vector` lets the AVX-512 loop run.
    virtual void quantize(const float* x, const TensorDesc& y, bool vector, void* out) const = 0;
    // qavgpool over every plane of x (NCHW), and qglobalavgpool.
    virtual void avg_pool(const PoolGeom& q, bool include_pad, const TensorDesc& x, const TensorDesc& y, const void* in,
                          void* out) const = 0;
    virtual void global_avg_pool(const TensorDesc& x, const TensorDesc& y, const void* in, void* out) const = 0;
};

// The rules of g's quantized ops (g.int8_rules).
const QuantRules& quant_rules(const Graph& g);

}  // namespace accel_emu
