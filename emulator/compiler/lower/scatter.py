"""Gathering and scattering by index tuples: GatherND, ScatterND, ScatterElements, the deprecated Scatter,
TensorScatter and MaxUnpool (a scatter into zeros) at run time (FORMAT.md ops gathernd, scatternd,
scatterelements, tensorscatter), on every dtype accel has (their reductions on float32 and the integer dtypes).
Indices may be constants or computed at run time, as Gather's (data.py): int32 or int64, a negative one counting
from the end; a constant one outside -n..n-1 is a CompileError, one that comes at run time fails the run
(InvalidArgumentError naming the node, the index, its position and the range), as onnxruntime fails it.
All-constant nodes never get here: the driver (lower/__init__.py) folds them first."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import GatherND, ScatterElements, ScatterND, ScatterReduction, TensorScatter
from .context import F32, INT_DTYPES, normalize_axis, unsupported

_INDEX_DTYPES = frozenset(np.dtype(t) for t in (np.int32, np.int64))
# What a reduction computes on (onnxruntime also takes float16 for some and bool for add and mul: not here).
_REDUCING_DTYPES = INT_DTYPES | {F32}


def _indices(node, ind, bounds) -> None:
    """Refuse indices of another dtype than int32 and int64, and constant ones outside -n..n-1, n its bound (an
    array broadcasting against the indices)."""
    if ind.dtype not in _INDEX_DTYPES:
        raise unsupported(node, f"dtype {ind.dtype} of indices '{ind.name}' (int32 and int64 only)")
    if ind.is_const:
        idx = np.asarray(ind.const).astype(np.int64)
        n = np.broadcast_to(np.asarray(bounds, dtype=np.int64), idx.shape)
        bad = (idx < -n) | (idx >= n)
        if bad.any():
            at = tuple(int(i) for i in np.argwhere(bad)[0])
            raise CompileError(f"{node.label}: index {int(idx[at])} at {at} of '{ind.name}' is outside "
                               f"-{int(n[at])}..{int(n[at]) - 1}")


def _reduction(ctx, node, x) -> int:
    """The reduction attribute (opset 16+; max and min 18+) as a ScatterReduction code."""
    name = node.attr("reduction", "none") if ctx.opset >= 16 else "none"
    name = name.decode() if isinstance(name, bytes) else str(name)
    if name not in ScatterReduction.BY_NAME:
        raise unsupported(node, f"reduction '{name}'")
    if name != "none" and x.dtype not in _REDUCING_DTYPES:
        raise unsupported(node, f"reduction '{name}' on dtype {x.dtype} of '{x.name}' (float32 and integer "
                                f"dtypes only)")
    return ScatterReduction.BY_NAME[name]


def lower_gathernd(ctx, node):
    """GatherND (opset 11+, batch_dims 12+): data of any dtype, indices int64 (or int32) whose last dim k
    (1 .. rank - batch_dims) indexes the data's dims after the first batch_dims (those equal in both); the
    output is the indices' shape without its last dim, then the data's dims after batch_dims + k. A negative
    index counts from the end; one out of range fails as Gather's (a constant one at compile time)."""
    x, ind = ctx.input(node, 0), ctx.input(node, 1)
    r, q = len(x.shape), len(ind.shape)
    b = int(node.attr("batch_dims", 0)) if ctx.opset >= 12 else 0
    if q < 1 or r < 1:
        raise CompileError(f"{node.label}: data '{x.name}' and indices '{ind.name}' must have rank >= 1")
    if not 0 <= b < min(r, q) or tuple(x.shape[:b]) != tuple(ind.shape[:b]):
        raise CompileError(f"{node.label}: batch_dims {b} does not fit data {tuple(x.shape)} and indices "
                           f"{tuple(ind.shape)} (their first batch_dims dims must be equal)")
    k = int(ind.shape[-1])
    if not 1 <= k <= r - b:
        raise CompileError(f"{node.label}: the indices' last dim {k} is outside 1..{r - b}")
    _indices(node, ind, np.asarray(x.shape[b:b + k]))
    shape = tuple(ind.shape[:-1]) + tuple(x.shape[b + k:])
    y = ctx.define(ctx.output(node), x.dtype, shape)
    ctx.emit("gathernd", [x.name, ind.name], [y], node.name, params=GatherND(batch_dims=b))


