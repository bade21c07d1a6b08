"""Data movement: Transpose and Concat, and Slice, Split, Gather and GatherElements (also with indices
computed at run time), Expand, Tile, Cast, CastLike, BitCast and Trilu at run time (FORMAT.md ops transpose,
concat, slice, gather, expand, cast, where, gatherelements, bitcast), EyeLike as a constant, on every dtype accel
has where the op says so: float16 and integer tensors flow through these (and through the copies of reshape.py) while
the ops that compute stay float32. All-constant nodes never get here: the driver (lower/__init__.py) folds
them first."""
from __future__ import annotations

import numpy as np
from onnx import helper

from ..accm import MAX_DIMS, dtype_code
from ..errors import CompileError
from ..ir import Value
from ..op_params import Concat, Gather, GatherElements, Slice, Transpose
from .context import broadcast_shape, element_count, normalize_axis, unsupported


def lower_transpose(ctx, node):
    """Transpose (every opset): float32, perm given or the default reversal. Other dtypes are not
    supported.
    """
    x = ctx.input(node, 0)
    rank = len(x.shape)
    perm = node.attr("perm")
    perm = list(range(rank))[::-1] if perm is None else [int(p) for p in perm]
    if sorted(perm) != list(range(rank)):
        raise CompileError(f"{node.label}: perm {perm} is not a permutation of 0..{rank - 1}")
    y = ctx.define(ctx.output(node), x.dtype, tuple(x.shape[p] for p in perm))
    ctx.emit("transpose", [x.name], [y], node.name, params=Transpose(perm=perm))


def lower_concat(ctx, node):
    """Concat (every opset): float32 inputs, axis (default 1 before opset 4; negative allowed);
    empty inputs are dropped. Other dtypes are not supported.
    """
    ins = [ctx.input(node, i) for i in range(len(node.inputs))]
    if not ins:
        raise CompileError(f"{node.label}: no inputs")
    rank = len(ins[0].shape)
    if rank == 0:
        raise CompileError(f"{node.label}: cannot concatenate scalars")
    axis = node.attr("axis", 1 if ctx.opset < 4 else None)
    if axis is None:
        raise CompileError(f"{node.label}: attribute axis is required")
    axis = normalize_axis(node, axis, rank)
    for v in ins:
        if len(v.shape) != rank or any(v.shape[i] != ins[0].shape[i] for i in range(rank) if i != axis):
            raise CompileError(f"{node.label}: input '{v.name}' {v.shape} does not match "
                               f"{ins[0].shape} outside axis {axis}")
    shape = list(ins[0].shape)
    shape[axis] = sum(v.shape[axis] for v in ins)
    live = [v for v in ins if element_count(v.shape) > 0]  # empty inputs contribute nothing
    y = ctx.output(node)
    if len(live) == 1:
        ctx.copy_to(live[0].name, y, shape, node.name)
        return
    ctx.define(y, ins[0].dtype, shape)
    ctx.emit("concat", [v.name for v in live], [y], node.name, params=Concat(axis=axis))


def int_list(values) -> list:
    return [int(v) for v in np.asarray(values).reshape(-1)]


def _nonempty(node, shape, what) -> None:
    if any(int(d) < 1 for d in shape):
        raise CompileError(f"{node.label}: {what} is empty (shape {tuple(shape)}); zero-size tensors are "
                           f"not supported")


def emit_slice(ctx, node, x: Value, y: str, starts, steps, shape, name) -> None:
    """A slice node: y[i, ...] = x[starts + i*steps, ...]; a plain copy when it takes all of x. An empty slice
    holds no data, so it is a constant: what reads it decides (Concat drops it; RotaryEmbedding's body splits off
    an empty part when every dim rotates); only where it would reach run time is it refused."""
    if any(int(d) < 1 for d in shape):
        ctx.g.values[y] = Value(y, x.dtype, tuple(int(d) for d in shape), np.empty(tuple(shape), x.dtype))
        return
    # An axis of one output element reads only its start: its step (ONNX allows INT64_MAX) becomes 1, as the
    # format asks for steps within the axis.
    steps = [1 if n == 1 else int(s) for s, n in zip(steps, shape)]
    if tuple(shape) == tuple(x.shape) and all(s == 0 for s in starts) and all(s == 1 for s in steps):
        ctx.copy_to(x.name, y, shape, name)
        return
    ctx.define(y, x.dtype, shape)
    ctx.emit("slice", [x.name], [y], name, params=Slice(starts=starts, steps=steps))


