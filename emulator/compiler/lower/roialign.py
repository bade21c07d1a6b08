"""RoiAlign (FORMAT.md op 84, roialign)."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import RoiAlign
from .context import float_input, unsupported

_MODES = {"avg": 0, "max": 1}
_COORDS = {"half_pixel": 1, "output_half_pixel": 0}


def lower_roialign(ctx, node):
    """RoiAlign, opsets 10 to 22, float32 X [N, C, H, W] and rois [K, 4] (x1, y1, x2, y2), int64 batch_indices
    [K], which may all be computed at run time: mode avg or max, output_height, output_width, sampling_ratio
    (0: adaptive), spatial_scale, coordinate_transformation_mode half_pixel (the default from opset 16) or
    output_half_pixel (opset 10's). Numerics are onnxruntime's (opset 16; it has no opset 22 kernel, whose
    definition is the same). A batch index outside the batch fails the run (refused at load when constant).

    Emits one roialign node (FORMAT.md op 84)."""
    x = float_input(ctx, node, 0)
    rois = float_input(ctx, node, 1)
    b = ctx.input(node, 2)
    if b.dtype != np.int64:
        raise unsupported(node, f"dtype {b.dtype} of batch_indices '{b.name}' (int64 only)")
    if len(x.shape) != 4:
        raise CompileError(f"{node.label}: input X shape {tuple(x.shape)} is not [N, C, H, W]")
    if len(rois.shape) != 2 or rois.shape[1] != 4 or tuple(b.shape) != (rois.shape[0],):
        raise CompileError(f"{node.label}: rois {tuple(rois.shape)} and batch_indices {tuple(b.shape)} are not "
                           f"[K, 4] and [K]")
    mode = node.attr("mode", "avg")
    if mode not in _MODES:
        raise unsupported(node, f"mode '{mode}'")
    coord = node.attr("coordinate_transformation_mode", "half_pixel" if ctx.opset >= 16 else "output_half_pixel")
    if coord not in _COORDS:
        raise unsupported(node, f"coordinate_transformation_mode '{coord}'")
    oh, ow = int(node.attr("output_height", 1)), int(node.attr("output_width", 1))
    ratio = int(node.attr("sampling_ratio", 0))
    if oh < 1 or ow < 1:
        raise CompileError(f"{node.label}: output_height {oh} and output_width {ow} must be >= 1")
    if not 0 <= ratio <= 1024:
        raise unsupported(node, f"sampling_ratio {ratio} (0 .. 1024)")
    scale = float(node.attr("spatial_scale", 1.0))
    if not np.isfinite(np.float32(scale)):
        raise CompileError(f"{node.label}: spatial_scale {scale} is not a finite float32")
    y = ctx.output(node)
    ctx.define(y, x.dtype, (rois.shape[0], x.shape[1], oh, ow))
    ctx.emit("roialign", [x.name, rois.name, b.name], [y], node.name,
             params=RoiAlign(mode=_MODES[mode], half_pixel=_COORDS[coord], sampling_ratio=ratio,
                             spatial_scale=scale))


HANDLERS: dict = {"RoiAlign": lower_roialign}
