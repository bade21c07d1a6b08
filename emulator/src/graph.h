// graph.h - the emulator's in-memory model: what the reader builds from a validated .accm file and
// what the planner, the executor and the kernels work from. Field meanings are those of FORMAT.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accel/accel.h"

namespace accel_emu {

constexpr int kMaxDims = ACCEL_MAX_DIMS;
constexpr uint32_t kAbsent = 0xFFFFFFFFu;  // an optional node input that is not given

enum class TensorKind : uint32_t { Activation = 0, Input = 1, Output = 2, Constant = 3 };

enum class Op : uint32_t {
    Conv = 1,
    Gemm = 2,
    MatMul = 3,
    Add = 4,
    Sub = 5,
    Mul = 6,
    Div = 7,
    Activation = 8,
    MaxPool = 9,
    AvgPool = 10,
    GlobalAvgPool = 11,
    Copy = 12,
    Transpose = 13,
    Concat = 14,
    Softmax = 15,
    // format 1.1
    ConvTranspose = 16,
    Resize = 17,
    Reduce = 18,
    Slice = 19,
    Gather = 20,
    Pow = 21,
    Min = 22,
    Max = 23,
    LayerNorm = 24,
    Expand = 25,
    Cast = 26,
};

enum class Act : uint32_t {
    None = 0,
    Relu = 1,
    Clip = 2,
    Sigmoid = 3,
    HardSigmoid = 4,
    HardSwish = 5,
    LeakyRelu = 6,
    // format 1.1
    Tanh = 7,
    Silu = 8,
    Gelu = 9,
    Elu = 10,
    Softplus = 11,
    Sqrt = 12,
    Exp = 13,
    Log = 14,
    Neg = 15,
    Abs = 16,
    Reciprocal = 17,
    Erf = 18,
    Floor = 19,
    Ceil = 20,
    Pow = 21,
    Round = 22,
    GeluTanh = 23,
    Selu = 24,
    Softsign = 25,
};

struct Quant {
    accel_quant_type type = ACCEL_QUANT_NONE;
    int32_t axis = -1;
    std::vector<float> scales;
    std::vector<int32_t> zero_points;
    std::vector<uint8_t> shifts;
};

struct TensorDesc {
    std::string name;
    accel_dtype dtype = ACCEL_DTYPE_FLOAT32;
    accel_layout layout = ACCEL_LAYOUT_NONE;
    TensorKind kind = TensorKind::Activation;
    int ndim = 0;
    int64_t dims[kMaxDims] = {0};
    int64_t numel = 1;        // product of dims (1 for a scalar)
    uint64_t bytes = 0;       // numel * dtype size
    uint64_t data_offset = 0; // constants: offset inside Graph::weights
    Quant quant;
};

struct Node {
    Op op = Op::Copy;
    std::string name;
    std::vector<uint32_t> inputs;   // tensor indices; kAbsent for a missing optional input
    std::vector<uint32_t> outputs;  // tensor indices
    Act act = Act::None;
    float act_alpha = 0.f;
    float act_beta = 0.f;
    int64_t ints[16] = {0};
    float floats[6] = {0};
};

struct Graph {
    std::vector<TensorDesc> tensors;
    std::vector<Node> nodes;
    std::vector<uint32_t> inputs;   // tensor indices of the graph inputs, in order
    std::vector<uint32_t> outputs;  // tensor indices of the graph outputs, in order
    uint64_t weights_bytes = 0;     // size of the data section (constants live there)
    // The data section while the reader runs the ops' checks (a constant's bytes are at its
    // data_offset; they may be unaligned), nullptr at any other time.
    const uint8_t* constants = nullptr;
};

}  // namespace accel_emu