def slice_range(start, end, step, dim) -> tuple:
    """ONNX Slice's clamping of one axis -> (first index, element count; 0 if empty)."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
    else:
        start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return start, max(0, -((start - end) // step))


def lower_slice(ctx, node):
    """Slice of a runtime tensor, any dtype: opset 1-9 (starts, ends, axes attributes) and opset 10+
    (starts, ends, axes, steps inputs, which must be constants). Negative starts/ends count from the
    end; out-of-range ones (INT64_MAX, INT64_MIN ...) are clamped as ONNX says, also for negative steps;
    axes may be negative, but not repeated. An empty result is a CompileError (zero-size tensors are
    not supported)."""
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: cannot slice a scalar")
    if ctx.opset < 10:
        starts, ends, axes, steps = node.attr("starts"), node.attr("ends"), node.attr("axes"), None
        if starts is None or ends is None:
            raise CompileError(f"{node.label}: attributes starts and ends are required")
    else:
        starts, ends = ctx.const_input(node, 1, "starts"), ctx.const_input(node, 2, "ends")
        if starts is None or ends is None:
            raise CompileError(f"{node.label}: inputs starts and ends are required")
        axes, steps = ctx.const_input(node, 3, "axes"), ctx.const_input(node, 4, "steps")
    starts, ends = int_list(starts), int_list(ends)
    axes = list(range(len(starts))) if axes is None else int_list(axes)
    steps = [1] * len(starts) if steps is None else int_list(steps)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise CompileError(f"{node.label}: starts {starts}, ends {ends}, axes {axes} and steps {steps} "
                           f"differ in length")
    axes = [normalize_axis(node, a, rank, "axes") for a in axes]
    if len(set(axes)) != len(axes):
        raise CompileError(f"{node.label}: repeated axes {axes}")
    first, step, shape = [0] * rank, [1] * rank, list(x.shape)
    for a, s, e, k in zip(axes, starts, ends, steps):
        if k == 0:
            raise CompileError(f"{node.label}: step of axis {a} is 0")
        first[a], shape[a] = slice_range(s, e, k, x.shape[a])
        step[a] = k
    emit_slice(ctx, node, x, ctx.output(node), first, step, shape, node.name)


def _split_sizes(ctx, node, dim, count) -> list:
    if ctx.opset >= 13:
        split = ctx.const_input(node, 1, "split")
    else:
        split = node.attr("split")
        if split is None and ctx.opset == 1:
            split = ctx.const_input(node, 1, "split")
    num = node.attr("num_outputs") if ctx.opset >= 18 else None
    if split is not None:
        if num is not None:
            raise CompileError(f"{node.label}: both split and num_outputs are given")
        sizes = int_list(split)
        if len(sizes) != count or any(s < 0 for s in sizes) or sum(sizes) != dim:
            raise CompileError(f"{node.label}: split {sizes} does not cut a dim of {dim} into {count} parts")
        return sizes
    if num is not None:
        num = int(num)
        if num != count:
            raise CompileError(f"{node.label}: num_outputs {num} but {count} outputs")
        chunk = -(-dim // num)
        sizes = [chunk] * (num - 1) + [dim - chunk * (num - 1)]
        if sizes[-1] < 0:
            raise CompileError(f"{node.label}: num_outputs {num} does not fit a dim of {dim}")
        return sizes
    if dim % count:
        raise CompileError(f"{node.label}: a dim of {dim} does not split evenly into {count} outputs")
    return [dim // count] * count


def lower_split(ctx, node):
    """Split of a runtime tensor, any dtype, into one slice per used output: sizes from the `split`
    attribute (opset 1-12; opset 1's `split` input too), the `split` input (opset 13+, a constant), the
    `num_outputs` attribute (opset 18+; the last chunk may be smaller) or else equal parts. An empty
    output that is used is a CompileError."""
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: cannot split a scalar")
    axis = normalize_axis(node, node.attr("axis", 0), rank)
    sizes = _split_sizes(ctx, node, x.shape[axis], len(node.outputs))
    offset = 0
    for i, (y, size) in enumerate(zip(node.outputs, sizes)):
        if y and y in ctx.used:
            first, shape = [0] * rank, list(x.shape)
            first[axis], shape[axis] = offset, size
            emit_slice(ctx, node, x, y, first, [1] * rank, shape, f"{node.name}/{i}" if i else node.name)
        offset += size


def lower_gather(ctx, node):
    """Gather of a runtime or constant tensor, any dtype, along `axis` (negative counts from the end),
    with int32 or int64 indices of any rank (a scalar index removes the axis), constant or computed at
    run time (a graph input of token ids into a constant embedding table, say). A negative index counts
    from the end. A constant index outside -n..n-1 (n the axis' size) is a CompileError; one that comes
    at run time fails the run, as onnxruntime's does (InvalidArgumentError naming the node, the index, its
    position and the range). Constant data with constant indices folds at compile time."""
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: cannot gather from a scalar")
    axis = normalize_axis(node, node.attr("axis", 0), rank)
    ind = ctx.input(node, 1)
    dim = x.shape[axis]
    y = ctx.output(node)
    if not ind.is_const:
        if ind.dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise CompileError(f"{node.label}: indices '{ind.name}' have dtype {ind.dtype}, not int32 or int64")
        shape = tuple(x.shape[:axis]) + tuple(ind.shape) + tuple(x.shape[axis + 1:])
        _nonempty(node, shape, f"output '{y}'")
        ctx.define(y, x.dtype, shape)
        ctx.emit("gather", [x.name, ind.name], [y], node.name, params=Gather(axis=axis))
        return
    idx = np.asarray(ind.const)
    if idx.dtype.kind not in "iu":
        raise CompileError(f"{node.label}: indices '{ind.name}' have dtype {idx.dtype}, not an integer type")
    idx = idx.astype(np.int64)
    bad = idx[(idx < -dim) | (idx >= dim)]
    if bad.size:
        raise CompileError(f"{node.label}: index {int(bad.reshape(-1)[0])} is out of range for axis {axis} "
                           f"of '{x.name}' {tuple(x.shape)}")
    idx = np.where(idx < 0, idx + dim, idx)
    shape = tuple(x.shape[:axis]) + idx.shape + tuple(x.shape[axis + 1:])
    _nonempty(node, shape, f"output '{y}'")
    if idx.ndim == 1 and idx.size == dim and np.array_equal(idx, np.arange(dim)):
        ctx.copy_to(x.name, y, shape, node.name)
        return
    ctx.define(y, x.dtype, shape)
    ctx.emit("gather", [x.name, ctx.const(idx, f"{y}_indices")], [y], node.name, params=Gather(axis=axis))


def lower_expand(ctx, node):
    """Expand of a runtime tensor, any dtype, to a constant shape with ONNX's bidirectional broadcast
    (the result's shape is the numpy broadcast of the input's and the given one)."""
    x = ctx.input(node, 0)
    target = ctx.const_input(node, 1, "shape")
    if target is None:
        raise CompileError(f"{node.label}: input shape is required")
    shape = broadcast_shape(node, x.shape, int_list(target))
    y = ctx.output(node)
    _nonempty(node, shape, f"output '{y}'")
    if shape == tuple(x.shape):
        ctx.copy_to(x.name, y, shape, node.name)
        return
    ctx.define(y, x.dtype, shape)
    ctx.emit("expand", [x.name], [y], node.name)


def lower_tile(ctx, node):
    """Tile (opset 6+) of a runtime tensor, any dtype, with constant repeats (>= 1): a reshape that
    gives each repeated axis a size-1 companion, an expand of the companions, and a reshape back. The
    input rank plus the number of repeated axes must be at most 8."""
    if ctx.opset < 6:
        raise unsupported(node, "opset < 6 (tiles and axis inputs)")
    x = ctx.input(node, 0)
    reps = ctx.const_input(node, 1, "repeats")
    if reps is None:
        raise CompileError(f"{node.label}: input repeats is required")
    reps = int_list(reps)
    if len(reps) != len(x.shape) or any(r < 0 for r in reps):
        raise CompileError(f"{node.label}: repeats {reps} do not fit input '{x.name}' {tuple(x.shape)}")
    y = ctx.output(node)
    shape = tuple(d * r for d, r in zip(x.shape, reps))
    _nonempty(node, shape, f"output '{y}'")
    if all(r == 1 for r in reps):
        ctx.copy_to(x.name, y, shape, node.name)
        return
    split, grown = [], []
    for d, r in zip(x.shape, reps):
        split += [1, d] if r > 1 else [d]
        grown += [r, d] if r > 1 else [d]
    if len(split) > MAX_DIMS:
        raise unsupported(node, f"repeats {reps} on rank {len(x.shape)} (needs rank {len(split)} > {MAX_DIMS})")
    t = ctx.reshape_temp(x.name, split, node.name, f"{y}_split")
    e = ctx.temp(f"{y}_tiled", x.dtype, grown)
    ctx.emit("expand", [t], [e], node.name)
    ctx.copy_to(e, y, shape, node.name)


def lower_bitcast(ctx, node):
    """BitCast (opset 26): x's bytes read as the dtype `to` of the same element size (bool is one byte), between
    any two of accel's dtypes (not float64, bfloat16 and the other types accel has not)."""
    x = ctx.input(node, 0)
    to = node.attr("to")
    if to is None:
        raise CompileError(f"{node.label}: attribute 'to' is required")
    try:
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(to))
    except (KeyError, TypeError, ValueError):
        raise CompileError(f"{node.label}: 'to' = {to} is not an ONNX tensor type") from None
    if dtype_code(dtype) is None:
        raise unsupported(node, f"bitcast to {dtype}: accel has no {dtype} tensors")
    if dtype.itemsize != x.dtype.itemsize:
        raise CompileError(f"{node.label}: {x.dtype} and {dtype} differ in size ({x.dtype.itemsize} and "
                           f"{dtype.itemsize} bytes)")
    y = ctx.output(node)
    ctx.define(y, dtype, x.shape)
    ctx.emit("bitcast", [x.name], [y], node.name)


