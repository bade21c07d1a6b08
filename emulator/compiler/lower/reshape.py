"""The ops that only reshape, each a copy: Identity, Dropout, Flatten, Reshape, Squeeze and Unsqueeze, on
tensors of any accel dtype."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..ir import Value
from .context import element_count, normalize_axis, unsupported


def lower_identity(ctx, node):
    """Identity and Dropout (every opset) on tensors of any accel dtype, as a copy; Dropout in inference
    mode (ratio ignored), or in training mode with ratio 0 (it drops nothing): its mask is then all true, a
    constant. Not supported: sequence and optional inputs, training_mode true with a ratio above 0 (random).
    """
    x = ctx.input(node, 0)
    if node.op == "Dropout":
        if ctx.opset >= 12:
            tm = ctx.const_input(node, 2, "training_mode")
            if tm is not None and bool(np.asarray(tm).reshape(-1)[0]):
                ratio = ctx.const_input(node, 1, "ratio")
                if ratio is None or float(np.asarray(ratio).reshape(-1)[0]) != 0:
                    raise unsupported(node, "training_mode=True (random) with a ratio above 0")
        if len(node.outputs) > 1 and node.outputs[1]:
            if ctx.opset < 7:
                ctx.forbid_outputs_from(node, 1, "Dropout mask (before opset 7: of x's dtype)")
            mask = node.outputs[1]
            ctx.g.values[mask] = Value(mask, np.dtype(bool), tuple(x.shape), np.ones(x.shape, bool))
    ctx.copy_to(x.name, ctx.output(node), x.shape, node.name)


def lower_flatten(ctx, node):
    """Flatten (every opset): any accel dtype, axis in [-rank, rank] (a copy).
    """
    x = ctx.input(node, 0)
    rank = len(x.shape)
    axis = normalize_axis(node, node.attr("axis", 1), rank, allow_end=True)
    ctx.copy_to(x.name, ctx.output(node), (element_count(x.shape[:axis]), element_count(x.shape[axis:])), node.name)


def reshape_shape(node, in_shape, target, allowzero) -> tuple:
    target = [int(v) for v in target]  # plain ints, in messages too
    out, infer = [], -1
    for i, s in enumerate(target):
        if s == 0 and not allowzero:
            if i >= len(in_shape):
                raise CompileError(f"{node.label}: shape {list(target)} copies dim {i}, but the "
                                   f"input {tuple(in_shape)} has rank {len(in_shape)}")
            out.append(int(in_shape[i]))
        elif s == -1:
            if infer >= 0:
                raise CompileError(f"{node.label}: shape {list(target)} has more than one -1")
            infer = i
            out.append(1)
        elif s < -1:
            raise CompileError(f"{node.label}: shape {list(target)} has a negative dim")
        else:
            out.append(s)
    total = element_count(in_shape)
    if infer >= 0:
        known = element_count(out)
        if known == 0 or total % known:
            raise CompileError(f"{node.label}: cannot reshape {tuple(in_shape)} to {list(target)}")
        out[infer] = total // known
    if element_count(out) != total:
        raise CompileError(f"{node.label}: cannot reshape {tuple(in_shape)} to {list(target)}")
    return tuple(out)


def lower_reshape(ctx, node):
    """Reshape (every opset): any accel dtype (a copy), the target from the shape attribute (opset < 5) or a
    constant shape input (opset >= 5), with 0 (copy the dim) and one -1 (inferred), and allowzero
    (opset >= 14). A shape computed at run time and empty results are not supported.
    """
    x = ctx.input(node, 0)
    if ctx.opset < 5:
        target = node.attr("shape")
        if target is None:
            raise CompileError(f"{node.label}: attribute shape is required")
    else:
        target = ctx.const_input(node, 1, "shape")
        if target is None:
            raise CompileError(f"{node.label}: input shape is required")
        target = np.asarray(target).reshape(-1)
    allowzero = int(node.attr("allowzero", 0)) if ctx.opset >= 14 else 0
    ctx.copy_to(x.name, ctx.output(node), reshape_shape(node, x.shape, target, allowzero), node.name)


def _axes(ctx, node, opset_input):
    if ctx.opset >= opset_input:
        a = ctx.const_input(node, 1, "axes")
        return None if a is None else [int(v) for v in np.asarray(a).reshape(-1)]
    a = node.attr("axes")
    return None if a is None else [int(v) for v in a]


def lower_squeeze(ctx, node):
    """Squeeze (every opset): any accel dtype (a copy); axes from the attribute (opset < 13) or a constant
    input (opset >= 13), negative allowed; no axes removes every dim of size 1. Axes computed at run
    time are not supported.
    """
    x = ctx.input(node, 0)
    axes = _axes(ctx, node, 13)
    rank = len(x.shape)
    if axes is None:
        shape = tuple(d for d in x.shape if d != 1)
    else:
        axes = {normalize_axis(node, a, rank, "axes") for a in axes}
        for a in axes:
            if x.shape[a] != 1:
                raise CompileError(f"{node.label}: cannot squeeze axis {a} of size {x.shape[a]}")
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    ctx.copy_to(x.name, ctx.output(node), shape, node.name)


def lower_unsqueeze(ctx, node):
    """Unsqueeze (every opset): any accel dtype (a copy); axes from the attribute (opset < 13) or a constant
    input (opset >= 13), negative allowed. Axes computed at run time are not supported.
    """
    x = ctx.input(node, 0)
    axes = _axes(ctx, node, 13)
    if axes is None:
        raise CompileError(f"{node.label}: axes are required")
    out_rank = len(x.shape) + len(axes)
    axes = [normalize_axis(node, a, out_rank, "axes") for a in axes]
    if len(set(axes)) != len(axes):
        raise CompileError(f"{node.label}: repeated axes {axes}")
    it = iter(x.shape)
    shape = tuple(1 if i in axes else next(it) for i in range(out_rank))
    ctx.copy_to(x.name, ctx.output(node), shape, node.name)


HANDLERS: dict = {
    "Identity": lower_identity, "Dropout": lower_identity, "Flatten": lower_flatten, "Reshape": lower_reshape,
    "Squeeze": lower_squeeze, "Unsqueeze": lower_unsqueeze,
}
