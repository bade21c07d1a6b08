// qmatmul.cc - qmatmul, qgemm and matmulinteger (FORMAT.md ops 30, 31, 39): quantized matrix products on the int8 GEMM
// (math/qgemm.h) in its "xw" form, each output row one row of A against the weights W = B transposed.
// A constant B is packed once at load with the requantization constants, in parts of its columns that a
// run splits across the core's threads (qgemm_split.h); a B computed at run time (an attention's second
// operand) is transposed and packed per product into the scratch, from the constants made at load, the
// batches split across the threads (each worker with its own scratch).
#include <algorithm>
#include <cstring>
#include <vector>

#include "math/exact_rounding.h"
#include "math/fixpoint.h"
#include "math/qgemm.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/qgemm_split.h"
#include "ops/quant_util.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "math/x86_intrinsics.h"
#endif

namespace accel_emu {
namespace {

using kern::align64;
using kern::cat;
using kern::fail;

// The product's shape: batch count of Y, and for each batch the offsets of its A and B matrices (numpy
// broadcasting of the batch dims), M, K, N. Ranks are promoted as numpy's matmul does.
struct Shape {
    int64_t M, K, N, batches;
    int r;                    // Y's batch rank
    int64_t yb[kMaxDims];     // Y's batch dims
    int64_t as[kMaxDims], bs[kMaxDims];  // A's and B's matrix strides per batch dim (0: broadcast)
};

Shape shape_of(const TensorDesc& a, const TensorDesc& b) {
    Shape s{};
    s.M = a.ndim >= 2 ? a.dims[a.ndim - 2] : 1;
    s.K = a.dims[a.ndim - 1];
    s.N = b.ndim >= 2 ? b.dims[b.ndim - 1] : 1;
    const int ra = a.ndim > 2 ? a.ndim - 2 : 0, rb = b.ndim > 2 ? b.ndim - 2 : 0;
    s.r = ra > rb ? ra : rb;
    int64_t sa = 1, sb = 1;
    s.batches = 1;
    for (int i = s.r - 1; i >= 0; --i) {
        const int ia = i - (s.r - ra), ib = i - (s.r - rb);
        const int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
        s.yb[i] = da > db ? da : db;
        s.as[i] = da == 1 ? 0 : sa;
        s.bs[i] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        s.batches *= s.yb[i];
    }
    return s;
}

// The matrix index of A and B for batch index `batch` of Y.
void batch_offsets(const Shape& s, int64_t batch, int64_t* ia, int64_t* ib) {
    *ia = 0, *ib = 0;
    for (int i = s.r - 1; i >= 0; --i) {
        const int64_t d = batch % s.yb[i];
        batch /= s.yb[i];
        *ia += d * s.as[i];
        *ib += d * s.bs[i];
    }
}

QGemmSpec size_spec(const TensorDesc& a, const TensorDesc& b, const TensorDesc& y, const Shape& s) {
    QGemmSpec q;
    q.M = s.N;
    q.K = s.K;
    q.w_signed = b.dtype == ACCEL_DTYPE_INT8;
    q.x_signed = a.dtype == ACCEL_DTYPE_INT8;
    q.out = y.dtype == ACCEL_DTYPE_FLOAT32 ? QOut::Float : QOut::Q8;
    q.y_signed = y.dtype == ACCEL_DTYPE_INT8;
    return q;
}

// What qmatmul and qgemm prepare: the code path chosen at load (a run-time B is packed for it), then per
// column n the multiplier, the weights' zero point and the bias (consts_bytes(N) in all), then a constant B
// packed.
// Under a device's rules (QOut::Fixed) the header's second int is 1, the third and fourth the output's
// bounds (a fused activation), and the columns' fixed-point requantizations follow.
struct Consts {
    int32_t* isa;
    int32_t* fixed_out;
    int32_t* y_bounds;
    float* scale;
    int32_t* w_zero;
    int32_t* bias;
    FixedRequant* fixed;
};
constexpr size_t kConstsHeader = 64;
Consts consts_at(void* base, int64_t N) {
    auto* isa = static_cast<int32_t*>(base);
    auto* f = reinterpret_cast<float*>(static_cast<uint8_t*>(base) + kConstsHeader);
    auto* i = reinterpret_cast<int32_t*>(f + N);
    return {isa, isa + 1, isa + 2, f, i, i + N, reinterpret_cast<FixedRequant*>(i + 2 * N)};
}

size_t consts_bytes(int64_t N) {
    return kConstsHeader +
           align64(static_cast<size_t>(N) * (sizeof(float) + 2 * sizeof(int32_t) + sizeof(FixedRequant)));
}

// Is B a constant 2-D (or 1-D) matrix, packed once at load for every row of A?
bool packed_at_load(const TensorDesc& b) { return b.kind == TensorKind::Constant && b.ndim <= 2; }

// The parts a constant B is packed in for `rows` rows of A.
int64_t split_of(const Shape& s) { return kern::split_count(s.N, s.K, s.M * s.batches); }

// The full spec of the product of shape s from the prepared constants.
QGemmSpec full_spec(const TensorDesc& a, const TensorDesc& b, const TensorDesc& y, const Shape& s,
                    const void* prepared) {
    QGemmSpec q = size_spec(a, b, y, s);
    const Consts c = consts_at(const_cast<void*>(prepared), s.N);
    q.x_zero = a.quant.zero_points[0];
    q.w_zero = c.w_zero;
    q.bias = c.bias;
    q.scale = c.scale;
    if (q.out == QOut::Q8) q.y_zero = y.quant.zero_points[0];
    if (q.out == QOut::Q8 && *c.fixed_out) {
        q.out = QOut::Fixed, q.fixed = c.fixed;
        q.y_min = c.y_bounds[0], q.y_max = c.y_bounds[1];
    }
    return q;
}

// ---- qmatmul ----

bool check_shapes(const char* op, const TensorDesc& a, const TensorDesc& b, const TensorDesc& y, std::string* err);

bool validate_qmatmul(const Graph& g, const Node& n, std::string* err) {
    const char* op = "qmatmul";
    if (!kern::check_common(g, n, err) || !kern::check_device_act(g, n, err) || !kern::check_fused_act(g, n, op, err))
        return false;
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    const auto pt = kern::QuantShape::PerTensor;
    if (!kern::check_quantized(a, op, "input A", pt, -1, false, err) ||
        !kern::check_quantized(b, op, "input B", kern::QuantShape::PerTensorOrAxis, b.ndim - 1, false, err) ||
        !kern::check_quantized(y, op, "output", pt, -1, false, err))
        return false;
    return check_shapes(op, a, b, y, err);
}

// Y's shape is numpy matmul's of A's and B's.
bool check_shapes(const char* op, const TensorDesc& a, const TensorDesc& b, const TensorDesc& y, std::string* err) {
    if (a.ndim < 1 || b.ndim < 1) return fail(err, op, "operands must have rank >= 1");
    const Shape s = shape_of(a, b);
    const int64_t kb = b.ndim >= 2 ? b.dims[b.ndim - 2] : b.dims[0];
    if (kb != s.K) return fail(err, op, cat("inner dims differ: A ", kern::dims_str(a), ", B ", kern::dims_str(b)));
    int64_t want[kMaxDims + 2];
    int r = 0;
    for (int i = 0; i < s.r; ++i) want[r++] = s.yb[i];
    if (a.ndim >= 2) want[r++] = s.M;
    if (b.ndim >= 2) want[r++] = s.N;
    bool ok = y.ndim == r;
    for (int i = 0; ok && i < r; ++i) ok = y.dims[i] == want[i];
    if (!ok)
        return fail(err, op,
                    cat("output shape ", kern::dims_str(y), " does not match A ", kern::dims_str(a), " x B ",
                        kern::dims_str(b)));
    for (int i = 0; i < s.r; ++i) {
        const int ia = i - (s.r - (a.ndim > 2 ? a.ndim - 2 : 0)), ib = i - (s.r - (b.ndim > 2 ? b.ndim - 2 : 0));
        const int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return fail(err, op,
                        cat("batch dims of A ", kern::dims_str(a), " and B ", kern::dims_str(b), " do not broadcast"));
    }
    return true;
}

size_t prepared_qmatmul(const Graph& g, const Node& n) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    const Shape s = shape_of(a, b);
    return consts_bytes(s.N) + (packed_at_load(b) ? kern::split_packed_bytes(size_spec(a, b, y, s), split_of(s)) : 0);
}

// Under rules whose GEMM requantizes with integers (a device's), the integer requantization of an int8
// output (qgemm's float output stays a float multiply).
void fill_consts(const Graph& g, const Node& n, const TensorDesc& a, const TensorDesc& b, const TensorDesc* y,
                 float alpha, const void* bias, int64_t N, void* out) {
    const Consts c = consts_at(out, N);
    *c.isa = static_cast<int32_t>(qisa_select());
    const QuantRules& rules = quant_rules(g);
    *c.fixed_out = rules.gemm_q8_out() == QOut::Fixed && y != nullptr;
    for (int64_t j = 0; j < N; ++j) {
        if (*c.fixed_out)
            rules.fixed_requant(n, a, b, static_cast<size_t>(j), *y, &c.fixed[j], &c.y_bounds[0], &c.y_bounds[1]);
        const size_t k = b.quant.scales.size() > 1 ? static_cast<size_t>(j) : 0;
        const float ab = (alpha * a.quant.scales[0]) * b.quant.scales[k];
        c.scale[j] = y ? ab / y->quant.scales[0] : ab;
        c.w_zero[j] = b.quant.zero_points[k];
        c.bias[j] = bias ? static_cast<const int32_t*>(bias)[j] : 0;
    }
}

// W[n][k] = B[k][n] of one K x N matrix, bytes.
void transpose_into(const uint8_t* b, int64_t K, int64_t N, uint8_t* w) {
    for (int64_t k = 0; k < K; ++k)
        for (int64_t j = 0; j < N; ++j) w[j * K + k] = b[k * N + j];
}

// Bytes of scratch per_b_product takes before the GEMM's own: B's transpose and its packed form.
size_t per_b_scratch(const Shape& s, const QGemmSpec& spec) {
    return align64(static_cast<size_t>(s.N * s.K)) + kern::qgemm_packed_max(spec);
}

// The products of a B computed at run time: for each batch of Y, its B transposed and packed into the
// worker's scratch (`seen(transposed B, that scratch)` first), then run(batch, A's batch index, packed B,
// the rest of the scratch), which starts per_b_scratch(s, spec) bytes in plus `extra` the caller keeps
// there. The batches split across the core's threads (shapes only; each batch is computed whole by one).
template <class Seen, class Run>
void per_b_product(const KernelArgs& a, const Shape& s, const uint8_t* B, QIsa isa, const QGemmSpec& spec, Seen seen,
                   Run run, size_t extra = 0) {
    const int64_t parts = split_parts(s.batches, s.batches * s.M * s.N * s.K, kMinMacsPerPart);
    a.par->for_ranges(s.batches, parts, [&](int64_t b0, int64_t b1, int worker) {
        auto* scratch = static_cast<uint8_t*>(a.scratch_for(worker));
        uint8_t* wt = scratch;
        uint8_t* packed = wt + align64(static_cast<size_t>(s.N * s.K));
        void* rest = scratch + per_b_scratch(s, spec) + extra;
        for (int64_t i = b0; i < b1; ++i) {
            int64_t ia, ib;
            batch_offsets(s, i, &ia, &ib);
            transpose_into(B + ib * s.K * s.N, s.K, s.N, wt);
            seen(wt, scratch);
            qgemm_pack(isa, spec, wt, packed);
            run(i, ia, packed, rest, scratch);
        }
    });
}

void prepare_qmatmul(const Graph& g, const Node& n, const void* const* in, void* out) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    const Shape s = shape_of(a, b);
    // QLinearMatMul's multiplier is (s_A * s_B) / s_Y: alpha 1 keeps that product exact.
    fill_consts(g, n, a, b, &y, 1.f, nullptr, s.N, out);
    if (!packed_at_load(b)) return;
    std::vector<uint8_t> w(static_cast<size_t>(s.N * s.K));
    transpose_into(static_cast<const uint8_t*>(in[1]), s.K, s.N, w.data());
    kern::split_pack(QIsa(*consts_at(out, s.N).isa), full_spec(a, b, y, s, out), w.data(), split_of(s),
                     static_cast<uint8_t*>(out) + consts_bytes(s.N));
}

