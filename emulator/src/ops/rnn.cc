// rnn.cc - ONNX RNN, GRU and LSTM (FORMAT.md op rnn): shapes, parameters and constants checked at load;
// the recurrence is math/rnn.cc. Quantized weights are packed for the int8 GEMM at load.
#include <algorithm>
#include <vector>

#include "math/exact_rounding.h"
#include "math/rnn.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/quant_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "rnn";

// Input positions.
enum { kX, kW, kR, kB, kL, kH0, kC0, kP, kA, kWS, kRS, kInputs };

struct Geometry { int64_t S, N, I, H, D, G; };

bool is_q8(const TensorDesc& t) { return t.dtype == ACCEL_DTYPE_INT8 || t.dtype == ACCEL_DTYPE_UINT8; }

Geometry geometry_of(const Graph& g, const Node& n) {
    const RnnParams p = RnnParams::of(n);
    const TensorDesc& x = *kern::input(g, n, kX);
    const TensorDesc& r = *kern::input(g, n, kR);
    Geometry m{};
    m.S = p.layout == 1 ? x.dims[1] : x.dims[0];
    m.N = p.layout == 1 ? x.dims[0] : x.dims[1];
    m.I = x.dims[2];
    m.H = is_q8(*kern::input(g, n, kW)) ? r.dims[1] : r.dims[2];  // quantized R is [D,H,G*H]
    m.D = p.direction == RnnDirection::Bidirectional ? 2 : 1;
    m.G = rnn_gates(p.cell);
    return m;
}

int popcount3(int64_t v) { return static_cast<int>((v & 1) + ((v >> 1) & 1) + ((v >> 2) & 1)); }

bool check_dims(const TensorDesc& t, std::initializer_list<int64_t> want, const char* what, std::string* err) {
    bool ok = t.ndim == static_cast<int>(want.size());
    int i = 0;
    for (int64_t w : want) {
        if (!ok) break;
        ok = t.dims[i++] == w;
    }
    if (ok) return true;
    std::string s = "[";
    i = 0;
    for (int64_t w : want) s += kern::cat(i++ ? "," : "", w);
    return kern::fail(err, kOp, kern::cat(what, " shape ", kern::dims_str(t), " should be ", s, "]"));
}

bool check_f32(const TensorDesc& t, const char* what, std::string* err) {
    if (t.dtype == ACCEL_DTYPE_FLOAT32) return true;
    return kern::fail(err, kOp, kern::cat(what, " dtype ", t.dtype, " is not float32"));
}

