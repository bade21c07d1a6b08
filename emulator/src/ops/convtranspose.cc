// convtranspose.cc - 2-D transposed convolution (FORMAT.md op 16). Each input pixel scatters a kernel-
// sized patch of every output channel of its group: per image and group, one GEMM makes the patches of a
// tile of input pixels (col[Mg*kh*kw, t] = W_g^T x_g[:, tile]) and col2im adds them into the output.
// Special cases: 1x1 stride-1 unpadded is one GEMM straight into the output; with one input channel per
// group (depthwise and the like) the GEMM is an outer product, so the taps are scattered directly; when
// kernel == stride every output gets exactly one contribution, so col2im stores (bias included) instead
// of adding into a pre-filled output. The col2im and the direct scatter are math/col2im.cc.
#include <algorithm>
#include <utility>

#include "math/activation.h"
#include "math/col2im.h"
#include "math/gemm.h"
#include "op_params.h"
#include "ops/op_defs.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace {

constexpr const char* kOp = "convtranspose";
// col tile budget in floats (1 MiB), as conv's im2col: the GEMM runs at speed and the tile stays in L2.
constexpr int64_t kTileFloats = 256 * 1024;

// Along one axis, does each output position receive exactly one (kernel tap, input position) pair?
// Taps ki*d (ki < k) tile the stride only when k == s and d == 1 (or k == 1 == s); outputs past the last
// input's patch exist only when the output padding exceeds the end pad.
bool axis_covered(int64_t k, int64_t s, int64_t d, int64_t out_pad, int64_t pad_end) {
    return k == s && (d == 1 || k == 1) && out_pad <= pad_end;
}

ConvTransposeGeom geom(const Graph& g, const Node& n) {
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& w = *kern::input(g, n, 1);
    const TensorDesc& y = kern::output(g, n, 0);
    const ConvTransposeParams p = ConvTransposeParams::of(n);
    ConvTransposeGeom q;
    q.N = x.dims[0], q.C = x.dims[1], q.H = x.dims[2], q.W = x.dims[3];
    q.G = p.group, q.kh = w.dims[2], q.kw = w.dims[3];
    q.sh = p.stride_h, q.sw = p.stride_w, q.pt = p.pad_top, q.pl = p.pad_left;
    q.dh = p.dilation_h, q.dw = p.dilation_w;
    q.M = y.dims[1], q.OH = y.dims[2], q.OW = y.dims[3];
    q.Cg = q.C / q.G, q.Mg = q.M / q.G;
    q.HW = q.H * q.W, q.OP = q.OH * q.OW;
    q.R = q.Mg * q.kh * q.kw;
    q.pointwise =
        q.kh == 1 && q.kw == 1 && q.sh == 1 && q.sw == 1 && q.pt == 0 && q.pl == 0 && q.OH == q.H && q.OW == q.W;
    q.direct = !q.pointwise && q.Cg == 1;
    q.cover = axis_covered(q.kh, q.sh, q.dh, p.output_pad_h, p.pad_bottom) &&
              axis_covered(q.kw, q.sw, q.dw, p.output_pad_w, p.pad_right);
    if (q.pointwise || q.direct) {
        q.tile = 0;
    } else {
        const int64_t rows = std::max<int64_t>(kTileFloats / q.R / q.W, 1);  // whole input rows
        q.tile = std::min(rows, q.H) * q.W;
    }
    return q;
}

// OH = s*(in-1) + out_pad + d*(k-1) + 1 - pad_lo - pad_hi, with overflow checks; false with a message.
bool axis_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t plo, int64_t phi, int64_t opad, const char* nm,
              int64_t* out, std::string* err) {
    using kern::cat;
    if (s < 1) return kern::fail(err, kOp, cat("stride_", nm, " ", s, " must be >= 1"));
    if (d < 1) return kern::fail(err, kOp, cat("dilation_", nm, " ", d, " must be >= 1"));
    if (plo < 0 || phi < 0) return kern::fail(err, kOp, cat("pads along ", nm, " (", plo, ", ", phi, ") must be >= 0"));
    if (opad < 0 || (opad >= s && opad >= d))
        return kern::fail(
            err, kOp, cat("output_pad_", nm, " ", opad, " must be >= 0 and less than stride ", s, " or dilation ", d));
    int64_t a = 0, b = 0, full = 0;
    if (!kern::mul_ok(s, in - 1, &a) || !kern::mul_ok(d, k - 1, &b) || !kern::add_ok(a, b, &full) ||
        !kern::add_ok(full, opad + 1, &full))
        return kern::fail(err, kOp, cat("geometry along ", nm, " overflows"));
    if (plo > full || phi > full - plo || full - plo - phi < 1)
        return kern::fail(
            err, kOp, cat("pads along ", nm, " (", plo, ", ", phi, ") leave no output of the ", full, " positions"));
    *out = full - plo - phi;
    return true;
}