def lower_cast(ctx, node):
    """Cast and CastLike of a runtime tensor between any two of float32, float16, int8, int16, int32,
    int64, uint8, uint16, uint32, uint64 and bool, with ONNX's semantics (float to integer truncates
    toward zero; to bool is x != 0; out-of-range values saturate, NaN gives 0). A cast to the same dtype
    is a copy. Other target types (float64, bfloat16, float8, string) are not supported; Cast's
    `saturate` (float8 only) is ignored. CastLike of a constant folds to a constant."""
    x = ctx.input(node, 0)
    if node.op == "Cast":
        try:
            to = np.dtype(helper.tensor_dtype_to_np_dtype(int(node.attr("to"))))
        except Exception:
            raise unsupported(node, f"to={node.attr('to')}") from None
    else:
        to = ctx.input(node, 1).dtype
    if dtype_code(to) is None:
        raise CompileError(f"{node.label}: unsupported cast of '{x.name}' to {to}: accel has no {to} tensors")
    y = ctx.output(node)
    if x.is_const:  # CastLike(constant, runtime tensor): only the dtype of the second one matters
        ctx.g.values[y] = Value(y, to, tuple(x.shape), np.asarray(x.const).astype(to))
    elif to == x.dtype:
        ctx.copy_to(x.name, y, x.shape, node.name)
    else:
        ctx.define(y, to, x.shape)
        ctx.emit("cast", [x.name], [y], node.name)


