// qbinary.cc - qadd and qmul (FORMAT.md ops 32, 33): the checks, and a run through math/qbinary.cc.
#include <algorithm>

#include "math/exact_rounding.h"
#include "math/qbinary.h"
#include "math/qbinary_row.h"
#include "math/quantize.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/quant_util.h"

namespace accel_emu {
namespace {

template <QBinOp OP>
bool validate(const Graph& g, const Node& n, std::string* err) {
    const char* op = OP == QBinOp::Add ? "qadd" : "qmul";
    // The devices fuse a relu into their elementwise ops; onnxruntime's kernels fuse nothing.
    if (!kern::check_common(g, n, err) || !kern::check_device_act(g, n, err)) return false;
    if (n.act != Act::None && n.act != Act::Relu)
        return kern::fail(err, op, kern::cat("activation ", uint32_t(n.act), " is not relu, the one the devices fuse"));
    const TensorDesc& a = *kern::input(g, n, 0);
    const TensorDesc& b = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const auto per_tensor = kern::QuantShape::PerTensor;
    if (!kern::check_quantized(a, op, "input A", per_tensor, -1, false, err) ||
        !kern::check_quantized(b, op, "input B", per_tensor, -1, false, err) ||
        !kern::check_quantized(y, op, "output", per_tensor, -1, false, err))
        return false;
    if (!kern::same_dtype(a, y, op, "input A", err) || !kern::same_dtype(b, y, op, "input B", err)) return false;
    return kern::check_broadcast(a, b, y, op, err);
}

// The rule of the node: the model's int8 rules over its tensors' parameters.
QBinRule rule_of(QBinOp op, const Graph& g, const Node& n) {
    const TensorDesc &ad = *kern::input(g, n, 0), &bd = *kern::input(g, n, 1), &yd = kern::output(g, n, 0);
    return quant_rules(g).binary_rule(op, ad, bd, yd, n.act == Act::Relu);
}

// Which input is a one-value constant (0 or 1), else -1: then the op is a function of the other input's
// byte alone, and runs as a 256-entry table made at load with the same rule (the same bytes, one lookup).
int scalar_constant(const Graph& g, const Node& n) {
    for (int i = 0; i < 2; ++i) {
        const TensorDesc& t = *kern::input(g, n, i);
        if (t.kind == TensorKind::Constant && t.numel == 1) return i;
    }
    return -1;
}

// The prepared block: the code path the model loaded with, then the table when there is one.
size_t prepared_bytes(const Graph& g, const Node& n) {
    return kern::kPathBytes + (scalar_constant(g, n) >= 0 ? 256 : 0);
}

template <QBinOp OP>
void prepare(const Graph& g, const Node& n, const void* const* in, void* out) {
    kern::record_path(g, n, in, out);
    const int k = scalar_constant(g, n);
    if (k < 0) return;
    uint8_t bytes[256];
    for (int b = 0; b < 256; ++b) bytes[b] = static_cast<uint8_t>(b);
    const QBinRule rule = rule_of(OP, g, n);
    uint8_t* table = static_cast<uint8_t*>(out) + kern::kPathBytes;
    if (k == 1) qbinary_row_portable(rule, bytes, 1, in[1], 0, table, 256);
    else qbinary_row_portable(rule, in[0], 0, bytes, 1, table, 256);
}

// Rows of Y (its last dim) in parts over the core's threads when there are enough bytes; a table's bytes in
// parts of 1024. Each element is computed alone: the parts change no result.
template <QBinOp OP>
void run(const KernelArgs& a) {
    const TensorDesc &ad = kern::in_desc(a, 0), &bd = kern::in_desc(a, 1), &yd = kern::out_desc(a, 0);
    const int k = scalar_constant(*a.graph, *a.node);
    const bool vector = kern::vector_path(a);
    if (k >= 0 && yd.numel == (k == 1 ? ad : bd).numel) {
        const auto* table = static_cast<const uint8_t*>(a.prepared) + kern::kPathBytes;
        const auto* x = static_cast<const uint8_t*>(a.in[1 - k]);
        auto* y = static_cast<uint8_t*>(a.out[0]);
        const int64_t blocks = (yd.numel + 1023) / 1024;
        a.par->for_ranges(blocks, split_parts(blocks, yd.numel, kMinElemsPerPart), [&](int64_t b0, int64_t b1, int) {
            const int64_t e0 = b0 * 1024, e1 = std::min(yd.numel, b1 * 1024);
            lookup_table(table, x + e0, y + e0, e1 - e0, vector);
        });
        return;
    }
    const QBinRule rule = rule_of(OP, *a.graph, *a.node);
    const int64_t rows = qbinary_rows(yd);
    a.par->for_ranges(rows, split_parts(rows, yd.numel, kMinElemsPerPart), [&](int64_t r0, int64_t r1, int) {
        qbinary_broadcast_rows(rule, ad, bd, yd, a.in[0], a.in[1], a.out[0], vector, r0, r1);
    });
}

using kern::no_scratch;

}  // namespace

const OpDef kQAddDef = {"qadd",           validate<QBinOp::Add>, no_scratch,
                        run<QBinOp::Add>, prepared_bytes,        prepare<QBinOp::Add>};
const OpDef kQMulDef = {"qmul",           validate<QBinOp::Mul>, no_scratch,
                        run<QBinOp::Mul>, prepared_bytes,        prepare<QBinOp::Mul>};

}  // namespace accel_emu
