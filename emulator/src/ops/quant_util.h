// quant_util.h - what the quantized ops (FORMAT.md ops 27-40) share: the load-time checks of a quantized
// tensor's dtype and quantization record, and its parameters in the form the math takes.
#pragma once

#include <cstdint>
#include <string>

#include "graph.h"
#include "math/fixpoint.h"
#include "math/qgemm.h"
#include "math/quantize.h"
#include "ops.h"
#include "ops/op_util.h"
#include "ops/quant_rules.h"

namespace accel_emu {
namespace kern {

// Which quantization records a role accepts.
enum class QuantShape { PerTensor, PerTensorOrAxis };

// `t` is int8 or uint8 (or int32 where allow_int32) with a scale/zero-point record of `shape` (per axis:
// along `axis` if axis >= 0, any axis if -1), every scale finite and > 0, every zero point inside the
// dtype's range. On failure "<op>: <role> '<name>' ..." in *err and false.
bool check_quantized(const TensorDesc& t, const char* op, const char* role, QuantShape shape, int axis,
                     bool allow_int32, std::string* err);

// Is `t` int8 or uint8?
inline bool is_q8(const TensorDesc& t) { return t.dtype == ACCEL_DTYPE_INT8 || t.dtype == ACCEL_DTYPE_UINT8; }

// The per-tensor parameters of a checked quantized tensor.
inline QParams qparams(const TensorDesc& t) {
    return QParams{t.quant.scales[0], t.quant.zero_points[0], t.dtype == ACCEL_DTYPE_INT8};
}

// The fix point of a checked tensor of a dpu model (its scale i: 2^-fix_point).
int32_t fix_point(const TensorDesc& t, size_t i = 0);

// The activation field of an op whose contract's rule is ActRule::Device (qconv, qmatmul, qgemm, qadd, qmul;
// check_common has let any known code through), as g's int8 rules allow it (QuantRules::fused_act_rule): 0
// only under onnxruntime's, whose kernels fuse none; else "<op>: fused activation <code> not supported" in
// *err and false. Which activations a device fuses into the op is the op's own check (check_fused_act).
bool check_device_act(const Graph& g, const Node& n, std::string* err);

// n's activation is one g's int8 rules fuse into a convolution or matmul (QuantRules::fuses); else
// "<op>: activation ..." in *err and false.
bool check_fused_act(const Graph& g, const Node& n, const char* op, std::string* err);

// The layout of a per-axis record over `t`: outer x channels x inner (channels 1 for per tensor).
struct AxisSplit { int64_t outer, channels, inner; };
AxisSplit axis_split(const TensorDesc& t);

// The prepared data of an elementwise int8 op starts with a record of the code path the model loaded
// with (kPathBytes, so that what follows stays 64-byte aligned): path_bytes and record_path are an OpDef's
// prepared_bytes and prepare for an op that keeps nothing else. A run takes the vector (AVX-512) loops on
// the AVX-512 VNNI path or better, whose CPUs all have them; ACCEL_EMU_ISA=portable or avx2 keeps the
// portable ones.
constexpr size_t kPathBytes = 64;
size_t path_bytes(const Graph& g, const Node& n);
void record_path(const Graph& g, const Node& n, const void* const* in, void* out);
inline bool vector_path(const KernelArgs& a) {
    return qisa_avx512(static_cast<QIsa>(*static_cast<const int32_t*>(a.prepared)));
}

// v rounded up to a multiple of 64 (the alignment of what a quantized op prepares and of its scratch parts).
inline size_t align64(size_t v) { return (v + 63) / 64 * 64; }

// Element i of an int8 or uint8 tensor's data (a zero point given as a tensor, say), as int32.
inline int32_t q8_at(const TensorDesc& t, const void* data, int64_t i) {
    return t.dtype == ACCEL_DTYPE_INT8 ? static_cast<const int8_t*>(data)[i] : static_cast<const uint8_t*>(data)[i];
}

// r[m] = sum_k (w[m][k] - zero[m]) of M rows of K int8 or uint8 weights, in uint32 arithmetic (exact modulo
// 2^32): what an integer product with the activations' zero point left out must subtract times it.
void weight_row_sums(const uint8_t* w, bool w_signed, const int32_t* zero, int64_t M, int64_t K, int32_t* r);

// Every int8 GEMM path (qgemm.h).
constexpr QIsa kAllIsas[] = {QIsa::Portable, QIsa::Avx2, QIsa::Avx512Vnni, QIsa::Amx, QIsa::Neon, QIsa::NeonDot};

// Bytes of packed weights and of scratch enough for whichever path a load picks: the sizes are asked of
// the GEMM for each path, the scratch by packing zero weights (at load only).
size_t qgemm_packed_max(const QGemmSpec& spec);
size_t qdepthwise_packed_max(const QGemmSpec& spec);
size_t qgemm_scratch_max(const QGemmSpec& spec, int64_t N);
size_t qconv_scratch_max(const QGemmSpec& spec, const ConvGeom& q);

}  // namespace kern
}  // namespace accel_emu