def lower_gather_elements(ctx, node):
    """GatherElements (opset 11+): X of any dtype, indices of X's rank (every dim but axis' at most X's), int32
    or int64, constant or computed at run time, along `axis` (negative counts from the end); Y is shaped as the
    indices. A negative index counts from the end; a constant one outside -n..n-1 (n the axis' size) is a
    CompileError, one that comes at run time fails the run, as for Gather."""
    x, ind = ctx.input(node, 0), ctx.input(node, 1)
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: cannot gather from a scalar")
    axis = normalize_axis(node, node.attr("axis", 0), rank)
    if len(ind.shape) != rank or any(i != axis and d > x.shape[i] for i, d in enumerate(ind.shape)):
        raise CompileError(f"{node.label}: indices '{ind.name}' {tuple(ind.shape)} are not of '{x.name}' "
                           f"{tuple(x.shape)}'s rank with every dim but axis {axis}'s at most its")
    if ind.is_const:  # int32 or int64: the importer holds indices to ONNX's types
        dim = x.shape[axis]
        idx = np.asarray(ind.const)
        bad = idx[(idx < -dim) | (idx >= dim)]
        if bad.size:
            raise CompileError(f"{node.label}: index {int(bad.reshape(-1)[0])} is out of range for axis {axis} "
                               f"of '{x.name}' {tuple(x.shape)}")
    y = ctx.output(node)
    _nonempty(node, tuple(ind.shape), f"output '{y}'")
    ctx.define(y, x.dtype, tuple(ind.shape))
    ctx.emit("gatherelements", [x.name, ind.name], [y], node.name, params=GatherElements(axis=axis))