def lower_scatternd(ctx, node):
    """ScatterND (opset 11+; reduction 16+, max and min 18+): data of any dtype (a reduction: float32 or an
    integer dtype), indices int64 (or int32) whose last dim k indexes the data's first k dims, updates shaped
    indices.shape[:-1] + data.shape[k:]. Updates are applied in the order of the indices: with reduction none
    the last of duplicate indices wins (ONNX leaves it open; onnxruntime's order), add and mul accumulate
    (integers wrap), max and min follow onnxruntime (a NaN update is taken, a NaN in the data replaced). A
    negative index counts from the end; one out of range fails as Gather's. float16 and bool with a reduction
    are not supported."""
    x, ind, u = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)
    red = _reduction(ctx, node, x)
    if len(ind.shape) < 1:
        raise CompileError(f"{node.label}: indices '{ind.name}' are a scalar")
    k = int(ind.shape[-1])
    if not 1 <= k <= len(x.shape):
        raise CompileError(f"{node.label}: the indices' last dim {k} is outside 1..{len(x.shape)}")
    want = tuple(ind.shape[:-1]) + tuple(x.shape[k:])
    if tuple(u.shape) != want or u.dtype != x.dtype:
        raise CompileError(f"{node.label}: updates '{u.name}' {u.dtype} {tuple(u.shape)} are not {x.dtype} {want}")
    _indices(node, ind, np.asarray(x.shape[:k]))
    y = ctx.define(ctx.output(node), x.dtype, tuple(x.shape))
    ctx.emit("scatternd", [x.name, ind.name, u.name], [y], node.name, params=ScatterND(reduction=red))


def lower_scatterelements(ctx, node):
    """ScatterElements (opset 11+; reduction 16+, max and min 18+) and the deprecated Scatter (opset 9-10, its
    older name, no reduction): data of any dtype (a reduction: float32 or an integer dtype), indices int32 or
    int64 and updates of one shape, of the data's rank, each dim but axis' at most the data's; along `axis` (negative
    counts from the end). Updates apply in the indices' C order, duplicates as ScatterND's. A negative index
    counts from the end; one out of range fails as Gather's."""
    x, ind, u = ctx.input(node, 0), ctx.input(node, 1), ctx.input(node, 2)
    red = _reduction(ctx, node, x) if node.op == "ScatterElements" else 0
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: cannot scatter into a scalar")
    axis = normalize_axis(node, node.attr("axis", 0), rank)
    if (len(ind.shape) != rank or tuple(ind.shape) != tuple(u.shape) or u.dtype != x.dtype
            or any(i != axis and d > x.shape[i] for i, d in enumerate(ind.shape))):
        raise CompileError(f"{node.label}: indices '{ind.name}' {tuple(ind.shape)} and updates '{u.name}' "
                           f"{u.dtype} {tuple(u.shape)} must be one shape of data '{x.name}' {tuple(x.shape)}'s "
                           f"rank, each dim but axis {axis}'s at most its, and the updates {x.dtype}")
    _indices(node, ind, x.shape[axis])
    y = ctx.define(ctx.output(node), x.dtype, tuple(x.shape))
    ctx.emit("scatterelements", [x.name, ind.name, u.name], [y], node.name,
             params=ScatterElements(axis=axis, reduction=red, nonnegative=0))


def lower_tensorscatter(ctx, node):
    """TensorScatter (opset 24+): a cache X [batch, .., max_len (axis), ..] of any dtype, an update of its shape
    but a length at most max_len along `axis` (default -2; not the batch axis 0), and write_indices int64
    [batch] (optional: 0). Mode linear writes batch b's update at positions W[b] .. W[b] + len - 1, circular
    modulo max_len. A W[b] < 0, or past max_len - len (linear), at run time fails the run, as onnxruntime's;
    a constant one is a CompileError."""
    x, u = ctx.input(node, 0), ctx.input(node, 1)
    w = ctx.input_opt(node, 2)
    rank = len(x.shape)
    if rank < 2:
        raise CompileError(f"{node.label}: past_cache '{x.name}' has rank {rank}, TensorScatter takes rank >= 2")
    axis = normalize_axis(node, node.attr("axis", -2), rank)
    if axis == 0:
        raise CompileError(f"{node.label}: axis 0 is the batch axis")
    mode = node.attr("mode", "linear")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("linear", "circular"):
        raise unsupported(node, f"mode '{mode}'")
    if (len(u.shape) != rank or u.dtype != x.dtype or u.shape[axis] > x.shape[axis]
            or any(u.shape[i] != x.shape[i] for i in range(rank) if i != axis)):
        raise CompileError(f"{node.label}: update '{u.name}' {u.dtype} {tuple(u.shape)} is not past_cache "
                           f"'{x.name}' {x.dtype} {tuple(x.shape)} with at most its length along axis {axis}")
    ins = [x.name, u.name]
    if w is not None:
        if w.dtype != np.dtype(np.int64) or tuple(w.shape) != (x.shape[0],):
            raise CompileError(f"{node.label}: write_indices '{w.name}' {w.dtype} {tuple(w.shape)} are not int64 "
                               f"[{x.shape[0]}]")
        if w.is_const:
            wi = np.asarray(w.const)
            hi = None if mode == "circular" else x.shape[axis] - u.shape[axis]
            if (wi < 0).any() or (hi is not None and (wi > hi).any()):
                raise CompileError(f"{node.label}: write_indices {wi.tolist()} are outside 0.."
                                   f"{'' if hi is None else hi}")
        ins.append(w.name)
    y = ctx.define(ctx.output(node), x.dtype, tuple(x.shape))
    ctx.emit("tensorscatter", ins, [y], node.name,
             params=TensorScatter(axis=axis, circular=int(mode == "circular")))


