// qconv.cc - the quantized 2-D convolutions qconv and convinteger (FORMAT.md ops 29, 40): the checks, the packing of
// each group's weights with its requantization constants at load, and the run over images and groups through the int8
// GEMM (math/qgemm.h), whose code path (portable, AVX2, AVX-512 VNNI, AMX) is chosen when the model loads. A big
// group's GEMM splits across the core's threads (ConvSplit), a depthwise conv by channels.
#include <algorithm>
#include <vector>

#include "math/exact_rounding.h"
#include "math/fixpoint.h"
#include "math/im2col.h"
#include "math/qgemm.h"
#include "ops/conv_shape.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"
#include "ops/qgemm_split.h"
#include "ops/quant_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "qconv";

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    if (!kern::check_common(g, n, err) || !kern::check_device_act(g, n, err) || !kern::check_fused_act(g, n, kOp, err))
        return false;
    const auto per_tensor = kern::QuantShape::PerTensor;
    if (!kern::check_quantized(*kern::input(g, n, 0), kOp, "input", per_tensor, -1, false, err) ||
        !kern::check_quantized(*kern::input(g, n, 1), kOp, "weight", kern::QuantShape::PerTensorOrAxis, 0, false,
                               err) ||
        !kern::check_quantized(kern::output(g, n, 0), kOp, "output", per_tensor, -1, false, err))
        return false;
    const TensorDesc* b = kern::input(g, n, 2);
    if (b && b->dtype != ACCEL_DTYPE_INT32) return kern::fail(err, kOp, cat("bias '", b->name, "' is not int32"));
    ConvGeom q;
    return kern::check_conv_shapes(g, n, kOp, &q, err);
}

// The GEMM of a group: its spec, and the weights' zero points, bias and requantization multipliers that
// the spec points into.
struct GroupSpec {
    QGemmSpec spec;
    std::vector<int32_t> w_zero, bias;
    std::vector<float> scale;
    std::vector<FixedRequant> fixed;
};

// The sizes and types of a group's GEMM (what the packed and scratch sizes depend on), no arrays.
QGemmSpec size_spec(const Graph& g, const Node& n, const ConvGeom& q) {
    QGemmSpec s;
    s.M = q.depthwise ? q.C : q.Mg;
    s.K = q.depthwise ? q.kh * q.kw : q.K;
    s.taps = q.kh * q.kw;
    s.w_signed = kern::input(g, n, 1)->dtype == ACCEL_DTYPE_INT8;
    s.x_signed = kern::input(g, n, 0)->dtype == ACCEL_DTYPE_INT8;
    s.out = quant_rules(g).gemm_q8_out();
    s.y_signed = kern::output(g, n, 0).dtype == ACCEL_DTYPE_INT8;
    return s;
}

void group_spec(const Graph& g, const Node& n, const ConvGeom& q, int64_t gi, const void* bias, GroupSpec* out) {
    const TensorDesc& w = *kern::input(g, n, 1);
    const QParams xp = kern::qparams(*kern::input(g, n, 0)), yp = kern::qparams(kern::output(g, n, 0));
    QGemmSpec& s = out->spec;
    s = size_spec(g, n, q);
    const int64_t m0 = q.depthwise ? 0 : gi * q.Mg;
    out->w_zero.resize(s.M);
    out->bias.resize(s.M);
    out->scale.resize(s.M);
    for (int64_t m = 0; m < s.M; ++m) {
        const size_t c = w.quant.scales.size() > 1 ? static_cast<size_t>(m0 + m) : 0;
        out->w_zero[m] = w.quant.zero_points[c];
        out->bias[m] = bias ? static_cast<const int32_t*>(bias)[m0 + m] : 0;
        out->scale[m] = (xp.scale * w.quant.scales[c]) / yp.scale;  // float32, as onnxruntime orders it
    }
    if (s.out == QOut::Fixed) {  // a device's rules: an integer requantization per channel, the activation in it
        out->fixed.resize(s.M);
        for (int64_t m = 0; m < s.M; ++m)
            quant_rules(g).fixed_requant(n, *kern::input(g, n, 0), w, static_cast<size_t>(m0 + m),
                                         kern::output(g, n, 0), &out->fixed[m], &s.y_min, &s.y_max);
        s.fixed = out->fixed.data();
    }
    s.x_zero = xp.zero;
    s.w_zero = out->w_zero.data();
    s.bias = out->bias.data();
    s.scale = out->scale.data();
    s.y_zero = yp.zero;
}

