"""Per-group normalizations: InstanceNormalization and GroupNormalization, each one groupnorm node
(FORMAT.md op groupnorm) with a scale and a bias per channel."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import GroupNorm
from .context import F32, float_input, unsupported


def _epsilon(node) -> float:
    eps = float(node.attr("epsilon", 1e-5))
    if not eps > 0 or not np.isfinite(eps):
        raise unsupported(node, f"epsilon={eps} (must be > 0)")
    return eps


def _per_channel(ctx, node, i, what, count, channels, default):
    """Input i (`count` values, one per group of channels/count channels) as a float32 tensor of one value
    per channel: a constant is repeated at compile time, a runtime tensor by an expand; `default` fills
    an absent one."""
    v = ctx.input_opt(node, i)
    if v is None:
        return ctx.const(np.full(channels, default, F32), f"{node.name}_{what}")
    if v.dtype != F32:
        raise unsupported(node, f"dtype {v.dtype} of input '{v.name}' (float32 only)")
    if tuple(v.shape) != (count,):
        raise CompileError(f"{node.label}: {what} '{v.name}' has shape {tuple(v.shape)}, expected ({count},)")
    if count == channels:
        return v.name
    rep = channels // count
    if v.is_const:
        return ctx.const(np.repeat(np.asarray(v.const, F32), rep), f"{v.name}_per_channel")
    col = ctx.reshape_temp(v.name, (count, 1), node.name, f"{v.name}_column")
    grown = ctx.temp(f"{v.name}_repeated", F32, (count, rep))
    ctx.emit("expand", [col], [grown], node.name)
    return ctx.reshape_temp(grown, (channels,), node.name, f"{v.name}_per_channel")


def _emit(ctx, node, x, groups, scale, bias, eps) -> None:
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    ctx.emit("groupnorm", [x.name, scale, bias], [y], node.name, params=GroupNorm(groups=groups, epsilon=eps))


def lower_instancenorm(ctx, node):
    """InstanceNormalization (every opset): float32 X [N, C, D1, ...] of rank >= 3, scale and B of one value
    per channel (constants or not), epsilon (> 0). Each (n, c) is normalized over its D1... elements by
    their mean and biased variance; a NaN among them makes them all NaN. One groupnorm node (a group per
    channel); an activation after it (Relu, SiLU as Sigmoid * x, ...) runs in that node.
    """
    x = float_input(ctx, node, 0)
    if len(x.shape) < 3:
        raise unsupported(node, f"input '{x.name}' of rank {len(x.shape)} (rank >= 3: [N, C, D1, ...])")
    c = x.shape[1]
    scale = _per_channel(ctx, node, 1, "scale", c, c, 1.0)
    bias = _per_channel(ctx, node, 2, "B", c, c, 0.0)
    _emit(ctx, node, x, c, scale, bias, _epsilon(node))


def lower_groupnorm(ctx, node):
    """GroupNormalization, opset 18 (scale and bias one value per group) and 21 (one per channel):
    float32 X [N, C, ...] of rank >= 2, num_groups dividing C, epsilon (> 0); scale and bias constants or
    not. Each group of C/num_groups consecutive channels of each n is normalized by the mean and biased
    variance of all its elements (a NaN among them makes them all NaN), then scaled and shifted per
    channel. stash_type (opset 21) is ignored: the statistics are float32. One groupnorm node; an activation
    after it (Relu, SiLU as Sigmoid * x, ...) runs in that node.
    """
    x = float_input(ctx, node, 0)
    if len(x.shape) < 2:
        raise unsupported(node, f"input '{x.name}' of rank {len(x.shape)} (rank >= 2: [N, C, ...])")
    c = x.shape[1]
    groups = node.attr("num_groups")
    if groups is None:
        raise CompileError(f"{node.label}: attribute num_groups is required")
    groups = int(groups)
    if groups < 1 or c % groups:
        raise CompileError(f"{node.label}: num_groups {groups} does not divide the {c} channels of '{x.name}'")
    count = groups if ctx.opset < 21 else c
    scale = _per_channel(ctx, node, 1, "scale", count, c, 1.0)
    bias = _per_channel(ctx, node, 2, "bias", count, c, 0.0)
    _emit(ctx, node, x, groups, scale, bias, _epsilon(node))


HANDLERS: dict = {"InstanceNormalization": lower_instancenorm, "GroupNormalization": lower_groupnorm}
