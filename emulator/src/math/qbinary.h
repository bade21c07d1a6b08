// qbinary.h - the quantized elementwise binary ops with numpy broadcasting (ops/qbinary.cc: FORMAT.md ops
// 32, 33), int8 or uint8, with onnxruntime's QLinearAdd and QLinearMul arithmetic.
#pragma once

#include "graph.h"
#include "math/quantize.h"

namespace accel_emu {

enum class QBinOp { Add, Mul };

struct QBinRule;

// Y = A op B over the real values with `rule` (qbinary_row.h), A shaped ad and B shaped bd broadcast to Y's
// shape yd (checked by the caller); all three of one 8-bit dtype. `vector`: the AVX-512 rows where the CPU
// has them (the same bytes).
void qbinary_broadcast(const QBinRule& rule, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd,
                       const void* A, const void* B, void* Y, bool vector);
// The rows of Y's last dim that qbinary_broadcast walks, and the same over rows [row0, row1) of them only:
// disjoint ranges may run at once (each element is computed alone, so any split gives the same bytes).
int64_t qbinary_rows(const TensorDesc& yd);
void qbinary_broadcast_rows(const QBinRule& rule, const TensorDesc& ad, const TensorDesc& bd, const TensorDesc& yd,
                            const void* A, const void* B, void* Y, bool vector, int64_t row0, int64_t row1);

}  // namespace accel_emu
