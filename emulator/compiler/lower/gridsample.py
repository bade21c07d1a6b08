"""GridSample (FORMAT.md op 82, gridsample)."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import GridSample, Transpose
from .context import float_input, unsupported

# Opset 16 names the modes bilinear and bicubic; opset 20 linear and cubic.
_MODES = {"nearest": 0, "linear": 1, "bilinear": 1, "cubic": 2, "bicubic": 2}
_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def lower_gridsample(ctx, node):
    """GridSample, opsets 16 to 22, float32: a 4-D input sampled on a [N, OH, OW, 2] grid, or (opset 20+)
    a 5-D one on a [N, OD, OH, OW, 3] grid; mode nearest, linear (bilinear) or cubic (bicubic), padding_mode
    zeros, border or reflection, align_corners; the grid may be computed at run time. Numerics are
    onnxruntime's: neighbours padded by index, nearest rounding halves to even. A grid coordinate that is not
    finite gives NaN (onnxruntime's result is undefined there). Not supported: cubic on a 5-D input
    (onnxruntime has none either), other ranks.

    Emits one gridsample node (FORMAT.md op 82)."""
    x = float_input(ctx, node, 0)
    grid = float_input(ctx, node, 1)
    rank = len(x.shape)
    mode = node.attr("mode", "linear" if ctx.opset >= 20 else "bilinear")
    if mode not in _MODES:
        raise unsupported(node, f"mode '{mode}'")
    padding = node.attr("padding_mode", "zeros")
    if padding not in _PADDINGS:
        raise unsupported(node, f"padding_mode '{padding}'")
    if rank not in (4, 5) or (rank == 5 and ctx.opset < 20):
        raise unsupported(node, f"input rank {rank} (4-D, and 5-D from opset 20)")
    if rank == 5 and _MODES[mode] == 2:
        raise unsupported(node, "mode cubic on a 5-D input (onnxruntime has none either)")
    r = rank - 2
    if len(grid.shape) != rank or grid.shape[0] != x.shape[0] or grid.shape[-1] != r:
        raise CompileError(f"{node.label}: grid shape {tuple(grid.shape)} is not [N, ..., {r}] for input shape "
                           f"{tuple(x.shape)}")
    align = node.attr("align_corners", 0)
    if align not in (0, 1):
        raise CompileError(f"{node.label}: align_corners {align} is not 0 or 1")
    y = ctx.output(node)
    ctx.define(y, x.dtype, (x.shape[0], x.shape[1], *grid.shape[1:-1]))
    ctx.emit("gridsample", [x.name, grid.name], [y], node.name,
             params=GridSample(mode=_MODES[mode], padding=_PADDINGS[padding], align_corners=int(align)))


def _base_coordinates(n: int, align_corners: bool) -> np.ndarray:
    """The n normalized coordinates of an axis of n elements: their centres in [-1, 1] (align_corners:
    the first and last at -1 and 1, and one element at 1, as onnxruntime's), computed in double and rounded
    once."""
    i = np.arange(n, dtype=np.float64)
    if align_corners:
        return -1 + 2 * i / (n - 1) if n > 1 else np.ones(1)
    return (2 * i + 1) / n - 1


def lower_affinegrid(ctx, node):
    """AffineGrid, opset 20+, float32 theta [N, 2, 3] (2-D) or [N, 3, 4] (3-D) and a constant size; the grid
    GridSample takes: each output point's normalized (x, y[, z], 1) times theta transposed (with
    align_corners an axis of one element sits at 1, as in onnxruntime). Not supported: a size computed at
    run time.

    Emits a transpose of theta and one matmul against the constant base grid, then a reshape."""
    theta = float_input(ctx, node, 0)
    size = ctx.const_input(node, 1, "size")
    if size is None:
        raise CompileError(f"{node.label}: input size is required")
    size = [int(v) for v in np.asarray(size).reshape(-1)]
    if len(size) not in (4, 5):
        raise CompileError(f"{node.label}: size {size} is not [N, C, H, W] or [N, C, D, H, W]")
    r = len(size) - 2
    n, spatial = size[0], size[2:]
    if tuple(theta.shape) != (n, r, r + 1):
        raise CompileError(f"{node.label}: theta shape {tuple(theta.shape)} is not {(n, r, r + 1)} for size {size}")
    if any(d < 1 for d in spatial):
        raise CompileError(f"{node.label}: size {size} has an empty spatial dim")
    align = bool(int(node.attr("align_corners", 0)))
    # Points in C order over (D,) H, W; each row (x, y[, z], 1): x runs along W, the last axis.
    axes = [_base_coordinates(d, align) for d in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([m.reshape(-1) for m in reversed(mesh)] + [np.ones(mesh[0].size)], axis=1).astype(np.float32)
    tt = ctx.temp(f"{node.name}_theta_t", theta.dtype, (n, r + 1, r))
    ctx.emit("transpose", [theta.name], [tt], node.name, params=Transpose(perm=[0, 2, 1]))
    flat = ctx.temp(f"{node.name}_points", theta.dtype, (n, base.shape[0], r))
    ctx.emit("matmul", [ctx.const(base, f"{node.name}_base"), tt], [flat], node.name)
    ctx.copy_to(flat, ctx.output(node), (n, *spatial, r), node.name)


HANDLERS: dict = {"GridSample": lower_gridsample, "AffineGrid": lower_affinegrid}