size_t scratch_qmatmul(const Graph& g, const Node& n) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    const Shape s = shape_of(a, b);
    const QGemmSpec q = size_spec(a, b, y, s);
    if (packed_at_load(b)) return kern::split_scratch_bytes(q, split_of(s), s.M * s.batches);
    return per_b_scratch(s, q) + kern::qgemm_scratch_max(q, s.M);  // a B packed per product
}

void run_qmatmul(const KernelArgs& a) {
    const TensorDesc &ad = kern::in_desc(a, 0), &bd = kern::in_desc(a, 1);
    const Shape s = shape_of(ad, bd);
    const auto* A = static_cast<const uint8_t*>(a.in[0]);
    auto* Y = static_cast<uint8_t*>(a.out[0]);
    if (packed_at_load(bd)) {  // A's rows, batches included, are one run against the one B
        const void* w = static_cast<const uint8_t*>(a.prepared) + consts_bytes(s.N);
        kern::split_xw(a, w, s.N, s.K, s.M * s.batches, A, s.K, Y, s.N, 1, 0, [](int64_t, int64_t) {});
        return;
    }
    const QGemmSpec spec = full_spec(ad, bd, kern::out_desc(a, 0), s, a.prepared);
    const QIsa isa = QIsa(*consts_at(const_cast<void*>(a.prepared), s.N).isa);
    per_b_product(
        a, s, static_cast<const uint8_t*>(a.in[1]), isa, spec, [](const uint8_t*, uint8_t*) {},
        [&](int64_t i, int64_t ia, const void* packed, void* rest, uint8_t*) {
            qgemm_xw(packed, s.M, A + ia * s.M * s.K, s.K, Y + i * s.M * s.N, s.N, rest);
        });
}

