"""The normalizations by a window or a norm: LRN, LpNormalization, MeanVarianceNormalization and LpPool, written
with the runtime's existing ops (elementwise functions, reduce, compare and where, an average pool or a depthwise
convolution of ones for a window's sum), so they need no op of their own and run on any format minor."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import Compare, CompareFn, Reduce, ReduceFn
from .context import F32, NodeView, broadcast_shape, float_input, normalize_axis, unsupported
from .conv import lower_conv, lower_pool
from .elementwise import emit_activation


def _binary(ctx, node, op, a: str, b: str, out=None, hint="t") -> str:
    """op(a, b) with numpy broadcasting, into `out` (the node's output) or a temporary."""
    shape = broadcast_shape(node, ctx.g.value(a).shape, ctx.g.value(b).shape)
    y = ctx.define(out, F32, shape) if out else ctx.temp(f"{node.outputs[0]}_{hint}", F32, shape)
    ctx.emit(op, [a, b], [y], node.name)
    return y


def _act(ctx, node, x: str, name: str, alpha=0.0, out=None) -> str:
    """The activation `name` of x (alpha its parameter), into `out` or a temporary."""
    v = ctx.g.value(x)
    return emit_activation(ctx, node, v, name, alpha, out=out or ctx.temp(f"{x}_{name}", F32, v.shape))


def _scalar(ctx, node, value: float, hint: str) -> str:
    return ctx.const(np.array([value], np.float32), f"{node.name}_{hint}")


def _reduce_keep(ctx, node, x: str, fn: int, axes) -> str:
    """The reduction fn of x over the (normalized) axes, keeping them as 1s."""
    shape = ctx.g.value(x).shape
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    y = ctx.temp(f"{x}_reduced", F32, kept)
    ctx.emit("reduce", [x], [y], node.name, params=Reduce(function=fn, axes_mask=sum(1 << a for a in axes)))
    return y


def _window_sum(ctx, node, x: str, weight: np.ndarray, **attrs) -> str:
    """x convolved with the constant weight (the window's sum), through Conv's lowering with the node's own
    geometry attributes (those `attrs` does not set)."""
    w = ctx.const(weight.astype(np.float32), f"{node.name}_window")
    view = NodeView(node, "Conv", [x, w], **attrs)
    out = ctx.g.names.new(f"{node.outputs[0]}_window_sum")
    view.outputs = [out]
    lower_conv(ctx, view)
    return out


def lower_lrn(ctx, node):
    """LRN (every opset), float32 N x C x D1 (x D2): y = x / (bias + alpha / size * sum of x^2 over the
    channels c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2))^beta. The window's mean is an average pool
    of x^2 seen as N x 1 x C x D (padded with zeros, which count), so a NaN or inf reaches only the channels
    whose window holds it, as the spec says (onnxruntime's running sum carries a NaN on to every later
    channel); then mul by alpha, add bias, pow and mul. Within float rounding of onnxruntime's, not bit for
    bit. Even sizes and rank 3 as the spec defines them (onnxruntime refuses both); other ranks are not
    supported."""
    x = float_input(ctx, node, 0)
    size = int(node.attr("size", 0))
    if size < 1:
        raise CompileError(f"{node.label}: size {size} must be >= 1")
    alpha, beta = float(node.attr("alpha", 1e-4)), float(node.attr("beta", 0.75))
    bias = float(node.attr("bias", 1.0))
    if len(x.shape) not in (3, 4):
        raise unsupported(node, f"input rank {len(x.shape)} (LRN of rank 3 or 4 only)")
    n, c = x.shape[:2]
    rest = int(np.prod(x.shape[2:], dtype=np.int64))
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    square = _binary(ctx, node, "mul", x.name, x.name, hint="square")
    planes = ctx.reshape_temp(square, (n, 1, c, rest), node.name, f"{square}_planes")
    view = NodeView(node, "AveragePool", [planes], kernel_shape=[size, 1], strides=[1, 1],
                    pads=[before, 0, after, 0], count_include_pad=1, auto_pad="NOTSET", ceil_mode=0,
                    dilations=[1, 1])
    mean = ctx.g.names.new(f"{node.outputs[0]}_window_mean")
    view.outputs = [mean]
    lower_pool(ctx, view)
    mean = ctx.reshape_temp(mean, x.shape, node.name, f"{mean}_nc")
    scaled = _binary(ctx, node, "mul", mean, _scalar(ctx, node, alpha, "alpha"), hint="scaled")
    base = _binary(ctx, node, "add", scaled, _scalar(ctx, node, bias, "bias"), hint="base")
    factor = _act(ctx, node, base, "pow", -beta)
    _binary(ctx, node, "mul", x.name, factor, out=ctx.output(node))


def lower_lp_normalization(ctx, node):
    """LpNormalization (every opset), float32: x divided by its L1 (p=1) or L2 (p=2) norm along axis
    (default -1): a reduce (l1 or l2) and a div; where the norm is 0 (x all zeros, or squares that underflow)
    the output is +0, as onnxruntime's. Other p are not supported (onnxruntime has none)."""
    x = float_input(ctx, node, 0)
    p = int(node.attr("p", 2))
    if p not in (1, 2):
        raise unsupported(node, f"p={p} (1 or 2 only)")
    if len(x.shape) == 0:
        raise CompileError(f"{node.label}: input is a scalar")
    axis = normalize_axis(node, node.attr("axis", -1), len(x.shape))
    norm = _reduce_keep(ctx, node, x.name, ReduceFn.L1 if p == 1 else ReduceFn.L2, [axis])
    quotient = _binary(ctx, node, "div", x.name, norm, hint="quotient")
    zero_norm = ctx.temp(f"{norm}_is_zero", np.dtype(np.bool_), ctx.g.value(norm).shape)
    ctx.emit("compare", [norm, _scalar(ctx, node, 0.0, "zero")], [zero_norm], node.name,
             params=Compare(function=CompareFn.EQUAL))
    y = ctx.define(ctx.output(node), F32, x.shape)
    ctx.emit("where", [zero_norm, _scalar(ctx, node, 0.0, "zero_out"), quotient], [y], node.name)


def lower_mvn(ctx, node):
    """MeanVarianceNormalization (every opset), float32: (x - mean) / (sqrt(var) + 1e-9) over axes (default
    [0, 2, 3]), var the mean of the squared deviations: reduce, sub, mul, reduce, sqrt, add, div."""
    x = float_input(ctx, node, 0)
    axes = node.attr("axes", [0, 2, 3])
    norm = sorted({normalize_axis(node, a, len(x.shape), "axes") for a in axes})
    if len(norm) != len(axes):
        raise CompileError(f"{node.label}: repeated axes {list(axes)}")
    mean = _reduce_keep(ctx, node, x.name, ReduceFn.MEAN, norm)
    dev = _binary(ctx, node, "sub", x.name, mean, hint="deviation")
    var = _reduce_keep(ctx, node, _binary(ctx, node, "mul", dev, dev, hint="square"), ReduceFn.MEAN, norm)
    std = _binary(ctx, node, "add", _act(ctx, node, var, "sqrt"), _scalar(ctx, node, 1e-9, "eps"), hint="std")
    _binary(ctx, node, "div", dev, std, out=ctx.output(node))


def lower_lp_pool(ctx, node):
    """LpPool (every opset), float32 1-D and 2-D: (sum over the window of |x|^p)^(1/p), p (default 2),
    kernel_shape, strides, pads, auto_pad, dilations; padding adds nothing to the sum. |x|^p, a depthwise
    convolution of ones (the window's sum), then ^(1/p). Not supported: 3-D and higher, ceil_mode=1."""
    x = float_input(ctx, node, 0)
    p = float(node.attr("p", 2))
    if not p > 0:
        raise unsupported(node, f"p={p} (must be > 0)")
    if int(node.attr("ceil_mode", 0)):
        raise unsupported(node, "ceil_mode=1")
    if node.attr("kernel_shape") is None:
        raise CompileError(f"{node.label}: kernel_shape is required")
    kernel = [int(k) for k in node.attr("kernel_shape")]
    if len(x.shape) not in (3, 4) or len(kernel) != len(x.shape) - 2:
        raise unsupported(node, f"input rank {len(x.shape)} with kernel_shape {kernel} (only 1-D and 2-D LpPool)")
    c = x.shape[1]
    powered = _binary(ctx, node, "mul", x.name, x.name, hint="square") if p == 2 else \
        _act(ctx, node, _act(ctx, node, x.name, "abs"), "pow", p)
    total = _window_sum(ctx, node, powered, np.ones((c, 1, *kernel), np.float32), group=c)
    root = "sqrt" if p == 2 else "pow"
    _act(ctx, node, total, root, 0.0 if p == 2 else 1.0 / p, out=ctx.output(node))


HANDLERS: dict = {"LRN": lower_lrn, "LpNormalization": lower_lp_normalization,
                  "MeanVarianceNormalization": lower_mvn, "LpPool": lower_lp_pool}
