// graph.h - the emulator's in-memory model: what the reader builds from a validated .accm file and
// what the planner, the executor and the kernels work from. Field meanings are those of FORMAT.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "accel/accel.h"
#include "math/cpu_isa.h"
#include "op_codes.h"

namespace accel_emu {

constexpr int kMaxDims = ACCEL_MAX_DIMS;
constexpr uint32_t kAbsent = 0xFFFFFFFFu;  // an optional node input that is not given

enum class TensorKind : uint32_t { Activation = 0, Input = 1, Output = 2, Constant = 3 };

// A tensor's quantization. A SHIFT tensor (as a fix-point device reports it) also holds its scales 2^-shift and zero
// points 0, which is all the kernels read; the ABI reports it by its shifts alone.
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
    // Graph inputs of minor 4 on: the pixel format of a camera frame the model converts itself (FORMAT.md,
    // image inputs); ACCEL_IMAGE_NONE for every other tensor.
    accel_image_format image_format = ACCEL_IMAGE_NONE;
};

// The height and width in pixels of an image input of `format` whose buffer has NHWC dims (1, rows,
// columns, bytes per pixel): NV12's buffer holds H * 3/2 rows, its UV plane's H/2 rows of W/2 pairs.
// NV12 in one buffer or as its two planes: 4:2:0, so both of the image's dims are even.
inline bool is_nv12_form(accel_image_format format) {
    return format == ACCEL_IMAGE_NV12 || format == ACCEL_IMAGE_NV12_Y || format == ACCEL_IMAGE_NV12_UV;
}

inline void image_size(accel_image_format format, const int64_t* dims, int64_t* height, int64_t* width) {
    *height = format == ACCEL_IMAGE_NV12 ? dims[1] * 2 / 3 : format == ACCEL_IMAGE_NV12_UV ? dims[1] * 2 : dims[1];
    *width = format == ACCEL_IMAGE_NV12_UV ? dims[2] * 2 : dims[2];
}

struct Node {
    Op op = Op::Copy;
    std::string name;
    std::vector<uint32_t> inputs;   // tensor indices; kAbsent for a missing optional input
    std::vector<uint32_t> outputs;  // tensor indices
    Act act = Act::None;
    float act_alpha = 0.f;
    float act_beta = 0.f;
    // The op's parameters as the file holds them; read them by name through op_params.h.
    int64_t ints[16] = {0};
    float floats[6] = {0};
};

struct Graph {
    std::vector<TensorDesc> tensors;
    std::vector<Node> nodes;
    std::vector<uint32_t> inputs;   // tensor indices of the graph inputs, in order
    std::vector<uint32_t> outputs;  // tensor indices of the graph outputs, in order
    uint64_t weights_bytes = 0;     // size of the data section (constants live there)
    Int8Rules int8_rules = Int8Rules::Ort;  // whose integer arithmetic the quantized ops compute
    FloatIsa float_isa = FloatIsa::Portable;  // the float kernels' path, chosen at load (math/cpu_isa.h)
    // The data section while the reader runs the ops' checks (a constant's bytes are at its
    // data_offset; they may be unaligned), nullptr at any other time.
    const uint8_t* constants = nullptr;
};

}  // namespace accel_emu
