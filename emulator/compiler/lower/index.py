"""Index ops: ArgMax, ArgMin, TopK, CumSum, CumProd and OneHot at run time (FORMAT.md ops argreduce, topk,
cumsum, cumprod, onehot), on float32 and integer tensors, and the refusal of Range and ConstantOfShape whose
output shape would be known only at run time. Their integer outputs (int64 indices) feed Gather (data.py),
which takes run-time indices. All-constant nodes never get here: the driver (lower/__init__.py) folds them first."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import ArgReduce, CumProd, CumSum, OneHot, TopK
from .context import F32, INT_DTYPES, normalize_axis, unsupported

I64 = np.dtype(np.int64)
# Input dtypes argreduce and topk compute on (not float16, bool).
_ARG_DTYPES = INT_DTYPES | {F32}
# Input dtypes of cumsum (onnxruntime's, but float64, which accel does not have).
_F32_I32_I64 = frozenset(np.dtype(t) for t in (np.float32, np.int32, np.int64))


def _dtype_in(node, v, allowed, what) -> None:
    if v.dtype not in allowed:
        raise unsupported(node, f"dtype {v.dtype} of input '{v.name}' ({what} only)")


def _scalar_const(ctx, node, i, what) -> int:
    """Input i, a constant integer of one element (a scalar or a 1-element tensor)."""
    a = ctx.const_input(node, i, what)
    if a is None:
        raise CompileError(f"{node.label}: input {what} is required")
    a = np.asarray(a)
    if a.size != 1 or a.dtype.kind not in "iu":
        raise CompileError(f"{node.label}: {what} must be one integer (got {a.dtype} of shape {a.shape})")
    return int(a.reshape(-1)[0])


def lower_argreduce(ctx, node):
    """ArgMax and ArgMin (every opset): float32 or any integer type but bool (int8 to uint64), along
    `axis` (negative counts from the end), keepdims 0/1, select_last_index (opset 12+): the first or last
    index of the extreme; the output is int64. NaN: a line holding NaN gives the index of its first NaN
    (its last with select_last_index), for ArgMax and ArgMin alike, as numpy and torch do; onnxruntime
    instead compares with > and <, so NaN is skipped unless it comes first in the line (then that index).
    float16 inputs are not supported."""
    x = ctx.input(node, 0)
    _dtype_in(node, x, _ARG_DTYPES, "float32 and integer types")
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: input '{x.name}' is a scalar")
    axis = normalize_axis(node, node.attr("axis", 0), rank)
    keep = int(node.attr("keepdims", 1))
    last = int(node.attr("select_last_index", 0)) if ctx.opset >= 12 else 0
    if keep not in (0, 1) or last not in (0, 1):
        raise CompileError(f"{node.label}: keepdims {keep} and select_last_index {last} must be 0 or 1")
    shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape))
    if not keep:
        shape = shape[:axis] + shape[axis + 1:]
    y = ctx.define(ctx.output(node), I64, shape)  # keepdims only changes the dims, not the data
    ctx.emit("argreduce", [x.name], [y], node.name,
             params=ArgReduce(axis=axis, select_min=int(node.op == "ArgMin"), select_last=last))


def lower_topk(ctx, node):
    """TopK (every opset): float32 or any integer type but bool (int8 to uint64); k from the attribute
    (opset 1-9) or the `K` input (opset 10+, a constant of one element, 1 <= k <= the axis' size), `axis`
    (default -1), `largest` (opset 11+; 0 gives the smallest) and `sorted`. The values come in order
    (largest first, or smallest first), equal values by lower index first, NaN above every number, as
    onnxruntime; with sorted=0, where ONNX leaves the order open, they come in that same order
    (onnxruntime's may differ). The indices are int64. float16 inputs and a k computed at run time are
    not supported; k = 0 (empty outputs) is refused."""
    x = ctx.input(node, 0)
    _dtype_in(node, x, _ARG_DTYPES, "float32 and integer types")
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: input '{x.name}' is a scalar")
    axis = normalize_axis(node, node.attr("axis", -1), rank)
    k = int(node.attr("k", 0)) if ctx.opset < 10 else _scalar_const(ctx, node, 1, "K")
    if not 1 <= k <= x.shape[axis]:
        raise CompileError(f"{node.label}: k {k} is outside 1..{x.shape[axis]} (axis {axis} of "
                           f"'{x.name}' {tuple(x.shape)}); empty outputs are not supported")
    largest = int(node.attr("largest", 1)) if ctx.opset >= 11 else 1
    srt = int(node.attr("sorted", 1)) if ctx.opset >= 11 else 1
    if largest not in (0, 1) or srt not in (0, 1):
        raise CompileError(f"{node.label}: largest {largest} and sorted {srt} must be 0 or 1")
    shape = tuple(k if i == axis else d for i, d in enumerate(x.shape))
    outs = []
    for i, (dtype, hint) in enumerate(((x.dtype, "values"), (I64, "indices"))):
        o = node.outputs[i] if i < len(node.outputs) else ""
        outs.append(ctx.define(o, dtype, shape) if o else ctx.temp(f"{node.name}_{hint}", dtype, shape))
    ctx.emit("topk", [x.name], outs, node.name,
             params=TopK(axis=axis, k=k, largest=largest, sorted=srt))


def lower_cumsum(ctx, node):
    """CumSum (opset 11+) and CumProd (opset 26+): float32, int32 or int64, along a constant `axis` input (one
    integer, negative counts from the end), `exclusive` and `reverse` 0/1. Sums and products are taken in order
    in the input's dtype (float32 rounds at every step, integers wrap), as onnxruntime; an exclusive product
    starts at 1. Other dtypes (float16, uint32, uint64) and an axis computed at run time are not supported."""
    x = ctx.input(node, 0)
    _dtype_in(node, x, _F32_I32_I64, "float32, int32 and int64")
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: input '{x.name}' is a scalar")
    axis = normalize_axis(node, _scalar_const(ctx, node, 1, "axis"), rank)
    ex, rev = int(node.attr("exclusive", 0)), int(node.attr("reverse", 0))
    if ex not in (0, 1) or rev not in (0, 1):
        raise CompileError(f"{node.label}: exclusive {ex} and reverse {rev} must be 0 or 1")
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    params = (CumProd if node.op == "CumProd" else CumSum)(axis=axis, exclusive=ex, reverse=rev)
    ctx.emit(node.op.lower(), [x.name], [y], node.name, params=params)


def lower_onehot(ctx, node):
    """OneHot (opset 9+): indices of any integer type or float32 (run time or constant; float ones are
    truncated toward zero, integer types other than int32 and int64 go through a cast to int64), a
    constant `depth` (one number >= 1, a float one truncated), `values` [off, on] of any dtype (run time
    or constant) and `axis` (default -1, from -r-1 to r for indices of rank r). A negative index counts
    from the end (i + depth); one outside -depth..depth-1 gives a line of `off`, as ONNX and onnxruntime.
    A depth computed at run time is not supported (it sets the output's shape)."""
    ind = ctx.input(node, 0)
    depth_a = ctx.const_input(node, 1, "depth")
    if depth_a is None:
        raise CompileError(f"{node.label}: input depth is required")
    depth_a = np.asarray(depth_a)
    if depth_a.size != 1 or depth_a.dtype.kind not in "iuf":
        raise CompileError(f"{node.label}: depth must be one number (got {depth_a.dtype} of shape "
                           f"{depth_a.shape})")
    depth_f = float(depth_a.reshape(-1)[0])
    if not np.isfinite(depth_f) or int(depth_f) < 1:
        raise CompileError(f"{node.label}: depth {depth_f:g} is not >= 1")
    depth = int(depth_f)
    values = ctx.input(node, 2)
    if int(np.prod(values.shape, dtype=np.int64)) != 2:
        raise CompileError(f"{node.label}: values '{values.name}' {tuple(values.shape)} must hold two "
                           f"elements (off, on)")
    rank = len(ind.shape)
    axis = normalize_axis(node, node.attr("axis", -1), rank + 1)
    idx = ind.name
    if ind.dtype.kind in "iu" and ind.dtype not in (np.dtype(np.int32), I64):
        if ind.is_const:
            idx = ctx.const(np.asarray(ind.const).astype(np.int64), f"{ind.name}_i64")
        else:
            idx = ctx.temp(f"{ind.name}_i64", I64, ind.shape)
            ctx.emit("cast", [ind.name], [idx], node.name)
    elif ind.dtype != np.dtype(np.float32) and ind.dtype.kind not in "iu":
        raise unsupported(node, f"dtype {ind.dtype} of indices '{ind.name}' (integer types and float32 only)")
    shape = tuple(ind.shape[:axis]) + (depth,) + tuple(ind.shape[axis:])
    y = ctx.define(ctx.output(node), values.dtype, shape)
    ctx.emit("onehot", [idx, values.name], [y], node.name, params=OneHot(axis=axis, depth=depth))


def lower_range(ctx, node):
    """Range with an input known only at run time is not supported: start, limit and delta all set the
    output's length, max(ceil((limit - start) / delta), 0), which the compiler must know (static shapes),
    so each must be a constant. Range of constants (also ones computed from static shapes, position ids
    Range(0, Shape(x)[1], 1) say) folds at compile time."""
    for i, what in enumerate(("start", "limit", "delta")):
        v = ctx.input(node, i)
        if not v.is_const:
            raise CompileError(f"{node.label}: {what} ('{v.name}') must be a constant (after constant folding): "
                               f"start, limit and delta set the output's length, which must be known when the "
                               f"model is compiled")
    raise CompileError(f"{node.label}: constant inputs were not folded")  # the driver folds them first


def lower_constant_of_shape(ctx, node):
    """ConstantOfShape whose shape input is known only at run time is not supported (static shapes); a
    constant shape, also one computed from static shapes (Shape(x) and the like), folds at compile time."""
    v = ctx.input(node, 0)
    raise CompileError(f"{node.label}: shape ('{v.name}') must be a constant (after constant folding): it is "
                       f"the output's shape, which must be known when the model is compiled")


HANDLERS: dict = {
    "ArgMax": lower_argreduce, "ArgMin": lower_argreduce, "TopK": lower_topk, "CumSum": lower_cumsum,
    "CumProd": lower_cumsum,
    "OneHot": lower_onehot, "Range": lower_range, "ConstantOfShape": lower_constant_of_shape,
}