// Bytes of one group's packed blob, enough for whichever path the load picks.
size_t blob_bytes(const QGemmSpec& s, bool depthwise) {
    return depthwise ? kern::qdepthwise_packed_max(s) : kern::qgemm_packed_max(s);
}

// ---- threads ----
//
// A group's GEMM of one image splits into parts of its weight rows (each packed on its own at load, so a part
// reads only its weights) times parts of its output positions: rows, where each part builds the copies of
// the input rows it reads (or reads a pointwise conv's input in place), or columns of one build of the
// whole input's copies that every part shares (qgemm.h). Shapes only, though any split gives the same bytes.

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Parts of one GEMM at most, and the least work of one (about 20 microseconds on one AVX-512 core): a part
// has a set-up of its own (its blocks' column sums and tail columns gathered, its epilogue's constants), which
// at 16 parts of 60 weight rows cost MobileNetV2's 7x7 pointwise convs about 20% on one thread. 8 parts leave
// a few per thread on the hosts we run.
constexpr int64_t kMaxConvParts = 8;
constexpr int64_t kMinMacsPerConvPart = 8 * kMinMacsPerPart;
constexpr int64_t kRowUnit = 16;       // weight rows per unit of a split: a multiple of every path's row tile
constexpr int64_t kColumnUnit = 16;    // output positions per unit of a column split: one vector of a kernel
constexpr int64_t kMinColumns = 128;   // output positions per part at least: a part's kernels run whole tiles

struct ConvSplit {
    int64_t mparts = 1;   // parts of the weight rows
    int64_t oparts = 1;   // parts of the output positions: rows, or columns when shared
    bool shared = false;  // one build of the input's copies that every part reads
    int64_t parts() const { return mparts * oparts; }
};

// A count of parts rounded down to an even one from 3 up: 3 parts on 2 threads leave one idle a third of the time.
int64_t even_parts(int64_t parts) { return parts > 2 ? parts & ~int64_t{1} : parts; }

ConvSplit conv_split(const ConvGeom& q) {
    ConvSplit s;
    const int64_t parts = even_parts(split_parts(kMaxConvParts, q.Mg * q.K * q.P, kMinMacsPerConvPart));
    if (q.depthwise || parts == 1) return s;
    const int64_t munits = ceil_div(q.Mg, kRowUnit);
    const int64_t rows_min = ceil_div(kMinColumns, std::max<int64_t>(q.OW, 1));
    if (qconv_shares(q)) {
        // Weight-row parts first: all of them read one build of the input's copies.
        s.shared = true;
        s.mparts = std::min(parts, munits);
        s.oparts = std::clamp<int64_t>(ceil_div(parts, s.mparts), 1, std::max<int64_t>(q.P / kMinColumns, 1));
        return s;
    }
    // Each row part builds its own rows' copies (plus a halo; a pointwise conv's part reads its rows in place):
    // row parts first, weight-row parts for the rest.
    s.oparts = std::clamp<int64_t>(q.OH / rows_min, 1, parts);
    s.mparts = std::min(ceil_div(parts, s.oparts), munits);
    return s;
}

// Weight rows [*m0, *m1) of part p of a group's Mg.
void weight_part(const ConvGeom& q, const ConvSplit& s, int64_t p, int64_t* m0, int64_t* m1) {
    int64_t u0, u1;
    part_range(ceil_div(q.Mg, kRowUnit), s.mparts, p, &u0, &u1);
    *m0 = std::min(q.Mg, u0 * kRowUnit);
    *m1 = std::min(q.Mg, u1 * kRowUnit);
}

