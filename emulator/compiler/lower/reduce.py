"""The Reduce* ops: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2,
ReduceLogSum and ReduceLogSumExp (FORMAT.md op reduce), float32; ReduceMax and ReduceMin of bool too."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import Reduce, ReduceFn
from .context import F32, float_input, normalize_axis, unsupported
from .elementwise import emit_activation

REDUCE_FUNCTIONS = {
    "ReduceMean": ReduceFn.MEAN, "ReduceSum": ReduceFn.SUM, "ReduceMax": ReduceFn.MAX, "ReduceMin": ReduceFn.MIN,
    "ReduceProd": ReduceFn.PROD, "ReduceSumSquare": ReduceFn.SUM_SQUARE, "ReduceL1": ReduceFn.L1,
    "ReduceL2": ReduceFn.L2, "ReduceLogSumExp": ReduceFn.LOG_SUM_EXP, "ReduceLogSum": ReduceFn.SUM,
}
# What follows the reduction: ReduceLogSum is the log of the sum (as onnxruntime computes it).
_AFTER = {"ReduceLogSum": "log"}
# A reduction over no axes (noop_with_empty_axes=1) still applies the per-element part, as onnxruntime.
_NOOP_ACTIVATION = {"ReduceSumSquare": ("pow", 2.0), "ReduceL1": ("abs", 0.0), "ReduceL2": ("abs", 0.0),
                    "ReduceLogSum": ("log", 0.0)}
_BOOL = np.dtype(np.bool_)


def _reduce_axes(ctx, node):
    """(axes or None for 'all', noop_with_empty_axes) from the attribute (before opset 18; ReduceSum
    before 13) or the constant input."""
    since = 13 if node.op == "ReduceSum" else 18
    if ctx.opset >= since:
        a = ctx.const_input(node, 1, "axes")
        axes = None if a is None or np.asarray(a).size == 0 else [int(v) for v in np.asarray(a).reshape(-1)]
        return axes, int(node.attr("noop_with_empty_axes", 0))
    a = node.attr("axes")
    return (None if not a else [int(v) for v in a]), 0


def lower_reduce(ctx, node):
    """ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2,
    ReduceLogSum, ReduceLogSumExp (every opset), float32, over any set of axes: the axes attribute before
    opset 18 (ReduceSum: 13), a constant axes input from then on (a computed one is refused); keepdims 0/1;
    noop_with_empty_axes (no axes: the input, with the per-element square, |x| or log of SumSquare, L1, L2 and
    LogSum, as onnxruntime). ReduceMax and ReduceMin also of bool (opset 20: any and all), through float32.
    One `reduce` node (ReduceLogSum: its sum, then log; a following copy drops the reduced dims when
    keepdims=0). An empty reduction (a dim of 0) cannot be expressed: accel's dims are >= 1."""
    x = ctx.input(node, 0)
    if 0 in tuple(x.shape):
        raise unsupported(node, f"empty reduction: input '{x.name}' has shape {tuple(x.shape)} (accel's dims are "
                                f">= 1)")
    if x.dtype == _BOOL and node.op in ("ReduceMax", "ReduceMin"):
        _reduce_bool(ctx, node, x)
        return
    _reduce(ctx, node, float_input(ctx, node, 0), ctx.output(node))


def _reduce_bool(ctx, node, x):
    """A bool ReduceMax (any) or ReduceMin (all): the reduction of x as 0.0 and 1.0, cast back to bool."""
    xf = ctx.temp(f"{x.name}_f32", F32, x.shape)
    ctx.emit("cast", [x.name], [xf], node.name)
    y = ctx.output(node)
    yf = _reduce(ctx, node, ctx.g.value(xf), None)
    ctx.define(y, _BOOL, ctx.g.value(yf).shape)
    ctx.emit("cast", [yf], [y], node.name)


def _reduce(ctx, node, x, y):
    """Lowers the reduction of float32 x into y (None: a float32 temporary); returns the output's name."""
    fn = REDUCE_FUNCTIONS[node.op]
    axes, noop = _reduce_axes(ctx, node)
    if y is None:
        y = ctx.g.names.new(f"{node.outputs[0]}_f32")  # defined below, once its shape is known
    if axes is None and noop:
        act = _NOOP_ACTIVATION.get(node.op)
        if act is None:
            ctx.copy_to(x.name, y, x.shape, node.name)
        else:
            emit_activation(ctx, node, x, act[0], act[1], out=y)
        return y
    keep = int(node.attr("keepdims", 1))
    rank = len(x.shape)
    if rank == 0:  # a scalar: reduced as a one-element vector
        x = ctx.g.value(ctx.reshape_temp(x.name, (1,), node.name, f"{x.name}_1d"))
        axes, rank, keep = [0], 1, 0
    elif axes is None:
        axes = list(range(rank))
    norm = sorted(normalize_axis(node, a, rank, "axes") for a in axes)
    if len(set(norm)) != len(norm):
        raise CompileError(f"{node.label}: repeated axes {axes}")
    kept = tuple(1 if i in norm else d for i, d in enumerate(x.shape))
    final = kept if keep else tuple(d for i, d in enumerate(x.shape) if i not in norm)
    op, params = "reduce", Reduce(function=fn, axes_mask=sum(1 << a for a in norm))
    after = _AFTER.get(node.op)
    direct = final == kept and after is None
    out = ctx.define(y, x.dtype, kept) if direct else ctx.temp(f"{y}_keepdims", x.dtype, kept)
    ctx.emit(op, [x.name], [out], node.name, params=params)
    if after is not None:  # fused into the reduce by the activation pass
        target = y if final == kept else None
        out = emit_activation(ctx, node, ctx.g.value(out), after, out=target or ctx.temp(f"{y}_{after}", F32, kept))
    if out != y:
        ctx.copy_to(out, y, final, node.name)
    return y


HANDLERS: dict = dict.fromkeys(REDUCE_FUNCTIONS, lower_reduce)
