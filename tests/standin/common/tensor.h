// tensor.h - a tensor as a stand-in BPU runtime's user sees it (element type, quantization, strided
// and padded layout), in neutral terms shared by the stand-ins of both API generations, and what the
// BPU's input and output stages do with it: convert between that layout and the emulator's dense
// float32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace standin {

constexpr int kMaxDims = 10;  // the larger of the two generations' limits (X3/X5: 8, S100: 10)

enum class ElementType { I8, U8, I16, U16, I32, U32, F16, F32, Bool8 };

// real = (q - zero_points[i]) * scales[i] (Scale), or q / 2^shifts[i] (Shift), i along `axis`
// (per tensor when the list has one entry); quantizing rounds to nearest and saturates.
enum class Quant { None, Scale, Shift };

struct TensorDesc {
    std::string name;
    ElementType type = ElementType::F32;
    int ndim = 0;
    int64_t dims[kMaxDims] = {0};     // the valid shape
    int64_t strides[kMaxDims] = {0};  // bytes between neighbours along each dimension
    int64_t byte_size = 0;            // bytes of the whole (padded) buffer
    Quant quant = Quant::None;
    int axis = -1;  // the quantization axis; -1: per tensor
    std::vector<float> scales;
    std::vector<int32_t> zero_points;
    std::vector<uint8_t> shifts;
    // The emulator model's tensor has this element type (an image input's uint8 frame) rather than
    // float32: its bytes are copied as they are, neither dequantized nor converted.
    bool raw = false;
    // An image of two planes (NV12: Y rows, then UV rows) that the user may hand over in two blocks: the
    // row (along dimension 1) where the second plane starts; 0 for tensors of one plane.
    int64_t second_plane_row = 0;
};

// Bytes of one element.
int element_size(ElementType type);

// Elements in the valid shape.
int64_t valid_elements(const TensorDesc& t);

// Bytes from the buffer's start to the end of its last valid element (0 for an empty tensor): what
// memory the strides reach.
int64_t span_bytes(const TensorDesc& t);

// Dense C-order strides of `padded` (dims at least the valid ones) into t.strides, and their total
// into t.byte_size; false if a padded dim is below the valid one or the size passes `max_bytes`.
bool set_padded_strides(TensorDesc& t, const int64_t* padded, int64_t max_bytes);

// Whether the strides are usable: positive, each dimension's step at least the whole of the next
// (no two valid elements overlap, C order), the last at least one element.
bool strides_valid(const TensorDesc& t);

// Reads the valid region of `src` (the padded bytes) into dense float32 `dst`, dequantizing.
void to_float(const TensorDesc& t, const uint8_t* src, float* dst);

// The input stage: the valid region of `src` (the padded bytes) into the emulator's dense tensor `dst`,
// as to_float does, or for a raw tensor its elements copied as they are.
void to_emulator(const TensorDesc& t, const uint8_t* src, void* dst);

// The rows [0, second_plane_row) and the rest of a two-plane tensor, each a tensor of its own whose
// bytes start at its own address (the first plane's byte_size covers its rows only).
TensorDesc first_plane(const TensorDesc& t);
TensorDesc second_plane(const TensorDesc& t);

// Writes dense float32 `src` into the valid region of `dst` (the padded bytes), quantizing with
// round-to-nearest and saturation; the padding is left as it is.
void from_float(const TensorDesc& t, const float* src, uint8_t* dst);

}  // namespace standin