// ---- qgemm ----

bool validate_qgemm(const Graph& g, const Node& n, std::string* err) {
    const char* op = "qgemm";
    if (!kern::check_common(g, n, err) || !kern::check_device_act(g, n, err) || !kern::check_fused_act(g, n, op, err))
        return false;
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    const TensorDesc* c = kern::input(g, n, 2);
    const QGemmParams p = QGemmParams::of(n);
    if ((p.trans_a != 0 && p.trans_a != 1) || (p.trans_b != 0 && p.trans_b != 1))
        return fail(err, op, cat("trans_a ", p.trans_a, " and trans_b ", p.trans_b, " must be 0 or 1"));
    if (!quant_rules(g).takes_gemm_alpha() && p.alpha != 1.f)
        return fail(err, op, cat("alpha ", p.alpha, " is not 1, which the devices' int8 rules need"));
    if (a.ndim != 2 || b.ndim != 2 || y.ndim != 2)
        return fail(
            err, op,
            cat("A ", kern::dims_str(a), ", B ", kern::dims_str(b), " and Y ", kern::dims_str(y), " must be 2-D"));
    const auto pt = kern::QuantShape::PerTensor;
    if (!kern::check_quantized(a, op, "input A", pt, -1, false, err) ||
        !kern::check_quantized(b, op, "input B", kern::QuantShape::PerTensorOrAxis, p.trans_b ? 0 : 1, false, err))
        return false;
    if (b.kind != TensorKind::Constant) return fail(err, op, "input B is not a constant");
    if (y.dtype != ACCEL_DTYPE_FLOAT32 && !kern::check_quantized(y, op, "output", pt, -1, false, err)) return false;
    const int64_t M = p.trans_a ? a.dims[1] : a.dims[0], K = p.trans_a ? a.dims[0] : a.dims[1];
    const int64_t K2 = p.trans_b ? b.dims[1] : b.dims[0], N = p.trans_b ? b.dims[0] : b.dims[1];
    if (K != K2) return fail(err, op, cat("inner dims differ: A ", kern::dims_str(a), ", B ", kern::dims_str(b)));
    if (y.dims[0] != M || y.dims[1] != N)
        return fail(err, op, cat("output shape ", kern::dims_str(y), " should be [", M, ",", N, "]"));
    if (c) {
        if (c->kind != TensorKind::Constant || c->dtype != ACCEL_DTYPE_INT32)
            return fail(err, op, cat("C '", c->name, "' is not a constant int32 tensor"));
        if (c->numel != N && c->numel != 1)
            return fail(err, op, cat("C ", kern::dims_str(*c), " is not one value per output column (", N, ")"));
    }
    return true;
}

