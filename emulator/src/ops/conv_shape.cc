// conv_shape.cc - see conv_shape.h.
#include "ops/conv_shape.h"

#include "op_params.h"
#include "ops/op_util.h"

namespace accel_emu {
namespace kern {
namespace {

// conv and qconv keep their window in the same named parameters (one generated struct each).
struct Window {
    int64_t group, kernel_h, kernel_w, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, dilation_h,
        dilation_w;
};

template <class P>
Window window_from(const P& p) {
    return {p.group,    p.kernel_h,   p.kernel_w,  p.stride_h,   p.stride_w,  p.pad_top,
            p.pad_left, p.pad_bottom, p.pad_right, p.dilation_h, p.dilation_w};
}

Window window(const Node& n) {
    switch (n.op) {
        case Op::QConv: return window_from(QConvParams::of(n));
        case Op::ConvInteger: return window_from(ConvIntegerParams::of(n));
        default: return window_from(ConvParams::of(n));
    }
}

// Everything but the output sizes, which the checks compute with overflow checks first.
void fill(const Graph& g, const Node& n, const Window& p, ConvGeom* q) {
    const TensorDesc& x = *input(g, n, 0);
    const TensorDesc& w = *input(g, n, 1);
    q->N = x.dims[0], q->C = x.dims[1], q->H = x.dims[2], q->W = x.dims[3];
    q->M = w.dims[0], q->kh = w.dims[2], q->kw = w.dims[3];
    q->G = p.group;
    q->sh = p.stride_h, q->sw = p.stride_w, q->pt = p.pad_top, q->pl = p.pad_left;
    q->dh = p.dilation_h, q->dw = p.dilation_w;
}

void finish(ConvGeom* q) {
    q->Cg = q->C / q->G, q->Mg = q->M / q->G;
    q->P = q->OH * q->OW;
    q->K = q->Cg * q->kh * q->kw;
    q->depthwise = q->G == q->C && q->G == q->M && q->G > 1;
    q->pointwise = q->kh == 1 && q->kw == 1 && q->sh == 1 && q->sw == 1 && q->pt == 0 && q->pl == 0 && q->OH == q->H &&
                   q->OW == q->W;
    q->tile = 0;
}

}  // namespace

ConvGeom conv_geometry(const Graph& g, const Node& n) {
    ConvGeom q;
    fill(g, n, window(n), &q);
    const TensorDesc& y = output(g, n, 0);
    q.OH = y.dims[2], q.OW = y.dims[3];
    finish(&q);
    return q;
}

bool check_conv_shapes(const Graph& g, const Node& n, const char* op, ConvGeom* out, std::string* err) {
    const TensorDesc& x = *input(g, n, 0);
    const TensorDesc& w = *input(g, n, 1);
    const TensorDesc* b = n.op == Op::ConvInteger ? nullptr : input(g, n, 2);  // convinteger's is X_zero
    const TensorDesc& y = output(g, n, 0);
    if (x.ndim != 4) return fail(err, op, cat("input rank ", x.ndim, " is not 4 (NCHW)"));
    if (w.ndim != 4) return fail(err, op, cat("weight rank ", w.ndim, " is not 4"));
    if (y.ndim != 4) return fail(err, op, cat("output rank ", y.ndim, " is not 4"));
    if (w.kind != TensorKind::Constant) return fail(err, op, "weight is not a constant");
    const Window p = window(n);
    ConvGeom q;
    fill(g, n, p, &q);
    if (q.G < 1) return fail(err, op, cat("group ", q.G, " must be >= 1"));
    if (q.C % q.G != 0) return fail(err, op, cat("input channels ", q.C, " not divisible by group ", q.G));
    if (q.M % q.G != 0) return fail(err, op, cat("output channels ", q.M, " not divisible by group ", q.G));
    if (w.dims[1] != q.C / q.G)
        return fail(err, op,
                    cat("weight shape ", dims_str(w), " needs dim 1 = ", q.C / q.G, " (input channels ", q.C,
                        " / group ", q.G, ")"));
    if (p.kernel_h != q.kh || p.kernel_w != q.kw)
        return fail(err, op, cat("kernel ", p.kernel_h, "x", p.kernel_w, " does not match weight shape ", dims_str(w)));
    if (b) {
        if (b->kind != TensorKind::Constant) return fail(err, op, "bias is not a constant");
        if (b->ndim != 1 || b->dims[0] != q.M)
            return fail(err, op, cat("bias shape ", dims_str(*b), " is not [", q.M, "]"));
    }
    Axis ah{q.H, q.kh, q.sh, q.pt, p.pad_bottom, q.dh, 0};
    Axis aw{q.W, q.kw, q.sw, q.pl, p.pad_right, q.dw, 0};
    if (!window_axis(&ah, false, op, "h", err) || !window_axis(&aw, false, op, "w", err)) return false;
    if (y.dims[0] != q.N || y.dims[1] != q.M || y.dims[2] != ah.out || y.dims[3] != aw.out)
        return fail(err, op,
                    cat("output shape ", dims_str(y), " should be [", q.N, ",", q.M, ",", ah.out, ",", aw.out, "]"));
    q.OH = ah.out, q.OW = aw.out;
    finish(&q);
    *out = q;
    return true;
}

}  // namespace kern
}  // namespace accel_emu