bool check_const(const TensorDesc& t, const char* what, std::string* err) {
    if (t.kind == TensorKind::Constant) return true;
    return kern::fail(err, kOp, kern::cat(what, " must be a constant"));
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    const RnnParams p = RnnParams::of(n);
    if (p.outputs < 1 || p.outputs > 7) return fail(err, kOp, cat("outputs mask ", p.outputs, " is not 1..7"));
    // Narrower than the contract (one to three outputs): the outputs mask fixes the count.
    if (!kern::check_common(g, n, kOp, {3, kInputs, 3, static_cast<size_t>(popcount3(p.outputs))}, kern::DTypeRule::Any,
                            kern::ActRule::MustBeNone, err))
        return false;
    const int64_t cell = static_cast<int64_t>(p.cell), dir = static_cast<int64_t>(p.direction);
    if (cell < 0 || cell > 2) return fail(err, kOp, cat("cell ", cell, " is not 0 (rnn), 1 (gru) or 2 (lstm)"));
    if (dir < 0 || dir > 2) return fail(err, kOp, cat("direction ", dir, " is not 0, 1 or 2"));
    if (p.layout != 0 && p.layout != 1) return fail(err, kOp, cat("layout ", p.layout, " is not 0 or 1"));
    const bool lstm = p.cell == RnnCell::Lstm, gru = p.cell == RnnCell::Gru;
    if (p.input_forget != 0 && !(lstm && p.input_forget == 1))
        return fail(err, kOp, cat("input_forget ", p.input_forget, " is not 0 (or 1 for an LSTM)"));
    if (p.linear_before_reset != 0 && !(gru && p.linear_before_reset == 1))
        return fail(err, kOp, cat("linear_before_reset ", p.linear_before_reset, " is not 0 (or 1 for a GRU)"));
    if ((p.outputs & 4) && !lstm) return fail(err, kOp, "only an LSTM has the output Y_c");
    if (!(p.clip >= 0.f)) return fail(err, kOp, cat("clip ", p.clip, " is not >= 0"));
    const TensorDesc& x = *kern::input(g, n, kX);
    const TensorDesc& w = *kern::input(g, n, kW);
    const TensorDesc& r = *kern::input(g, n, kR);
    const bool quantized = is_q8(w);
    if (!check_f32(x, "X", err)) return false;
    if (quantized) {
        if (!lstm) return fail(err, kOp, "quantized weights are for an LSTM only");
        if (!is_q8(r)) return fail(err, kOp, cat("R dtype ", r.dtype, " is not int8 or uint8 as W's"));
        if (p.layout != 0) return fail(err, kOp, "quantized weights need layout 0");
    } else if (!check_f32(w, "W", err) || !check_f32(r, "R", err)) {
        return false;
    }
    if (x.ndim != 3) return fail(err, kOp, cat("X rank ", x.ndim, " is not 3"));
    if (r.ndim != 3) return fail(err, kOp, cat("R rank ", r.ndim, " is not 3"));
    const Geometry m = geometry_of(g, n);
    int64_t gh;
    if (!kern::mul_ok(m.G, m.H, &gh)) return fail(err, kOp, "hidden size overflows");
    if (quantized) {
        if (!check_dims(w, {m.D, m.I, gh}, "W", err) || !check_dims(r, {m.D, m.H, gh}, "R", err)) return false;
        for (int d = 0; d < 2; ++d) {
            const int64_t zw = p.w_zero[d], zr = p.r_zero[d];
            const auto in_range = [&](int64_t z, const TensorDesc& t) {
                return d < m.D ? (t.dtype == ACCEL_DTYPE_INT8 ? z >= -128 && z <= 127 : z >= 0 && z <= 255) : z == 0;
            };
            if (!in_range(zw, w) || !in_range(zr, r))
                return fail(err, kOp, cat("zero points ", zw, ", ", zr, " of direction ", d, " outside their range"));
        }
        const TensorDesc* ws = kern::input(g, n, kWS);
        const TensorDesc* rs = kern::input(g, n, kRS);
        if (!ws || !rs) return fail(err, kOp, "quantized weights need the scales WS and RS");
        if (!check_f32(*ws, "WS", err) || !check_dims(*ws, {m.D, gh}, "WS", err) || !check_const(*ws, "WS", err) ||
            !check_f32(*rs, "RS", err) || !check_dims(*rs, {m.D, gh}, "RS", err) || !check_const(*rs, "RS", err))
            return false;
    } else {
        if (!check_dims(w, {m.D, gh, m.I}, "W", err) || !check_dims(r, {m.D, gh, m.H}, "R", err)) return false;
        if (kern::input(g, n, kWS) || kern::input(g, n, kRS))
            return fail(err, kOp, "scales WS and RS are for quantized weights only");
        for (int d = 0; d < 2; ++d)
            if (p.w_zero[d] != 0 || p.r_zero[d] != 0) return fail(err, kOp, "zero points need quantized weights");
    }
    if (!check_const(w, "W", err) || !check_const(r, "R", err)) return false;
    if (const TensorDesc* b = kern::input(g, n, kB)) {
        if (!check_f32(*b, "B", err) || !check_dims(*b, {m.D, 2 * gh}, "B", err) || !check_const(*b, "B", err))
            return false;
    }
    if (const TensorDesc* l = kern::input(g, n, kL)) {
        if (l->dtype != ACCEL_DTYPE_INT32)
            return fail(err, kOp, cat("sequence_lens dtype ", l->dtype, " is not int32"));
        if (!check_dims(*l, {m.N}, "sequence_lens", err)) return false;
    }
    const bool bf = p.layout == 1;
    const auto state = [&](const TensorDesc& t, const char* what) {
        return check_f32(t, what, err) &&
               (bf ? check_dims(t, {m.N, m.D, m.H}, what, err) : check_dims(t, {m.D, m.N, m.H}, what, err));
    };
    if (const TensorDesc* h0 = kern::input(g, n, kH0))
        if (!state(*h0, "initial_h")) return false;
    if (const TensorDesc* c0 = kern::input(g, n, kC0)) {
        if (!lstm) return fail(err, kOp, "only an LSTM has the input initial_c");
        if (!state(*c0, "initial_c")) return false;
    }
    if (const TensorDesc* pp = kern::input(g, n, kP)) {
        if (!lstm) return fail(err, kOp, "only an LSTM has peepholes P");
        if (!check_f32(*pp, "P", err) || !check_dims(*pp, {m.D, 3 * m.H}, "P", err) || !check_const(*pp, "P", err))
            return false;
    }
    if (const TensorDesc* a = kern::input(g, n, kA)) {
        if (!check_f32(*a, "activation parameters A", err) || !check_dims(*a, {m.D, 3, 2}, "A", err) ||
            !check_const(*a, "A", err))
            return false;
    }
    const int used = lstm ? 3 : gru ? 2 : 1;
    for (int d = 0; d < 2; ++d)
        for (int k = 0; k < 3; ++k) {
            const int64_t code = p.acts[d * 3 + k];
            const bool want = d < m.D && k < used;
            if (want && (code == 0 || code < 0 || code > UINT32_MAX || !valid_activation(static_cast<uint32_t>(code))))
                return fail(err, kOp, cat("activation ", d * 3 + k, " code ", code, " is not a known activation"));
            if (!want && code != 0) return fail(err, kOp, cat("activation ", d * 3 + k, " is unused and must be 0"));
        }
    size_t out = 0;
    const char* names[3] = {"Y", "Y_h", "Y_c"};
    for (int k = 0; k < 3; ++k) {
        if (!(p.outputs & (int64_t(1) << k))) continue;
        const TensorDesc& y = kern::output(g, n, out++);
        if (!check_f32(y, names[k], err)) return false;
        if (k == 0) {
            if (!(bf ? check_dims(y, {m.N, m.S, m.D, m.H}, "Y", err) : check_dims(y, {m.S, m.D, m.N, m.H}, "Y", err)))
                return false;
        } else if (!state(y, names[k])) {
            return false;
        }
    }
    int64_t rows, proj, total;
    if (!kern::mul_ok(m.S, m.N, &rows) || rows > kern::kBlasIntMax || gh > kern::kBlasIntMax ||
        m.I > kern::kBlasIntMax || !kern::mul_ok(rows, gh, &proj))
        return fail(err, kOp, cat("sizes S*N ", m.S, "*", m.N, ", G*H ", gh, " exceed the BLAS int range"));
    int64_t extra;  // the recurrent product, up to three states and the quantized path's buffers
    int64_t xs;
    if (!kern::mul_ok(8 * m.N + 8, gh, &extra) || !kern::mul_ok(rows, m.I, &xs) || !kern::add_ok(extra, xs, &extra) ||
        !kern::add_ok(proj, extra, &total) || total > static_cast<int64_t>(kern::kMaxScratchBytes / sizeof(float)))
        return fail(err, kOp, "scratch memory would exceed the format's limit");
    return true;
}