def lower_maxunpool(ctx, node):
    """MaxUnpool (opset 9+): X [N, C, spatial...] of any dtype, indices int64 of X's shape (run time or constant:
    MaxPool's second output, positions in the whole output tensor flattened) and output_shape (optional, a
    constant: the output's full shape; the indices are then positions in it flattened, as onnxruntime takes them,
    where onnx's reference places them on the default grid) or the default (in - 1) * stride + kernel - pads per
    spatial dim. The output is zero but at the indices, where it takes X's values (a duplicate index: the last,
    as onnxruntime):
    a scatterelements into zeros, over the tensors flattened. An index outside 0..size-1 (a negative one too)
    fails the run as onnxruntime's; a constant one is a CompileError."""
    x, ind = ctx.input(node, 0), ctx.input(node, 1)
    rank = len(x.shape)
    if rank < 3:
        raise CompileError(f"{node.label}: input '{x.name}' has rank {rank}, MaxUnpool takes N, C and spatial dims")
    if tuple(ind.shape) != tuple(x.shape) or ind.dtype != np.dtype(np.int64):
        raise CompileError(f"{node.label}: indices '{ind.name}' {ind.dtype} {tuple(ind.shape)} are not int64 of "
                           f"the input's shape {tuple(x.shape)}")
    shape_a = ctx.const_input(node, 2, "output_shape")
    if shape_a is not None:
        shape = tuple(int(d) for d in np.asarray(shape_a).reshape(-1))
        if len(shape) != rank or shape[:2] != tuple(x.shape[:2]):
            raise CompileError(f"{node.label}: output_shape {shape} is not [N, C, spatial...] of input "
                               f"{tuple(x.shape)}")
    else:
        s = rank - 2
        kernel = [int(k) for k in node.attr("kernel_shape", [])]
        strides = [int(v) for v in node.attr("strides", [1] * s)]
        pads = [int(v) for v in node.attr("pads", [0] * (2 * s))]
        if len(kernel) != s or len(strides) != s or len(pads) != 2 * s:
            raise CompileError(f"{node.label}: kernel_shape {kernel}, strides {strides} and pads {pads} do not "
                               f"have {s} spatial dims")
        shape = tuple(x.shape[:2]) + tuple((x.shape[2 + d] - 1) * strides[d] + kernel[d] - pads[d] - pads[s + d]
                                           for d in range(s))
    total = int(np.prod(shape, dtype=np.int64))
    if total < 1 or any(d < 1 for d in shape):
        raise CompileError(f"{node.label}: output shape {shape} is empty")
    _indices(node, ind, total)
    if ind.is_const and (np.asarray(ind.const) < 0).any():
        raise CompileError(f"{node.label}: indices '{ind.name}' hold a negative one (MaxUnpool's are 0..{total - 1})")
    n = int(np.prod(x.shape, dtype=np.int64))
    zero = ctx.const(np.zeros((1,), x.dtype), f"{node.name}_zero")
    zeros = ctx.temp(f"{node.name}_zeros", x.dtype, (total,))
    ctx.emit("expand", [zero], [zeros], node.name)
    flat_x = ctx.reshape_temp(x.name, (n,), node.name, f"{x.name}_flat")
    flat_i = ctx.reshape_temp(ind.name, (n,), node.name, f"{ind.name}_flat")
    flat_y = ctx.temp(f"{node.name}_flat", x.dtype, (total,))
    ctx.emit("scatterelements", [zeros, flat_i, flat_x], [flat_y], node.name,
             params=ScatterElements(axis=0, reduction=0, nonnegative=1))
    ctx.copy_to(flat_y, ctx.output(node), shape, node.name)


HANDLERS: dict = {
    "MaxUnpool": lower_maxunpool,
    "GatherND": lower_gathernd, "ScatterND": lower_scatternd, "ScatterElements": lower_scatterelements,
    "Scatter": lower_scatterelements, "TensorScatter": lower_tensorscatter,
}
