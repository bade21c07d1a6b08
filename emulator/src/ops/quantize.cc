// quantize.cc - quantize, dequantize, qactivation and dynquant (FORMAT.md ops 27, 28, 34, 38): the boundaries between
// float and int8 regions, and the 8-bit elementwise ops, each a 256-entry table made at load by running
// the float function over the 256 dequantized inputs (math/qtable.cc), so that it computes exactly what
// dequantize -> activation -> quantize would.
#include "math/quantize.h"
#include "math/exact_rounding.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/quant_util.h"
#include "parallel.h"

namespace accel_emu {
namespace {

using kern::cat;
using kern::fail;

using kern::no_scratch;

bool validate_quantize(const Graph& g, const Node& n, std::string* err) {
    const char* op = "quantize";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (x.dtype != ACCEL_DTYPE_FLOAT32) return fail(err, op, cat("input '", x.name, "' is not float32"));
    return kern::check_quantized(y, op, "output", kern::QuantShape::PerTensorOrAxis, -1, false, err) &&
           kern::check_same_shape(x, y, op, err);
}

void run_quantize(const KernelArgs& a) {
    quant_rules(*a.graph).quantize(kern::in_f(a, 0), kern::out_desc(a, 0), kern::vector_path(a), a.out[0]);
}

bool validate_dequantize(const Graph& g, const Node& n, std::string* err) {
    const char* op = "dequantize";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    if (y.dtype != ACCEL_DTYPE_FLOAT32) return fail(err, op, cat("output '", y.name, "' is not float32"));
    return kern::check_quantized(x, op, "input", kern::QuantShape::PerTensorOrAxis, -1, true, err) &&
           kern::check_same_shape(x, y, op, err);
}

void run_dequantize(const KernelArgs& a) {
    const TensorDesc& x = kern::in_desc(a, 0);
    const kern::AxisSplit s = kern::axis_split(x);
    dequantize_linear(a.in[0], x.dtype == ACCEL_DTYPE_INT32 ? 4 : 1, x.dtype == ACCEL_DTYPE_INT8, s.outer, s.channels,
                      s.inner, x.quant.scales.data(), x.quant.zero_points.data(), kern::out_f(a, 0),
                      kern::vector_path(a));
}

bool validate_qactivation(const Graph& g, const Node& n, std::string* err) {
    const char* op = "qactivation";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& y = kern::output(g, n, 0);
    return kern::check_quantized(x, op, "input", kern::QuantShape::PerTensor, -1, false, err) &&
           kern::check_quantized(y, op, "output", kern::QuantShape::PerTensor, -1, false, err) &&
           kern::check_same_shape(x, y, op, err);
}

// The prepared block: the code path the model loaded with (kern::record_path), then the table.
size_t table_bytes(const Graph& g, const Node& n) { return kern::path_bytes(g, n) + 256; }

void make_table(const Graph& g, const Node& n, const void* const* in, void* out) {
    kern::record_path(g, n, in, out);
    quant_rules(g).activation_table(n, *kern::input(g, n, 0), kern::output(g, n, 0),
                                    static_cast<uint8_t*>(out) + kern::kPathBytes);
}

void run_qactivation(const KernelArgs& a) {
    lookup_table(static_cast<const uint8_t*>(a.prepared) + kern::kPathBytes, static_cast<const uint8_t*>(a.in[0]),
                 static_cast<uint8_t*>(a.out[0]), kern::out_desc(a, 0).numel, kern::vector_path(a));
}

bool validate_dynquant(const Graph& g, const Node& n, std::string* err) {
    const char* op = "dynquant";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc &y = kern::output(g, n, 0), &s = kern::output(g, n, 1), &z = kern::output(g, n, 2);
    if (x.dtype != ACCEL_DTYPE_FLOAT32 || y.dtype != ACCEL_DTYPE_UINT8 || s.dtype != ACCEL_DTYPE_FLOAT32 ||
        z.dtype != ACCEL_DTYPE_UINT8 || s.numel != 1 || z.numel != 1)
        return fail(err, op, "takes float32 X and gives uint8 Y, a float32 scale and a uint8 zero point (one each)");
    return kern::check_same_shape(x, y, op, err);
}

// The range scan and the quantization each split into parts of the tensor (shapes only): min and max are
// exact, so the parts' bounds combine to the whole's bits, and each element's quantization is its own.
void run_dynquant(const KernelArgs& a) {
    const int64_t n = kern::in_desc(a, 0).numel;
    const float* x = kern::in_f(a, 0);
    float* scale = kern::out_f(a, 1);
    auto* zero = static_cast<uint8_t*>(a.out[2]);
    auto* y = static_cast<uint8_t*>(a.out[0]);
    const bool vector = kern::vector_path(a);
    const int64_t parts = split_parts(n / 1024, n, kMinElemsPerPart);
    float lo[kMaxParts], hi[kMaxParts];
    a.par->for_each(parts, [&](int64_t p, int) {
        int64_t b, e;
        part_range(n, parts, p, &b, &e);
        lo[p] = hi[p] = 0.f;
        widen_range(x + b, e - b, &lo[p], &hi[p], vector);
    });
    for (int64_t p = 1; p < parts; ++p) {
        lo[0] = lo[p] < lo[0] ? lo[p] : lo[0];
        hi[0] = hi[p] > hi[0] ? hi[p] : hi[0];
    }
    dynamic_qparams_of_range(lo[0], hi[0], scale, zero);
    const int32_t z = *zero;
    a.par->for_each(parts, [&](int64_t p, int) {
        int64_t b, e;
        part_range(n, parts, p, &b, &e);
        quantize_linear(x + b, 1, 1, e - b, scale, &z, false, y + b, vector);
    });
}

}  // namespace

const OpDef kDynQuantDef = {"dynquant",   validate_dynquant, no_scratch,
                            run_dynquant, kern::path_bytes,  kern::record_path};
const OpDef kQuantizeDef = {"quantize",   validate_quantize, no_scratch,
                            run_quantize, kern::path_bytes,  kern::record_path};
const OpDef kDequantizeDef = {"dequantize",   validate_dequantize, no_scratch,
                              run_dequantize, kern::path_bytes,    kern::record_path};
const OpDef kQActivationDef = {"qactivation",   validate_qactivation, no_scratch,
                               run_qactivation, table_bytes,          make_table};

}  // namespace accel_emu