RnnSpec spec_of(const Graph& g, const Node& n) {
    const RnnParams p = RnnParams::of(n);
    const Geometry m = geometry_of(g, n);
    RnnSpec s{};
    s.cell = p.cell;
    s.S = m.S, s.N = m.N, s.I = m.I, s.H = m.H, s.D = m.D;
    s.reverse = p.direction == RnnDirection::Reverse;
    s.batch_first = p.layout == 1;
    s.input_forget = p.input_forget != 0;
    s.linear_before_reset = p.linear_before_reset != 0;
    s.clip = p.clip;
    const TensorDesc& w = *kern::input(g, n, kW);
    s.quantized = is_q8(w);
    s.w_signed = w.dtype == ACCEL_DTYPE_INT8;
    s.r_signed = kern::input(g, n, kR)->dtype == ACCEL_DTYPE_INT8;
    for (int d = 0; d < 2; ++d)
        s.w_zero[d] = static_cast<int32_t>(p.w_zero[d]), s.r_zero[d] = static_cast<int32_t>(p.r_zero[d]);
    for (int d = 0; d < 2; ++d)
        for (int k = 0; k < 3; ++k) s.act[d][k] = static_cast<Act>(p.acts[d * 3 + k]);
    return s;
}

// What a quantized LSTM prepares: per direction W and R packed for the int8 GEMM on the path chosen at load
// (the packed forms record it) and their row sums (math/rnn.h, RnnPacked); each part 64-byte aligned.
struct PackedLayout { size_t w_bytes, r_bytes, w_sums, r_sums, direction; };
PackedLayout packed_layout(const RnnSpec& s) {
    PackedLayout l;
    l.w_bytes = kern::qgemm_packed_max(rnn_gemm_spec(s, false));
    l.r_bytes = kern::qgemm_packed_max(rnn_gemm_spec(s, true));
    l.w_sums = l.r_sums = kern::align64(static_cast<size_t>(rnn_gates(s.cell) * s.H) * sizeof(int32_t));
    l.direction = l.w_bytes + l.r_bytes + l.w_sums + l.r_sums;
    return l;
}