// A qgemm as the matmul it is: A [M,K] against W [N,K].
Shape gemm_shape(const Graph& g, const Node& n) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1);
    const QGemmParams p = QGemmParams::of(n);
    Shape s{};
    s.M = p.trans_a ? a.dims[1] : a.dims[0];
    s.K = p.trans_a ? a.dims[0] : a.dims[1];
    s.N = p.trans_b ? b.dims[0] : b.dims[1];
    s.batches = 1;
    return s;
}

size_t prepared_qgemm(const Graph& g, const Node& n) {
    const Shape s = gemm_shape(g, n);
    return consts_bytes(s.N) +
           kern::split_packed_bytes(size_spec(*kern::input(g, n, 0), *kern::input(g, n, 1), kern::output(g, n, 0), s),
                                    split_of(s));
}

void prepare_qgemm(const Graph& g, const Node& n, const void* const* in, void* out) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    const Shape s = gemm_shape(g, n);
    const QGemmParams p = QGemmParams::of(n);
    std::vector<int32_t> bias;
    const TensorDesc* c = kern::input(g, n, 2);
    if (c) bias.assign(static_cast<size_t>(s.N), *static_cast<const int32_t*>(in[2]));
    if (c && c->numel == s.N) std::memcpy(bias.data(), in[2], static_cast<size_t>(s.N) * sizeof(int32_t));
    fill_consts(g, n, a, b, y.dtype == ACCEL_DTYPE_FLOAT32 ? nullptr : &y, p.alpha, c ? bias.data() : nullptr, s.N,
                out);
    std::vector<uint8_t> w;
    const auto* bw = static_cast<const uint8_t*>(in[1]);
    if (!p.trans_b) {
        w.resize(static_cast<size_t>(s.N * s.K));
        transpose_into(bw, s.K, s.N, w.data());
        bw = w.data();
    }
    kern::split_pack(QIsa(*consts_at(out, s.N).isa), full_spec(a, b, y, s, out), bw, split_of(s),
                     static_cast<uint8_t*>(out) + consts_bytes(s.N));
}

