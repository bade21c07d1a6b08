"""The Reduce* ops: ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2
and ReduceLogSumExp (FORMAT.md op reduce), float32."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import Reduce, ReduceFn
from .context import float_input, normalize_axis
from .elementwise import emit_activation

REDUCE_FUNCTIONS = {
    "ReduceMean": ReduceFn.MEAN, "ReduceSum": ReduceFn.SUM, "ReduceMax": ReduceFn.MAX, "ReduceMin": ReduceFn.MIN,
    "ReduceProd": ReduceFn.PROD, "ReduceSumSquare": ReduceFn.SUM_SQUARE, "ReduceL1": ReduceFn.L1,
    "ReduceL2": ReduceFn.L2, "ReduceLogSumExp": ReduceFn.LOG_SUM_EXP,
}
# A reduction over no axes (noop_with_empty_axes=1) still applies the per-element part, as onnxruntime.
_NOOP_ACTIVATION = {"ReduceSumSquare": ("pow", 2.0), "ReduceL1": ("abs", 0.0), "ReduceL2": ("abs", 0.0)}


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
    ReduceLogSumExp (every opset), float32, over any set of axes: the axes attribute before opset 18
    (ReduceSum: 13), a constant axes input from then on (a computed one is refused); keepdims 0/1;
    noop_with_empty_axes (no axes: the input, with the per-element square or |x| of SumSquare, L1 and
    L2, as onnxruntime). One `reduce` node (a following copy drops the reduced dims when keepdims=0)."""
    x = float_input(ctx, node, 0)
    fn = REDUCE_FUNCTIONS[node.op]
    axes, noop = _reduce_axes(ctx, node)
    y = ctx.output(node)
    if axes is None and noop:
        act = _NOOP_ACTIVATION.get(node.op)
        if act is None:
            ctx.copy_to(x.name, y, x.shape, node.name)
        else:
            emit_activation(ctx, node, x, act[0], act[1])
        return
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
    out = ctx.define(y, x.dtype, kept) if final == kept else ctx.temp(f"{y}_keepdims", x.dtype, kept)
    ctx.emit(op, [x.name], [out], node.name, params=params)
    if out != y:
        ctx.copy_to(out, y, final, node.name)


HANDLERS: dict = dict.fromkeys(REDUCE_FUNCTIONS, lower_reduce)
