// qgemm.h - the int8 GEMM of the quantized ops (qconv, qmatmul, qgemm): 8-bit operands, exact int32
// accumulation, and an epilogue that turns each int32 sum into the op's output with onnxruntime's rules.
//
// Terms: W is the "weight" operand, M rows of K (a conv's weights, or a matmul's constant B transposed),
// packed once at load by qgemm_pack; X is the "activation" operand, K by N, read as the caller lays it
// out (qgemm_wx: K rows of N, an NCHW plane or an im2col panel; qgemm_xw: N rows of K, a matmul's rows).
// For output (m, n):
//     acc = sum_k (W[m][k] - w_zero[m]) * (X[k][n] - x_zero) + bias[m]          (int32, exact)
// and the epilogue writes, by QGemmSpec::out:
//     Q8     y = nearbyint(min(max(float(acc) * scale[m], qmin - y_zero), qmax - y_zero)) + y_zero
//            (float32 multiply, round half to even, the clamp in MlasRequantizeOutput's order: a NaN product
//            gives qmin; qmin/qmax are the output type's range, so y needs no further clamp)
//     Int32  y = acc
//     Float  y = float(acc) * scale[m] + fbias[m]     (two float32 roundings, no FMA; fbias nullable)
//     Fixed  y = clamp(rshift_up(int64(acc >> pre[m]) * mult[m], post[m]), y_min - y_zero, y_max - y_zero) + y_zero
//            (integers only: the fixed-point requantization of the devices' rules, `dpu` and `bpu`), where
//            acc >> pre floors and rshift_up(v, s) = (v + 2^(s-1)) >> s rounds half toward +inf (v for s = 0);
//            a negative acc >> pre takes nmult[m] and npost[m] instead (a leaky slope; equal to mult and post
//            otherwise)
// Every ISA path gives the same bytes as the portable one for the same inputs (tests check it). acc is the
// exact sum modulo 2^32 (it only wraps where the true sum leaves int32, which 8-bit operands reach only
// for depths past 2^15).
#pragma once

#include <cstddef>
#include <cstdint>

#include "math/conv_geom.h"

