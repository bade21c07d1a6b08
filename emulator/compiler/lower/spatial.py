"""Spatial rearrangements: Pad (FORMAT.md op pad, after a slice where pads are negative), and DepthToSpace
and SpaceToDepth (a reshape, a transpose and a reshape), on every dtype accel has."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import Pad, PadMode, Transpose
from .context import element_count, normalize_axis, unsupported
from .data import emit_slice, int_list


def _pad_mode(ctx, node) -> int:
    mode = node.attr("mode", "constant")
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in PadMode.BY_NAME:
        raise unsupported(node, f"mode '{mode}' (constant, reflect, edge or wrap)")
    if mode == "wrap" and ctx.opset < 19:
        raise CompileError(f"{node.label}: mode 'wrap' is Pad's from opset 19 on (the model's opset is {ctx.opset})")
    return PadMode.BY_NAME[mode]


def _pads_and_value(ctx, node, x):
    """(pads as [begin..., end...] over every axis of x, the constant value: None for 0, a numpy scalar of
    x's dtype for a constant, or the name of a one-element runtime tensor)."""
    rank = len(x.shape)
    if ctx.opset < 11:
        pads = node.attr("pads" if ctx.opset >= 2 else "paddings")
        if pads is None:
            raise CompileError(f"{node.label}: attribute {'pads' if ctx.opset >= 2 else 'paddings'} is required")
        pads, axes = [int(p) for p in pads], None
        value = node.attr("value", 0.0)
    else:
        pads = ctx.const_input(node, 1, "pads")
        if pads is None:
            raise CompileError(f"{node.label}: input pads is required")
        pads = int_list(pads)
        axes = ctx.const_input(node, 3, "axes") if ctx.opset >= 18 else None
        v = ctx.input_opt(node, 2)
        if v is None:
            value = 0
        elif v.is_const:
            if np.size(v.const) != 1:
                raise CompileError(f"{node.label}: constant_value '{v.name}' has {np.size(v.const)} elements, not 1")
            value = np.asarray(v.const).reshape(-1)[0]
        else:
            if element_count(v.shape) != 1:
                raise CompileError(f"{node.label}: constant_value '{v.name}' {tuple(v.shape)} is not one element")
            if v.dtype != x.dtype:
                raise CompileError(f"{node.label}: constant_value '{v.name}' is {v.dtype}, the data {x.dtype}")
            value = v.name
    if axes is not None:
        axes = [normalize_axis(node, a, rank, "axes") for a in int_list(axes)]
        if len(set(axes)) != len(axes):
            raise CompileError(f"{node.label}: repeated axes {axes}")
    else:
        axes = list(range(rank))
    if len(pads) != 2 * len(axes):
        raise CompileError(f"{node.label}: {len(pads)} pads for {len(axes)} axes (needs {2 * len(axes)})")
    full = [0] * (2 * rank)
    for k, a in enumerate(axes):
        full[a], full[a + rank] = pads[k], pads[k + len(axes)]
    if not isinstance(value, str):
        with np.errstate(all="ignore"):
            value = np.asarray(value).astype(x.dtype).reshape(())
        if not value.any():
            value = None if x.dtype.kind != "f" or not np.signbit(value) else value
    return full, value


def lower_pad(ctx, node):
    """Pad (opset 1-2's `paddings`/`pads` and `value` attributes, opset 11+'s pads, constant_value and (18+)
    axes inputs), on a tensor of any accel dtype and rank, modes constant, reflect, edge and wrap (opset
    19+). Pads and axes must be constants; constant_value may be computed at run time. Negative pads crop
    (a slice, before the padding, as onnxruntime does: the other pads of that axis fill from what is
    left). Reflect mirrors without repeating the edge element, also for pads longer than the axis (as
    numpy's and ONNX's reference: period 2*(d-1); an axis of 1 element repeats it). Not supported: pads
    that crop an axis to nothing, and an empty output.
    """
    x = ctx.input(node, 0)
    rank = len(x.shape)
    mode = _pad_mode(ctx, node)
    pads, value = _pads_and_value(ctx, node, x)
    begin, end = pads[:rank], pads[rank:]
    y = ctx.output(node)
    shape = [d + b + e for d, b, e in zip(x.shape, begin, end)]
    cropped = [d - max(-b, 0) - max(-e, 0) for d, b, e in zip(x.shape, begin, end)]
    for i, (d, c) in enumerate(zip(shape, cropped)):
        if c < 1 or d < 1:
            raise unsupported(node, f"pads {pads} on input '{x.name}' {tuple(x.shape)}: axis {i} would be "
                                    f"{'empty' if d < 1 else 'cropped to nothing'} (zero-size tensors)")
    src = x
    if any(p < 0 for p in pads):
        grow = any(p > 0 for p in pads)
        dst = ctx.g.names.new(f"{y}_cropped") if grow else y
        emit_slice(ctx, node, x, dst, [max(-b, 0) for b in begin], [1] * rank, cropped, node.name)
        if not grow:
            return
        src = ctx.g.value(dst)
    if not any(p > 0 for p in pads):
        ctx.copy_to(src.name, y, shape, node.name)
        return
    inputs = [src.name]
    if mode == PadMode.CONSTANT and value is not None:
        inputs.append(value if isinstance(value, str) else ctx.const(value.reshape(1), f"{y}_pad_value"))
    ctx.define(y, x.dtype, shape)
    ctx.emit("pad", inputs, [y], node.name, params=Pad(begin=[max(b, 0) for b in begin], mode=mode))


def _blocksize(node, x) -> int:
    if len(x.shape) != 4:
        raise CompileError(f"{node.label}: input '{x.name}' {tuple(x.shape)} is not 4-D")
    b = node.attr("blocksize")
    if b is None:
        raise CompileError(f"{node.label}: attribute blocksize is required")
    b = int(b)
    if b < 1:
        raise CompileError(f"{node.label}: blocksize {b} is not >= 1")
    return b


def _shuffle(ctx, node, x, split, perm, shape) -> None:
    """x reshaped to `split`, transposed by perm and reshaped to `shape` (the node's output)."""
    y = ctx.output(node)
    t = ctx.reshape_temp(x.name, split, node.name, f"{y}_blocks")
    tt = ctx.temp(f"{y}_moved", x.dtype, [split[p] for p in perm])
    ctx.emit("transpose", [t], [tt], node.name, params=Transpose(perm=perm))
    ctx.copy_to(tt, y, shape, node.name)


def lower_depth_to_space(ctx, node):
    """DepthToSpace (every opset): a 4-D [N, C, H, W] tensor of any accel dtype to [N, C/b^2, H*b, W*b],
    mode DCR (the default; opset 1's only one) or CRD (opset 11+); C must be a multiple of b^2. A copy,
    a transpose and a copy.
    """
    x = ctx.input(node, 0)
    b = _blocksize(node, x)
    n, c, h, w = x.shape
    mode = _mode(ctx, node, 11)
    if c % (b * b):
        raise CompileError(f"{node.label}: {c} channels are not a multiple of blocksize^2 = {b * b}")
    shape = (n, c // (b * b), h * b, w * b)
    if b == 1:
        ctx.copy_to(x.name, ctx.output(node), shape, node.name)
    elif mode == "DCR":
        _shuffle(ctx, node, x, (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2), shape)
    else:
        _shuffle(ctx, node, x, (n, c // (b * b), b, b, h, w), (0, 1, 4, 2, 5, 3), shape)


def _mode(ctx, node, since) -> str:
    mode = node.attr("mode", "DCR") if ctx.opset >= since else "DCR"
    mode = mode.decode() if isinstance(mode, bytes) else str(mode)
    if mode not in ("DCR", "CRD"):
        raise unsupported(node, f"mode '{mode}' (DCR or CRD)")
    return mode


def lower_space_to_depth(ctx, node):
    """SpaceToDepth (every opset): a 4-D [N, C, H, W] tensor of any accel dtype to [N, C*b^2, H/b, W/b],
    mode DCR (the default; the only one before opset 28) or CRD (opset 28+); H and W must be multiples of
    b. A copy, a transpose and a copy.
    """
    x = ctx.input(node, 0)
    b = _blocksize(node, x)
    n, c, h, w = x.shape
    mode = _mode(ctx, node, 28)
    if h % b or w % b:
        raise CompileError(f"{node.label}: H {h} and W {w} are not multiples of blocksize {b}")
    shape = (n, c * b * b, h // b, w // b)
    if b == 1:
        ctx.copy_to(x.name, ctx.output(node), shape, node.name)
    else:
        _shuffle(ctx, node, x, (n, c, h // b, b, w // b, b),
                 (0, 3, 5, 1, 2, 4) if mode == "DCR" else (0, 1, 3, 5, 2, 4), shape)


HANDLERS: dict = {"Pad": lower_pad, "DepthToSpace": lower_depth_to_space, "SpaceToDepth": lower_space_to_depth}