// Output rows (or, shared, positions) [*o0, *o1) of part p.
void output_part(const ConvGeom& q, const ConvSplit& s, int64_t p, int64_t* o0, int64_t* o1) {
    if (!s.shared) {
        part_range(q.OH, s.oparts, p, o0, o1);
        return;
    }
    int64_t u0, u1;
    part_range(ceil_div(q.P, kColumnUnit), s.oparts, p, &u0, &u1);
    *o0 = std::min(q.P, u0 * kColumnUnit);
    *o1 = std::min(q.P, u1 * kColumnUnit);
}

// The most output rows (or positions) of a part.
int64_t most_outputs(const ConvGeom& q, const ConvSplit& s) {
    int64_t most = 0;
    for (int64_t p = 0; p < s.oparts; ++p) {
        int64_t o0, o1;
        output_part(q, s, p, &o0, &o1);
        most = std::max(most, o1 - o0);
    }
    return most;
}
// spec with the most weight rows of a part (what sizes every part's blob and scratch).
QGemmSpec biggest_part(const ConvGeom& q, const ConvSplit& s, QGemmSpec spec) {
    int64_t most = 0;
    for (int64_t p = 0; p < s.mparts; ++p) {
        int64_t m0, m1;
        weight_part(q, s, p, &m0, &m1);
        most = std::max(most, m1 - m0);
    }
    spec.M = most;
    return spec;
}

// Bytes of one weight part's blob: every part's stride in the prepared block (group-major).
size_t part_bytes(const Graph& g, const Node& n, const ConvGeom& q, const ConvSplit& s) {
    return kern::qgemm_packed_max(biggest_part(q, s, size_spec(g, n, q)));
}

size_t prepared_bytes(const Graph& g, const Node& n) {
    const ConvGeom q = kern::conv_geometry(g, n);
    if (q.depthwise) return blob_bytes(size_spec(g, n, q), true);
    const ConvSplit s = conv_split(q);
    return part_bytes(g, n, q, s) * static_cast<size_t>(s.mparts * q.G);
}

void prepare(const Graph& g, const Node& n, const void* const* in, void* out) {
    const ConvGeom q = kern::conv_geometry(g, n);
    const QIsa isa = qisa_select();
    const auto* w = static_cast<const uint8_t*>(in[1]);
    const void* bias = n.inputs.size() > 2 && n.inputs[2] != kAbsent ? in[2] : nullptr;
    GroupSpec gs;
    if (q.depthwise) {
        group_spec(g, n, q, 0, bias, &gs);
        qdepthwise_pack(isa, gs.spec, w, out);
        return;
    }
    const ConvSplit s = conv_split(q);
    const size_t stride = part_bytes(g, n, q, s);
    auto* o = static_cast<uint8_t*>(out);
    for (int64_t gi = 0; gi < q.G; ++gi) {
        group_spec(g, n, q, gi, bias, &gs);
        for (int64_t p = 0; p < s.mparts; ++p, o += stride) {
            int64_t m0, m1;
            weight_part(q, s, p, &m0, &m1);
            qgemm_pack(isa, kern::split_spec(gs.spec, m0, m1), w + (gi * q.Mg + m0) * q.K, o);
        }
    }
}

// Bytes at the start of each worker's scratch that only worker 0 uses: the shared copies.
size_t shared_skip(const Graph& g, const Node& n, const ConvGeom& q, const ConvSplit& s) {
    return s.shared ? kern::align64(qconv_shared_bytes(size_spec(g, n, q), q)) : 0;
}

size_t scratch_bytes(const Graph& g, const Node& n) {
    const ConvGeom q = kern::conv_geometry(g, n);
    if (q.depthwise) return kern::qconv_scratch_max(size_spec(g, n, q), q);
    const ConvSplit s = conv_split(q);
    const QGemmSpec part = biggest_part(q, s, size_spec(g, n, q));
    if (s.shared) return shared_skip(g, n, q, s) + qconv_shared_scratch_max(part, q, most_outputs(q, s));
    return qconv_rows_scratch_max(part, q, most_outputs(q, s));
}