RnnPacked packed_at(const RnnSpec& s, const void* prepared) {
    const PackedLayout l = packed_layout(s);
    RnnPacked p{};
    for (int64_t d = 0; d < s.D; ++d) {
        const auto* base = static_cast<const uint8_t*>(prepared) + d * l.direction;
        p.w[d] = base;
        p.r[d] = base + l.w_bytes;
        p.w_sums[d] = reinterpret_cast<const int32_t*>(base + l.w_bytes + l.r_bytes);
        p.r_sums[d] = reinterpret_cast<const int32_t*>(base + l.w_bytes + l.r_bytes + l.w_sums);
    }
    return p;
}

size_t prepared_bytes(const Graph& g, const Node& n) {
    const RnnSpec s = spec_of(g, n);
    return s.quantized ? static_cast<size_t>(s.D) * packed_layout(s).direction : 0;
}

// One direction's K x G*H weights w transposed to G*H rows of K, packed, and its row sums.
void pack_weights(QIsa isa, QGemmSpec q, const uint8_t* w, int32_t zero, void* packed, int32_t* sums) {
    std::vector<uint8_t> wt(static_cast<size_t>(q.M * q.K));
    for (int64_t k = 0; k < q.K; ++k)
        for (int64_t j = 0; j < q.M; ++j) wt[j * q.K + k] = w[k * q.M + j];
    const std::vector<int32_t> zeros(static_cast<size_t>(q.M), zero);
    q.w_zero = zeros.data();
    qgemm_pack(isa, q, wt.data(), packed);
    kern::weight_row_sums(wt.data(), q.w_signed, zeros.data(), q.M, q.K, sums);
}