size_t scratch_qgemm(const Graph& g, const Node& n) {
    const Shape s = gemm_shape(g, n);
    const QGemmSpec q = size_spec(*kern::input(g, n, 0), *kern::input(g, n, 1), kern::output(g, n, 0), s);
    const size_t run = kern::split_scratch_bytes(q, split_of(s), s.M);
    // trans_a: A's transpose first (worker 0's scratch, which every worker reads; each skips as many bytes).
    return (QGemmParams::of(n).trans_a ? align64(static_cast<size_t>(s.M * s.K)) : 0) + run;
}

void run_qgemm(const KernelArgs& a) {
    const Shape s = gemm_shape(*a.graph, *a.node);
    const auto* A = static_cast<const uint8_t*>(a.in[0]);
    size_t skip = 0;
    if (QGemmParams::of(*a.node).trans_a) {
        auto* at = static_cast<uint8_t*>(a.scratch);
        transpose_into(A, s.K, s.M, at);
        A = at;
        skip = align64(static_cast<size_t>(s.M * s.K));
    }
    const int64_t elem = kern::output(*a.graph, *a.node, 0).dtype == ACCEL_DTYPE_FLOAT32 ? 4 : 1;
    kern::split_xw(a, static_cast<const uint8_t*>(a.prepared) + consts_bytes(s.N), s.N, s.K, s.M, A, s.K, a.out[0], s.N,
                   elem, skip, [](int64_t, int64_t) {});
}

// A's zero point (input ia): one value of A's dtype; B's (input ib): a constant of B's dtype, one value or one
// per column. matmulinteger's and matmulintegerf's.
bool check_zero_points(const Graph& g, const Node& n, const char* op, size_t ia, size_t ib, std::string* err) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1);
    const TensorDesc *az = kern::input(g, n, ia), *bz = kern::input(g, n, ib);
    if (az && (az->dtype != a.dtype || az->numel != 1))
        return fail(err, op, cat("A's zero point '", az->name, "' is not one value of A's dtype"));
    const int64_t N = b.ndim >= 2 ? b.dims[b.ndim - 1] : 1;
    if (bz && (bz->dtype != b.dtype || bz->kind != TensorKind::Constant || (bz->numel != 1 && bz->numel != N)))
        return fail(err, op,
                    cat("B's zero point '", bz->name, "' is not a constant of B's dtype with 1 or ", N, " values"));
    return true;
}

// ---- matmulinteger ----
//
// The GEMM runs with A's zero point 0 (A's zero point may be known only at run time, from a dynquant), and
// the run subtracts A_zero * R[n] from each sum, R[n] = sum_k (B[k][n] - B_zero[n]): the same integers.

bool validate_matmulinteger(const Graph& g, const Node& n, std::string* err) {
    const char* op = "matmulinteger";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    if (!kern::is_q8(a) || !kern::is_q8(b) || y.dtype != ACCEL_DTYPE_INT32)
        return fail(err, op, "takes int8 or uint8 A and B and gives int32 Y");
    return check_shapes(op, a, b, y, err) && check_zero_points(g, n, op, 2, 3, err);
}

