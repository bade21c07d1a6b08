"""GridSample (FORMAT.md op 82, gridsample)."""
from __future__ import annotations

from ..errors import CompileError
from ..op_params import GridSample
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
    y = ctx.output(node)
    ctx.define(y, x.dtype, (x.shape[0], x.shape[1], *grid.shape[1:-1]))
    ctx.emit("gridsample", [x.name, grid.name], [y], node.name,
             params=GridSample(mode=_MODES[mode], padding=_PADDINGS[padding],
                               align_corners=int(node.attr("align_corners", 0))))


HANDLERS: dict = {"GridSample": lower_gridsample}