void prepare(const Graph& g, const Node& n, const void* const* in, void* out) {
    const RnnSpec s = spec_of(g, n);
    if (!s.quantized) return;
    const QIsa isa = qisa_select();
    const RnnPacked p = packed_at(s, out);
    const int64_t GH = rnn_gates(s.cell) * s.H;
    for (int64_t d = 0; d < s.D; ++d) {
        pack_weights(isa, rnn_gemm_spec(s, false), static_cast<const uint8_t*>(in[kW]) + d * s.I * GH, s.w_zero[d],
                     const_cast<void*>(p.w[d]), const_cast<int32_t*>(p.w_sums[d]));
        pack_weights(isa, rnn_gemm_spec(s, true), static_cast<const uint8_t*>(in[kR]) + d * s.H * GH, s.r_zero[d],
                     const_cast<void*>(p.r[d]), const_cast<int32_t*>(p.r_sums[d]));
    }
}

// The recurrence's floats, then (quantized) the int8 GEMM's scratch.
size_t floats_bytes(const RnnSpec& s) {
    return kern::align64(static_cast<size_t>(rnn_scratch_floats(s)) * sizeof(float));
}

size_t scratch_bytes(const Graph& g, const Node& n) {
    const RnnSpec s = spec_of(g, n);
    if (!s.quantized) return floats_bytes(s);
    return floats_bytes(s) + std::max(kern::qgemm_scratch_max(rnn_gemm_spec(s, false), s.S * s.N),
                                      kern::qgemm_scratch_max(rnn_gemm_spec(s, true), s.N));
}

// True if every sequence length is inside 0..S, as onnxruntime requires; else reports the first (ops.h: the
// job fails). The recurrence clamps each length it reads as well, so a buffer changed after this check
// cannot make it read outside X.
bool lengths_inside(const KernelArgs& a, const int32_t* L, const RnnSpec& s) {
    for (int64_t n = 0; n < s.N; ++n) {
        const int32_t v = L[n];
        if (v >= 0 && v <= s.S) continue;
        DataFault f;
        f.what = "sequence length";
        f.input = kL;
        f.position = n;
        f.value = v;
        f.lo = 0;
        f.hi = s.S;
        f.range_input = kX;
        f.range_axis = s.batch_first ? 1 : 0;
        a.report(f);
        return false;
    }
    return true;
}

void run(const KernelArgs& a) {
    const Node& n = *a.node;
    RnnSpec s = spec_of(*a.graph, n);
    const size_t nin = n.inputs.size();
    const auto opt = [&](size_t i) { return i < nin ? a.in[i] : nullptr; };
    if (const float* ap = static_cast<const float*>(opt(kA)))
        for (int64_t d = 0; d < s.D; ++d)
            for (int k = 0; k < 3; ++k) s.alpha[d][k] = ap[(d * 3 + k) * 2], s.beta[d][k] = ap[(d * 3 + k) * 2 + 1];
    RnnData io{};
    io.X = kern::in_f(a, kX);
    io.W = a.in[kW];
    io.R = a.in[kR];
    io.WS = static_cast<const float*>(opt(kWS));
    io.RS = static_cast<const float*>(opt(kRS));
    io.B = static_cast<const float*>(opt(kB));
    io.L = static_cast<const int32_t*>(opt(kL));
    if (io.L && !lengths_inside(a, io.L, s)) return;
    io.H0 = static_cast<const float*>(opt(kH0));
    io.C0 = static_cast<const float*>(opt(kC0));
    io.P = static_cast<const float*>(opt(kP));
    const int64_t mask = RnnParams::of(n).outputs;
    size_t out = 0;
    float** dst[3] = {&io.Y, &io.Yh, &io.Yc};
    for (int k = 0; k < 3; ++k)
        if (mask & (int64_t(1) << k)) *dst[k] = kern::out_f(a, out++);
    if (s.quantized) {
        io.packed = packed_at(s, a.prepared);
        io.gemm_scratch = static_cast<uint8_t*>(a.scratch) + floats_bytes(s);
    }
    rnn_run(s, io, static_cast<float*>(a.scratch));
}

}  // namespace

const OpDef kRnnDef = {kOp, validate, scratch_bytes, run, prepared_bytes, prepare};

}  // namespace accel_emu