def lower_trilu(ctx, node):
    """Trilu (opset 14+): the upper (upper=1, the default) or lower triangle of the last two dims of X (rank >= 2,
    any dtype accel has), the others 0, from diagonal k (a constant input, default 0; k > 0 above the main
    diagonal): one `where` node over a constant mask of the last two dims, which broadcasts over the others. A k
    computed at run time is not supported."""
    x = ctx.input(node, 0)
    if len(x.shape) < 2:
        raise CompileError(f"{node.label}: input '{x.name}' has rank {len(x.shape)}, Trilu takes rank >= 2")
    k = 0
    if len(node.inputs) > 1 and node.inputs[1]:
        ka = ctx.const_input(node, 1, "k")
        if np.asarray(ka).size != 1:
            raise CompileError(f"{node.label}: k must be one element, got shape {np.asarray(ka).shape}")
        k = int(np.asarray(ka).reshape(-1)[0])
    n, m = x.shape[-2:]
    tri = np.triu if int(node.attr("upper", 1)) else np.tril
    mask = ctx.const(tri(np.ones((n, m), np.bool_), k), f"{node.name}_mask")
    zero = ctx.const(np.zeros((), x.dtype), f"{node.name}_zero")
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    ctx.emit("where", [mask, x.name, zero], [y], node.name)


def lower_eyelike(ctx, node):
    """EyeLike (opset 9+): ones on diagonal k of a 2-D output shaped as the input, of the `dtype` attribute's type
    (the input's by default): a function of the shape alone, which is known at compile time, so a constant."""
    x = ctx.input(node, 0)
    if len(x.shape) != 2:
        raise CompileError(f"{node.label}: input '{x.name}' has rank {len(x.shape)}, EyeLike takes rank 2")
    elem = node.attr("dtype")
    dtype = x.dtype if elem is None else helper.tensor_dtype_to_np_dtype(int(elem))
    y = ctx.output(node)
    ctx.g.values[y] = Value(y, np.dtype(dtype), tuple(x.shape),
                            np.eye(x.shape[0], x.shape[1], int(node.attr("k", 0)), dtype=dtype))


HANDLERS: dict = {
    "Transpose": lower_transpose, "Concat": lower_concat,
    "Slice": lower_slice, "Split": lower_split, "Gather": lower_gather, "Expand": lower_expand,
    "Tile": lower_tile, "Cast": lower_cast, "CastLike": lower_cast, "Trilu": lower_trilu,
    "EyeLike": lower_eyelike, "GatherElements": lower_gather_elements, "BitCast": lower_bitcast,
}