void run_depthwise(const KernelArgs& a, const ConvGeom& q) {
    const auto* x = static_cast<const uint8_t*>(a.in[0]);
    auto* y = static_cast<uint8_t*>(a.out[0]);
    // A depthwise multiply-add costs several of a GEMM's, and a part (a range of channels) sets up nothing.
    const int64_t parts =
        even_parts(std::min(split_parts(q.C, q.C * q.P * q.kh * q.kw, kMinMacsPerPart / 4), kMaxConvParts));
    a.par->for_each(q.N * parts, [&](int64_t t, int worker) {
        const int64_t i = t / parts;
        int64_t c0, c1;
        part_range(q.C, parts, t % parts, &c0, &c1);
        qdepthwise_channels(a.prepared, q, x + i * q.C * q.H * q.W, y + i * q.M * q.P, a.scratch_for(worker), c0, c1);
    });
}

void run(const KernelArgs& a) {
    const ConvGeom q = kern::conv_geometry(*a.graph, *a.node);
    if (q.depthwise) {
        run_depthwise(a, q);
        return;
    }
    const auto* x = static_cast<const uint8_t*>(a.in[0]);
    auto* y = static_cast<uint8_t*>(a.out[0]);
    const auto* packed = static_cast<const uint8_t*>(a.prepared);
    const ConvSplit s = conv_split(q);
    const size_t stride = part_bytes(*a.graph, *a.node, q, s), skip = shared_skip(*a.graph, *a.node, q, s);
    const auto blob = [&](int64_t gi, int64_t mp) { return packed + (gi * s.mparts + mp) * stride; };
    const auto xg = [&](int64_t i, int64_t gi) { return x + (i * q.C + gi * q.Cg) * q.H * q.W; };
    const auto yg = [&](int64_t i, int64_t gi, int64_t m0) { return y + (i * q.M + gi * q.Mg + m0) * q.P; };
    if (!s.shared) {  // every task whole on its worker: image, group, weight part, row part
        a.par->for_each(q.N * q.G * s.parts(), [&](int64_t t, int worker) {
            const int64_t op = t % s.oparts, mp = t / s.oparts % s.mparts, gi = t / s.parts() % q.G,
                          i = t / s.parts() / q.G;
            int64_t m0, m1, oh0, oh1;
            weight_part(q, s, mp, &m0, &m1);
            output_part(q, s, op, &oh0, &oh1);
            qconv_rows(blob(gi, mp), q, xg(i, gi), yg(i, gi, m0), a.scratch_for(worker), oh0, oh1);
        });
        return;
    }
    // The copies into worker 0's scratch, in parts of the input's channels, then the parts read them.
    void* shared = a.scratch;
    const int64_t units = qconv_units(q);
    const int64_t uparts = split_parts(units, q.Cg * q.kw * (q.OH + q.kh) * q.OW, kMinElemsPerPart);
    bool sums = false;
    for (int64_t gi = 0; gi < q.G; ++gi)
        for (int64_t mp = 0; mp < s.mparts; ++mp) sums = sums || qconv_takes_sums(blob(gi, mp));
    const int64_t cunits = ceil_div(q.P, kColumnUnit), sum_parts = split_parts(cunits, q.K * q.P, kMinElemsPerPart);
    for (int64_t i = 0; i < q.N; ++i)
        for (int64_t gi = 0; gi < q.G; ++gi) {
            qconv_share_begin(blob(gi, 0), q, shared);
            a.par->for_ranges(units, uparts, [&](int64_t u0, int64_t u1, int worker) {
                qconv_share(blob(gi, 0), q, xg(i, gi), shared, u0, u1,
                            static_cast<char*>(a.scratch_for(worker)) + skip);
            });
            if (sums) {  // once for every part that takes them, instead of once per part
                a.par->for_ranges(cunits, sum_parts, [&](int64_t c0, int64_t c1, int) {
                    qconv_share_sums(blob(gi, 0), q, shared, c0 * kColumnUnit, std::min(q.P, c1 * kColumnUnit));
                });
            }
            a.par->for_each(s.parts(), [&](int64_t t, int worker) {
                int64_t m0, m1, p0, p1;
                weight_part(q, s, t / s.oparts, &m0, &m1);
                output_part(q, s, t % s.oparts, &p0, &p1);
                qconv_shared(blob(gi, t / s.oparts), q, shared, yg(i, gi, m0), p0, p1,
                             static_cast<char*>(a.scratch_for(worker)) + skip);
            });
        }
}