// y[r][n] -= x_zero * R[n] over `rows` rows of N, columns [n0, n1), in uint32 (exact modulo 2^32).
void subtract_zero(int32_t* y, int64_t rows, int64_t N, int64_t n0, int64_t n1, int32_t x_zero, const int32_t* R) {
    if (x_zero == 0) return;
    const auto z = static_cast<uint32_t>(x_zero);
    for (int64_t r = 0; r < rows; ++r) {
        auto* row = reinterpret_cast<uint32_t*>(y + r * N);
        for (int64_t j = n0; j < n1; ++j) row[j] -= z * static_cast<uint32_t>(R[j]);
    }
}

// A's zero point, input i (0 when absent).
int32_t a_zero_of(const KernelArgs& a, size_t i) {
    if (a.node->inputs.size() <= i || a.node->inputs[i] == kAbsent) return 0;
    return kern::q8_at(kern::in_desc(a, i), a.in[i], 0);
}

// [isa][R: N int32][B_zero: N int32] then the packed B (constant 2-D B).
QGemmSpec integer_spec(const TensorDesc& a, const TensorDesc& b, const Shape& s) {
    QGemmSpec q;
    q.M = s.N;
    q.K = s.K;
    q.w_signed = b.dtype == ACCEL_DTYPE_INT8;
    q.x_signed = a.dtype == ACCEL_DTYPE_INT8;
    q.out = QOut::Int32;
    return q;
}

size_t integer_consts_bytes(int64_t N) { return kConstsHeader + align64(static_cast<size_t>(N) * 8); }

size_t prepared_matmulinteger(const Graph& g, const Node& n) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1);
    const Shape s = shape_of(a, b);
    return integer_consts_bytes(s.N) +
           (packed_at_load(b) ? kern::split_packed_bytes(integer_spec(a, b, s), split_of(s)) : 0);
}

// What matmulinteger and matmulintegerf prepare, B's zero point their input bz_at.
void prepare_integer(const Graph& g, const Node& n, const void* const* in, void* out, size_t bz_at) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1);
    const TensorDesc* bz = kern::input(g, n, bz_at);
    const Shape s = shape_of(a, b);
    auto* head = static_cast<int32_t*>(out);
    head[0] = static_cast<int32_t>(qisa_select());
    int32_t* R = reinterpret_cast<int32_t*>(static_cast<uint8_t*>(out) + kConstsHeader);
    int32_t* zeros = R + s.N;
    for (int64_t j = 0; j < s.N; ++j) zeros[j] = bz ? kern::q8_at(*bz, in[bz_at], bz->numel == 1 ? 0 : j) : 0;
    if (!packed_at_load(b)) return;
    std::vector<uint8_t> w(static_cast<size_t>(s.N * s.K));
    transpose_into(static_cast<const uint8_t*>(in[1]), s.K, s.N, w.data());
    kern::weight_row_sums(w.data(), b.dtype == ACCEL_DTYPE_INT8, zeros, s.N, s.K, R);
    QGemmSpec q = integer_spec(a, b, s);
    q.w_zero = zeros;
    kern::split_pack(QIsa(head[0]), q, w.data(), split_of(s), static_cast<uint8_t*>(out) + integer_consts_bytes(s.N));
}

void prepare_matmulinteger(const Graph& g, const Node& n, const void* const* in, void* out) {
    prepare_integer(g, n, in, out, 3);
}

size_t scratch_matmulinteger(const Graph& g, const Node& n) {
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1);
    const Shape s = shape_of(a, b);
    const QGemmSpec q = integer_spec(a, b, s);
    if (packed_at_load(b)) return kern::split_scratch_bytes(q, split_of(s), s.M * s.batches);
    // Per product: B's transpose and packed form, its row sums, then the GEMM's scratch.
    return per_b_scratch(s, q) + align64(static_cast<size_t>(s.N) * 4) + kern::qgemm_scratch_max(q, s.M);
}