bool validate(const Graph& g, const Node& n, std::string* err) {
    using kern::cat;
    using kern::fail;
    if (!kern::check_common(g, n, err)) return false;
    const TensorDesc& x = *kern::input(g, n, 0);
    const TensorDesc& w = *kern::input(g, n, 1);
    const TensorDesc* b = kern::input(g, n, 2);
    const TensorDesc& y = kern::output(g, n, 0);
    const std::pair<const TensorDesc*, const char*> ranked[] = {{&x, "input"}, {&w, "weight"}, {&y, "output"}};
    for (const auto& [t, role] : ranked)
        if (t->ndim != 4) return fail(err, kOp, cat(role, " rank ", t->ndim, " is not 4 (NCHW)"));
    if (w.kind != TensorKind::Constant) return fail(err, kOp, "weight is not a constant");
    const ConvTransposeParams p = ConvTransposeParams::of(n);
    const int64_t G = p.group, C = x.dims[1];
    if (G < 1) return fail(err, kOp, cat("group ", G, " must be >= 1"));
    if (C % G != 0) return fail(err, kOp, cat("input channels ", C, " not divisible by group ", G));
    if (w.dims[0] != C)
        return fail(err, kOp, cat("weight shape ", kern::dims_str(w), " needs dim 0 = ", C, " (input channels)"));
    int64_t M = 0;
    if (!kern::mul_ok(w.dims[1], G, &M)) return fail(err, kOp, "output channel count overflows");
    if (p.kernel_h != w.dims[2] || p.kernel_w != w.dims[3])
        return fail(err, kOp,
                    cat("kernel ", p.kernel_h, "x", p.kernel_w, " does not match weight shape ", kern::dims_str(w)));
    if (b) {
        if (b->kind != TensorKind::Constant) return fail(err, kOp, "bias is not a constant");
        if (b->ndim != 1 || b->dims[0] != M)
            return fail(err, kOp, cat("bias shape ", kern::dims_str(*b), " is not [", M, "]"));
    }
    int64_t OH = 0, OW = 0;
    if (!axis_out(x.dims[2], w.dims[2], p.stride_h, p.dilation_h, p.pad_top, p.pad_bottom, p.output_pad_h, "h", &OH,
                  err) ||
        !axis_out(x.dims[3], w.dims[3], p.stride_w, p.dilation_w, p.pad_left, p.pad_right, p.output_pad_w, "w", &OW,
                  err))
        return false;
    if (y.dims[0] != x.dims[0] || y.dims[1] != M || y.dims[2] != OH || y.dims[3] != OW)
        return fail(err, kOp,
                    cat("output shape ", kern::dims_str(y), " should be [", x.dims[0], ",", M, ",", OH, ",", OW, "]"));
    const ConvTransposeGeom q = geom(g, n);  // products below are bounded by tensor sizes, so cannot overflow
    if (q.R > kern::kBlasIntMax || q.HW > kern::kBlasIntMax || q.Cg > kern::kBlasIntMax)
        return fail(err, kOp, cat("GEMM size ", q.R, "x", q.HW, "x", q.Cg, " exceeds the BLAS int range"));
    int64_t scratch = 0;
    if (!kern::mul_ok(q.R, q.tile, &scratch) || !kern::mul_ok(scratch, 4, &scratch) ||
        static_cast<uint64_t>(scratch) > kern::kMaxScratchBytes)
        return fail(err, kOp, "col scratch too large");
    return true;
}

size_t scratch_bytes(const Graph& g, const Node& n) {
    const ConvTransposeGeom q = geom(g, n);
    return static_cast<size_t>(q.R * q.tile) * sizeof(float);
}

void run(const KernelArgs& a) {
    const ConvTransposeGeom q = geom(*a.graph, *a.node);
    const Node& n = *a.node;
    const float* X = kern::in_f(a, 0);
    const float* Wt = kern::in_f(a, 1);
    const float* B = n.inputs.size() > 2 ? kern::in_f(a, 2) : nullptr;
    float* Y = kern::out_f(a, 0);
    float* col = static_cast<float*>(a.scratch);
    const int R = static_cast<int>(q.R), HW = static_cast<int>(q.HW), K = static_cast<int>(q.Cg);
    for (int64_t i = 0; i < q.N; ++i) {
        for (int64_t gi = 0; gi < q.G; ++gi) {
            const float* x = X + (i * q.C + gi * q.Cg) * q.HW;
            const float* w = Wt + gi * q.Cg * q.R;  // W_g: [Cg, Mg*kh*kw]
            const float* b = B ? B + gi * q.Mg : nullptr;
            float* y = Y + (i * q.M + gi * q.Mg) * q.OP;
            if (q.pointwise) {
                sgemm(true, false, R, HW, K, 1.f, w, R, x, HW, 0.f, y, HW);
                kern::bias_act_rows(y, q.Mg, q.OP, q.OP, b, n.act, n.act_alpha, n.act_beta);
                continue;
            }
            if (q.direct) {
                convtranspose_fill_bias(q, b, y);
                convtranspose_direct(q, x, w, y);
            } else {
                if (!q.cover) convtranspose_fill_bias(q, b, y);
                const int64_t tile_rows = q.tile / q.W;
                for (int64_t ih0 = 0; ih0 < q.H; ih0 += tile_rows) {
                    const int64_t rows = std::min(tile_rows, q.H - ih0);
                    const int t = static_cast<int>(rows * q.W);
                    sgemm(true, false, R, t, K, 1.f, w, R, x + ih0 * q.W, HW, 0.f, col, t);
                    if (q.cover) col2im_cover(q, col, ih0, rows, b, y);
                    else col2im_add(q, col, ih0, rows, y);
                }
            }
            apply_activation(n.act, n.act_alpha, n.act_beta, y, static_cast<size_t>(q.Mg * q.OP));
        }
    }
}

}  // namespace

const OpDef kConvTransposeDef = {kOp, validate, scratch_bytes, run, nullptr, nullptr};

}  // namespace accel_emu