// ---- convinteger ----
//
// Each group's GEMM runs on an im2col of the input whose padding holds X_zero, with X's zero point 0 in the
// GEMM (X_zero may be known only at run time); the run then subtracts X_zero * R[m] from each sum, R[m] =
// sum_k (W[m][k] - W_zero[m]), which makes the padding's taps add 0 as they should.

bool validate_convinteger(const Graph& g, const Node& n, std::string* err) {
    const char* op = "convinteger";
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc &x = *kern::input(g, n, 0), &w = *kern::input(g, n, 1), &y = kern::output(g, n, 0);
    if (!kern::is_q8(x) || !kern::is_q8(w) || y.dtype != ACCEL_DTYPE_INT32)
        return kern::fail(err, op, "takes int8 or uint8 X and W and gives int32 Y");
    const TensorDesc *xz = kern::input(g, n, 2), *wz = kern::input(g, n, 3);
    if (xz && (xz->dtype != x.dtype || xz->numel != 1))
        return kern::fail(err, op, kern::cat("X's zero point '", xz->name, "' is not one value of X's dtype"));
    if (wz && (wz->dtype != w.dtype || wz->kind != TensorKind::Constant || (wz->numel != 1 && wz->numel != w.dims[0])))
        return kern::fail(err, op,
                          kern::cat("W's zero point '", wz->name, "' is not a constant of W's dtype with 1 or ",
                                    w.dims[0], " values"));
    ConvGeom q;
    return kern::check_conv_shapes(g, n, op, &q, err);
}

QGemmSpec integer_spec(const Graph& g, const Node& n, const ConvGeom& q) {
    QGemmSpec s;
    s.M = q.Mg;
    s.K = q.K;
    s.w_signed = kern::input(g, n, 1)->dtype == ACCEL_DTYPE_INT8;
    s.x_signed = kern::input(g, n, 0)->dtype == ACCEL_DTYPE_INT8;
    s.out = QOut::Int32;
    return s;
}

// The prepared block: R[M] and W_zero[M] (int32), then each group's packed weights.
size_t integer_head(const ConvGeom& q) { return kern::align64(static_cast<size_t>(q.M) * 8); }

size_t prepared_convinteger(const Graph& g, const Node& n) {
    const ConvGeom q = kern::conv_geometry(g, n);
    return integer_head(q) + kern::qgemm_packed_max(integer_spec(g, n, q)) * static_cast<size_t>(q.G);
}

void prepare_convinteger(const Graph& g, const Node& n, const void* const* in, void* out) {
    const ConvGeom q = kern::conv_geometry(g, n);
    const TensorDesc& w = *kern::input(g, n, 1);
    const TensorDesc* wz = kern::input(g, n, 3);
    auto* R = static_cast<int32_t*>(out);
    int32_t* zeros = R + q.M;
    const auto* wb = static_cast<const uint8_t*>(in[1]);
    for (int64_t m = 0; m < q.M; ++m) zeros[m] = wz ? kern::q8_at(*wz, in[3], wz->numel > 1 ? m : 0) : 0;
    kern::weight_row_sums(wb, w.dtype == ACCEL_DTYPE_INT8, zeros, q.M, q.K, R);
    QGemmSpec s = integer_spec(g, n, q);
    const size_t stride = kern::qgemm_packed_max(s);
    const QIsa isa = qisa_select();
    for (int64_t gi = 0; gi < q.G; ++gi) {
        s.w_zero = zeros + gi * q.Mg;
        qgemm_pack(isa, s, wb + gi * q.Mg * q.K, static_cast<uint8_t*>(out) + integer_head(q) + gi * stride);
    }
}