void run_matmulinteger(const KernelArgs& a) {
    const TensorDesc &ad = kern::in_desc(a, 0), &bd = kern::in_desc(a, 1);
    const Shape s = shape_of(ad, bd);
    const auto* A = static_cast<const uint8_t*>(a.in[0]);
    auto* Y = static_cast<int32_t*>(a.out[0]);
    const auto* consts = static_cast<const uint8_t*>(a.prepared);
    const auto* R = reinterpret_cast<const int32_t*>(consts + kConstsHeader);
    const int32_t xz = a_zero_of(a, 2);
    if (packed_at_load(bd)) {
        const int64_t rows = s.M * s.batches;
        kern::split_xw(a, consts + integer_consts_bytes(s.N), s.N, s.K, rows, A, s.K, Y, s.N, 4, 0,
                       [&](int64_t n0, int64_t n1) { subtract_zero(Y, rows, s.N, n0, n1, xz, R); });
        return;
    }
    QGemmSpec q = integer_spec(ad, bd, s);
    q.w_zero = R + s.N;
    // The row sums of each product's B, in the worker's scratch after per_b_product's part of it.
    const size_t sums_at = per_b_scratch(s, q);
    per_b_product(
        a, s, static_cast<const uint8_t*>(a.in[1]), QIsa(*reinterpret_cast<const int32_t*>(consts)), q,
        [&](const uint8_t* wt, uint8_t* scratch) {
            kern::weight_row_sums(wt, bd.dtype == ACCEL_DTYPE_INT8, q.w_zero, s.N, s.K,
                                  reinterpret_cast<int32_t*>(scratch + sums_at));
        },
        [&](int64_t i, int64_t ia, const void* packed, void* rest, uint8_t* scratch) {
            qgemm_xw(packed, s.M, A + ia * s.M * s.K, s.K, Y + i * s.M * s.N, s.N, rest);
            subtract_zero(Y + i * s.M * s.N, s.M, s.N, 0, s.N, xz, reinterpret_cast<const int32_t*>(scratch + sums_at));
        },
        align64(static_cast<size_t>(s.N) * 4));
}

// ---- matmulintegerf ----
//
// matmulinteger with a constant B and the epilogue of MatMulIntegerToFloat: each part of the product
// (qgemm_split.h) writes its int32 sums into Y's own bytes, then turns them into floats while they are
// still in cache. Inputs: A, B, S, A_zero, B_zero, C.

bool validate_matmulintegerf(const Graph& g, const Node& n, std::string* err) {
    const char* op = "matmulintegerf";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc &a = *kern::input(g, n, 0), &b = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    if (!kern::is_q8(a) || !kern::is_q8(b) || y.dtype != ACCEL_DTYPE_FLOAT32)
        return fail(err, op, "takes int8 or uint8 A and B and gives float32 Y");
    if (!packed_at_load(b)) return fail(err, op, cat("B '", b.name, "' is not a constant of rank 1 or 2"));
    if (!check_shapes(op, a, b, y, err)) return false;
    if (!check_zero_points(g, n, op, 3, 4, err)) return false;
    const int64_t N = b.ndim >= 2 ? b.dims[b.ndim - 1] : 1;
    for (size_t i : {size_t{2}, size_t{5}}) {
        const TensorDesc* t = kern::input(g, n, i);
        if (t && (t->dtype != ACCEL_DTYPE_FLOAT32 || (t->numel != 1 && t->numel != N)))
            return fail(err, op, cat(i == 2 ? "S '" : "C '", t->name, "' is not float32 with 1 or ", N, " values"));
    }
    return true;
}

void prepare_matmulintegerf(const Graph& g, const Node& n, const void* const* in, void* out) {
    prepare_integer(g, n, in, out, 4);
}