namespace accel_emu {

// The int8 code paths. Which one runs is chosen when a model loads (qisa_select) and recorded in what the
// op prepares, so a model keeps its path for its lifetime: values are appended, never renumbered. Within
// one architecture's paths (x86-64: Avx2 < Avx512Vnni < Amx; aarch64: Neon < NeonDot) a larger value is a
// faster path; Portable is every CPU's slowest.
enum class QIsa : int32_t { Portable = 0, Avx2 = 1, Avx512Vnni = 2, Amx = 3, Neon = 4, NeonDot = 5 };

// The fastest path this CPU (and OS, for AMX tiles) supports, capped by the environment variable
// ACCEL_EMU_ISA (portable | avx2 | avx512vnni | amx | neon | neondot; unset or unknown: no cap; another
// architecture's path: portable), read at every call.
QIsa qisa_select();
// "portable", "avx2", "avx512vnni", "amx", "neon", "neondot".
const char* qisa_name(QIsa isa);
// The paths whose CPUs have AVX-512 (the vector loops of the int8 elementwise ops and epilogues).
inline bool qisa_avx512(QIsa isa) { return isa == QIsa::Avx512Vnni || isa == QIsa::Amx; }

enum class QOut : int32_t { Q8 = 0, Int32 = 1, Float = 2, Fixed = 3 };

// Bytes of one output element of the kind.
inline int64_t qout_bytes(QOut out) { return out == QOut::Q8 || out == QOut::Fixed ? 1 : 4; }

// One row's fixed-point requantization (QOut::Fixed). Limits (the callers keep them): 0 <= pre <= 31,
// 0 <= post, npost <= 61, |mult|, |nmult| < 2^31, so that no step overflows int64.
struct FixedRequant { int32_t pre = 0, mult = 1, post = 0, nmult = 1, npost = 0; };

// One GEMM's operands and epilogue. Pointers are only read during qgemm_pack.
struct QGemmSpec {
    int64_t M = 0, K = 0;
    // W's columns as [K / taps][taps] (a conv's [Mg][Cg][kh*kw]): the packed depth order is (tap, channel),
    // which lets qconv read 4 channels of one tap as one unit. qconv needs taps == kh*kw; qgemm_wx and
    // qgemm_xw need taps == 1. K must be a multiple of taps.
    int64_t taps = 1;
    bool w_signed = true;            // W is int8 (else uint8)
    bool x_signed = false;           // X is int8 (else uint8)
    int32_t x_zero = 0;              // X's zero point (in X's type's range; clamped into it otherwise)
    const int32_t* w_zero = nullptr; // [M] W's zero points (nullptr: all 0)
    const int32_t* bias = nullptr;   // [M] int32 bias (nullptr: 0)
    QOut out = QOut::Q8;
    const float* scale = nullptr;    // [M] (Q8, Float)
    const float* fbias = nullptr;    // [M] (Float; nullptr: 0)
    bool y_signed = false;           // Q8: output int8 (else uint8)
    int32_t y_zero = 0;              // Q8, Fixed: output zero point (in the output type's range; clamped into it)
    const FixedRequant* fixed = nullptr;  // [M] (Fixed)
    // Fixed: the output's bounds (a fused relu narrows them), clamped into the output type's range.
    int32_t y_min = -128, y_max = 255;
};

// Bytes of the packed form of spec for isa (weights, per-row constants, the epilogue's parameters).
size_t qgemm_packed_bytes(QIsa isa, const QGemmSpec& spec);
// Packs w ([M][K] row-major, int8 or uint8 as spec says) and spec's constants into out (qgemm_packed_bytes
// bytes, 64-byte aligned). The packed form records isa, M, K and the epilogue: the runs need nothing else.
void qgemm_pack(QIsa isa, const QGemmSpec& spec, const void* w, void* out);

// Scratch bytes a run over N columns needs (X in the kernels' layout, a block at a time), whichever of the
// forms below. Scratch may have any alignment (the runs align inside it).
size_t qgemm_scratch_bytes(const void* packed, int64_t N);

// y[m * ldy + n] = epilogue(acc(m, n)), X[k][n] at x[k * ldx + n] (bytes; int32 or float outputs are
// indexed in elements of their type).
void qgemm_wx(const void* packed, int64_t N, const void* x, int64_t ldx, void* y, int64_t ldy, void* scratch);
// y[n * ldy + m] = epilogue(acc(m, n)), X[k][n] at x[n * ldx + k].
void qgemm_xw(const void* packed, int64_t N, const void* x, int64_t ldx, void* y, int64_t ldy, void* scratch);

// qgemm_xw in two steps, for several packed forms that share K, X's sign and the path (the column parts of
// one GEMM: ops/qgemm_split.h): X's N columns put in the kernels' layout once, into `shared`
// (qgemm_xw_shared_bytes(K, N) bytes, any alignment), by qgemm_xw_prepare over columns [n0, n1) (disjoint
// ranges may run at once), then each form's qgemm_xw_shared reads it (with a scratch of
// qgemm_scratch_bytes(packed, N) at most). The same bytes as qgemm_xw.
size_t qgemm_xw_shared_bytes(int64_t K, int64_t N);
void qgemm_xw_prepare(const void* packed, int64_t N, const void* x, int64_t ldx, void* shared, int64_t n0, int64_t n1);
void qgemm_xw_shared(const void* packed, int64_t N, const void* shared, void* y, int64_t ldy, void* scratch);

// A quantized conv of one group of one image, NCHW: y[Mg][OH*OW] = epilogue(W_group * im2col(x)), taps
// outside the input read x_zero. `packed` was made from the group's weights [Mg][K] (K = Cg*kh*kw in
// ONNX's order) with spec.taps = kh*kw, x points at the group's first input channel, y at its first output
// channel.
size_t qconv_scratch_bytes(const void* packed, const ConvGeom& q);
void qconv(const void* packed, const ConvGeom& q, const void* x, void* y, void* scratch);

// qconv in parts, for the core's threads: any split gives the same bytes (each output's sum and epilogue is
// the same whichever part computes it). The scratch sizes hold for every path (they need spec's sizes only).
// - Output rows [oh0, oh1) alone, the part building its own copies of the input rows it reads (a pointwise
//   conv reads the input in place), in a scratch of qconv_rows_scratch_max(spec, q, rows) for parts of
//   `rows` rows at most.
size_t qconv_rows_scratch_max(const QGemmSpec& spec, const ConvGeom& q, int64_t rows);
void qconv_rows(const void* packed, const ConvGeom& q, const void* x, void* y, void* scratch, int64_t oh0, int64_t oh1);
// - Or, where qconv_shares(q) (the whole input's copies fit in cache), the copies built
//   once into `shared` (qconv_shared_bytes) and read by several packed forms of the conv (parts of its
//   weight rows: one K, taps, signs, x zero point and path): qconv_share_begin once, then qconv_share over
//   4-channel units [u0, u1) of the input (qconv_units(q) of them; disjoint ranges may run at once), then,
//   if some form qconv_takes_sums (weights' zero points that need X's column sums), qconv_share_sums over
//   output positions [p0, p1) (disjoint ranges at once), then qconv_shared over output positions [p0, p1)
//   (any at once). Scratch of each call: qconv_shared_scratch_max(spec, q, cols) for ranges of `cols`
//   positions at most.
bool qconv_shares(const ConvGeom& q);
int64_t qconv_units(const ConvGeom& q);
size_t qconv_shared_bytes(const QGemmSpec& spec, const ConvGeom& q);
size_t qconv_shared_scratch_max(const QGemmSpec& spec, const ConvGeom& q, int64_t cols);
void qconv_share_begin(const void* packed, const ConvGeom& q, void* shared);
void qconv_share(const void* packed, const ConvGeom& q, const void* x, void* shared, int64_t u0, int64_t u1,
                 void* scratch);
bool qconv_takes_sums(const void* packed);
void qconv_share_sums(const void* packed, const ConvGeom& q, void* shared, int64_t p0, int64_t p1);
void qconv_shared(const void* packed, const ConvGeom& q, const void* shared, void* y, int64_t p0, int64_t p1,
                  void* scratch);

// A quantized depthwise conv (group == C == M) of one image, NCHW, with the same epilogue per channel:
// spec.M = C, spec.K = kh*kw, w [C][kh*kw].
size_t qdepthwise_packed_bytes(QIsa isa, const QGemmSpec& spec);
void qdepthwise_pack(QIsa isa, const QGemmSpec& spec, const void* w, void* out);
size_t qdepthwise_scratch_bytes(const void* packed, const ConvGeom& q);
void qdepthwise(const void* packed, const ConvGeom& q, const void* x, void* y, void* scratch);
// Channels [c0, c1) only (x and y still at the image's first channel): disjoint ranges may run at once, each
// with its own scratch.
void qdepthwise_channels(const void* packed, const ConvGeom& q, const void* x, void* y, void* scratch, int64_t c0,
                         int64_t c1);

}  // namespace accel_emu