// The columns of a group's GEMM in parts (shapes only), each its own im2col, GEMM and correction.
int64_t integer_parts(const ConvGeom& q) {
    const int64_t parts = even_parts(split_parts(kMaxConvParts, q.Mg * q.K * q.P, kMinMacsPerConvPart));
    return std::clamp<int64_t>(q.P / kMinColumns, 1, parts);
}
void integer_columns(const ConvGeom& q, int64_t parts, int64_t p, int64_t* p0, int64_t* p1) {
    int64_t u0, u1;
    part_range(ceil_div(q.P, kColumnUnit), parts, p, &u0, &u1);
    *p0 = std::min(q.P, u0 * kColumnUnit);
    *p1 = std::min(q.P, u1 * kColumnUnit);
}
int64_t integer_most_columns(const ConvGeom& q) {
    const int64_t parts = integer_parts(q);
    return std::min(q.P, ceil_div(ceil_div(q.P, kColumnUnit), parts) * kColumnUnit);
}

size_t col_bytes(const ConvGeom& q) { return kern::align64(static_cast<size_t>(q.K * integer_most_columns(q))); }

size_t scratch_convinteger(const Graph& g, const Node& n) {
    const ConvGeom q = kern::conv_geometry(g, n);
    return col_bytes(q) + kern::qgemm_scratch_max(integer_spec(g, n, q), integer_most_columns(q));
}

void run_convinteger(const KernelArgs& a) {
    const Graph& g = *a.graph;
    const Node& n = *a.node;
    const ConvGeom q = kern::conv_geometry(g, n);
    const auto* x = static_cast<const uint8_t*>(a.in[0]);
    auto* y = static_cast<int32_t*>(a.out[0]);
    const auto* head = static_cast<const uint8_t*>(a.prepared);
    const auto* R = reinterpret_cast<const int32_t*>(head);
    const size_t stride = kern::qgemm_packed_max(integer_spec(g, n, q));
    const bool has_zero = n.inputs.size() > 2 && n.inputs[2] != kAbsent;
    const uint8_t pad = has_zero ? *static_cast<const uint8_t*>(a.in[2]) : 0;  // the zero point's byte
    const int32_t xz = has_zero ? kern::q8_at(kern::in_desc(a, 2), a.in[2], 0) : 0;
    const int64_t parts = integer_parts(q);
    // Tasks: image, group, columns.
    a.par->for_each(q.N * q.G * parts, [&](int64_t t, int worker) {
        const int64_t gi = t / parts % q.G, i = t / parts / q.G;
        int64_t p0, p1;
        integer_columns(q, parts, t % parts, &p0, &p1);
        const int64_t cols = p1 - p0;
        auto* col = static_cast<uint8_t*>(a.scratch_for(worker));
        im2col(q, x + (i * q.C + gi * q.Cg) * q.H * q.W, p0, cols, pad, col);
        int32_t* yg = y + (i * q.M + gi * q.Mg) * q.P + p0;
        qgemm_wx(head + integer_head(q) + gi * stride, cols, col, cols, yg, q.P, col + col_bytes(q));
        if (xz == 0) return;
        for (int64_t m = 0; m < q.Mg; ++m) {
            const uint32_t c = static_cast<uint32_t>(xz) * static_cast<uint32_t>(R[gi * q.Mg + m]);
            for (int64_t p = 0; p < cols; ++p)
                yg[m * q.P + p] = static_cast<int32_t>(static_cast<uint32_t>(yg[m * q.P + p]) - c);
        }
    });
}

}  // namespace

const OpDef kConvIntegerDef = {"convinteger",   validate_convinteger, scratch_convinteger,
                               run_convinteger, prepared_convinteger, prepare_convinteger};
const OpDef kQConvDef = {kOp, validate, scratch_bytes, run, prepared_bytes, prepare};

}  // namespace accel_emu