// Rows of Y's columns [n0, n1), holding the GEMM's sums (A's zero point not yet taken off): y = float32(acc
// - x_zero * R[n]) * S + C, S and C one value (kOne) or one per column (kCol), C possibly none (kNone);
// one loop per form, so that each vectorizes.
enum Form { kOne, kCol, kNone };
template <Form SF, Form CF>
void float_epilogue(float* Y, int64_t rows, int64_t N, int64_t n0, int64_t n1, int32_t x_zero, const int32_t* R,
                    const float* S, const float* C) {
    const auto z = static_cast<uint32_t>(x_zero);
    for (int64_t r = 0; r < rows; ++r) {
        float* y = Y + r * N;
        for (int64_t j = n0; j < n1; ++j) {
            uint32_t v;
            std::memcpy(&v, y + j, sizeof v);
            const float f = static_cast<float>(static_cast<int32_t>(v - z * static_cast<uint32_t>(R[j]))) *
                            (SF == kOne ? S[0] : S[j]);
            y[j] = CF == kNone ? f : f + (CF == kOne ? C[0] : C[j]);
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
// float_epilogue with AVX-512 (the VNNI and AMX paths): the same integer steps, conversion (round to
// nearest even) and two float32 roundings, 16 columns at a time.
__attribute__((target("avx512f"))) void float_epilogue_avx512(float* Y, int64_t rows, int64_t N, int64_t n0, int64_t n1,
                                                              int32_t x_zero, const int32_t* R, const float* S,
                                                              bool s_col, const float* C, bool c_col) {
    const __m512i z = _mm512_set1_epi32(x_zero);
    const __m512 s1 = _mm512_set1_ps(S[0]), c1 = _mm512_set1_ps(C ? C[0] : 0.f);
    for (int64_t r = 0; r < rows; ++r) {
        float* y = Y + r * N;
        for (int64_t j = n0; j < n1; j += 16) {
            const __mmask16 m = n1 - j >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n1 - j)) - 1);
            __m512i v = _mm512_maskz_loadu_epi32(m, y + j);
            v = _mm512_sub_epi32(v, _mm512_mullo_epi32(z, _mm512_maskz_loadu_epi32(m, R + j)));
            __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(v), s_col ? _mm512_maskz_loadu_ps(m, S + j) : s1);
            if (C) f = _mm512_add_ps(f, c_col ? _mm512_maskz_loadu_ps(m, C + j) : c1);
            _mm512_mask_storeu_ps(y + j, m, f);
        }
    }
}
#endif

void run_matmulintegerf(const KernelArgs& a) {
    const Shape s = shape_of(kern::in_desc(a, 0), kern::in_desc(a, 1));
    const auto* A = static_cast<const uint8_t*>(a.in[0]);
    float* Y = kern::out_f(a, 0);
    const auto* consts = static_cast<const uint8_t*>(a.prepared);
    const auto* R = reinterpret_cast<const int32_t*>(consts + kConstsHeader);
    const int32_t xz = a_zero_of(a, 3);
    const float* S = kern::in_f(a, 2);
    const bool s_col = kern::in_desc(a, 2).numel != 1;
    const bool has_c = a.node->inputs.size() > 5 && a.node->inputs[5] != kAbsent;
    const float* C = has_c ? kern::in_f(a, 5) : nullptr;
    const Form cf = !has_c ? kNone : kern::in_desc(a, 5).numel == 1 ? kOne : kCol;
    const int64_t rows = s.M * s.batches, N = s.N;
    const bool vector = qisa_avx512(static_cast<QIsa>(*reinterpret_cast<const int32_t*>(consts)));
    kern::split_xw(a, consts + integer_consts_bytes(N), N, s.K, rows, A, s.K, Y, N, 4, 0, [&](int64_t n0, int64_t n1) {
#if defined(__x86_64__) && defined(__GNUC__)
        if (vector) {
            float_epilogue_avx512(Y, rows, N, n0, n1, xz, R, S, s_col, C, cf == kCol);
            return;
        }
#endif
        (void)vector;
        auto* e = s_col ? (cf == kNone  ? float_epilogue<kCol, kNone>
                           : cf == kOne ? float_epilogue<kCol, kOne>
                                        : float_epilogue<kCol, kCol>)
                        : (cf == kNone  ? float_epilogue<kOne, kNone>
                           : cf == kOne ? float_epilogue<kOne, kOne>
                                        : float_epilogue<kOne, kCol>);
        e(Y, rows, N, n0, n1, xz, R, S, C);
    });
}

}  // namespace

const OpDef kMatMulIntegerFDef = {"matmulintegerf",   validate_matmulintegerf, scratch_matmulinteger,
                                  run_matmulintegerf, prepared_matmulinteger,  prepare_matmulintegerf};
const OpDef kMatMulIntegerDef = {"matmulinteger",   validate_matmulinteger, scratch_matmulinteger,
                                 run_matmulinteger, prepared_matmulinteger, prepare_matmulinteger};
const OpDef kQMatMulDef = {"qmatmul",   validate_qmatmul, scratch_qmatmul,
                           run_qmatmul, prepared_qmatmul, prepare_qmatmul};
const OpDef kQGemmDef = {"qgemm", validate_qgemm, scratch_qgemm, run_qgemm, prepared_qgemm, prepare_qgemm};

}  // namespace accel_emu
