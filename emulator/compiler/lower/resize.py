"""Resize and Upsample (FORMAT.md op 17, resize)."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import NearestRounding, Resize, ResizeCoord, ResizeMode
from .context import element_count, normalize_axis, unsupported
from .geometry import resize_from_scales, resize_from_sizes
from .resample import emit_resample

# ONNX's attribute values -> the op's (emulator/op_schema.py); ONNX abbreviates one of them.
_MODES = ResizeMode.BY_NAME
_COORDS = {**ResizeCoord.BY_NAME, "tf_half_pixel_for_nn": ResizeCoord.TF_HALF_PIXEL_FOR_NEAREST}
del _COORDS["tf_half_pixel_for_nearest"]
_ROUNDINGS = NearestRounding.BY_NAME
_ASYMMETRIC, _FLOOR, _CEIL = ResizeCoord.ASYMMETRIC, NearestRounding.FLOOR, NearestRounding.CEIL


def _values(node, arr, what, count):
    """A constant 1-D input as a list of `count` values."""
    arr = np.asarray(arr).reshape(-1)
    if arr.size != count:
        raise CompileError(f"{node.label}: {what} has {arr.size} values, expected {count}")
    return arr.tolist()


def _mode(node) -> int:
    mode = node.attr("mode", "nearest")
    if mode not in _MODES:
        raise unsupported(node, f"mode '{mode}'")
    return _MODES[mode]


def _simple_rounding(node, scales) -> int:
    """Resize-10 and Upsample round nearest coordinates down when upscaling and up when downscaling (as
    onnxruntime does); one node has one rounding, so its resized axes must all go the same way."""
    down = {float(s) < 1 for s in scales if float(s) != 1}
    if len(down) > 1:
        raise unsupported(node, "nearest resize upscaling one axis and downscaling the other (opset < 11 "
                                "rounds them differently)")
    return _CEIL if down == {True} else _FLOOR


def _emit_resize(ctx, node, x, out_shape, scales, mode, coord, rounding):
    """One resize node over the last two axes (the input viewed as NCHW), or a copy when the shape does
    not change."""
    rank = len(x.shape)
    spatial = range(max(rank - 2, 0), rank)
    for i in range(rank):
        if out_shape[i] < 1:
            raise CompileError(f"{node.label}: output shape {tuple(out_shape)} has an empty dim")
        if i not in spatial and (out_shape[i] != x.shape[i] or (scales[i] != 1 and x.shape[i] != 1)):
            raise unsupported(node, f"resizing axis {i} of input shape {tuple(x.shape)} with scale "
                                    f"{float(scales[i])} (only the last two axes, H and W, are resized)")
    y = ctx.output(node)
    if tuple(out_shape) == tuple(x.shape):  # onnxruntime copies then, whatever the scales
        ctx.copy_to(x.name, y, x.shape, node.name)
        return
    oh, ow = (out_shape[-2], out_shape[-1]) if rank >= 2 else (1, out_shape[0])
    sh, sw = (scales[-2], scales[-1]) if rank >= 2 else (1.0, scales[0])
    params = Resize(mode=mode, coord_transform=coord,
                    nearest_rounding=rounding if mode == ResizeMode.NEAREST else 0, scale_h=float(sh),
                    scale_w=float(sw))
    if rank == 4:
        ctx.define(y, x.dtype, out_shape)
        ctx.emit("resize", [x.name], [y], node.name, params=params)
        return
    h, w = (x.shape[-2], x.shape[-1]) if rank >= 2 else (1, x.shape[0])
    xin = ctx.reshape_temp(x.name, (element_count(x.shape[:-2]), 1, h, w), node.name, f"{x.name}_nchw")
    y4 = ctx.temp(f"{y}_nchw", x.dtype, (element_count(x.shape[:-2]), 1, oh, ow))
    ctx.emit("resize", [xin], [y4], node.name, params=params)
    ctx.copy_to(y4, y, out_shape, node.name)


def lower_resize(ctx, node):
    """Resize, opsets 10 to 19+, float32, any rank: mode nearest (nearest_mode round_prefer_floor,
    round_prefer_ceil, floor, ceil), linear or cubic (cubic_coeff_a, exclude_outside); antialias=1 for linear
    and cubic; coordinate_transformation_mode half_pixel, asymmetric, align_corners, pytorch_half_pixel,
    tf_half_pixel_for_nn, half_pixel_symmetric, tf_crop_and_resize (constant roi, extrapolation_value);
    scales or sizes as constant inputs; opset 18 axes and keep_aspect_ratio_policy (stretch, not_larger,
    not_smaller). Opset 10 is asymmetric with onnxruntime's rounding (down when upscaling, up when
    downscaling). Numerics follow onnxruntime where it departs from the ONNX reference by a rounding error:
    coordinates in float, ties within 1e-6, and an output shaped as the input is a copy; antialias follows
    onnxruntime's filter windows (Pillow's). Not supported: non-constant scales, sizes or roi; opset 10
    resizing an axis before the last two.

    Emits one resize node (FORMAT.md op 17), with reshapes around it for ranks other than 4."""
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: input is a scalar")
    if ctx.opset < 11:
        mode = _mode(node)
        scales = ctx.const_input(node, 1, "scales")
        if scales is None:
            raise CompileError(f"{node.label}: input scales is required")
        out, scales = resize_from_scales(node, x.shape, _values(node, scales, "scales", rank))
        rounding = _simple_rounding(node, scales[-2:]) if mode == _MODES["nearest"] else 0
        _emit_resize(ctx, node, x, out, scales, mode, _ASYMMETRIC, rounding)
        return
    mode_name = node.attr("mode", "nearest")
    if mode_name not in ("nearest", "linear", "cubic"):
        raise unsupported(node, f"mode '{mode_name}'")
    coord = node.attr("coordinate_transformation_mode", "half_pixel")
    if coord not in _COORDS and coord != "tf_crop_and_resize":
        raise unsupported(node, f"coordinate_transformation_mode '{coord}'")
    nearest_mode = node.attr("nearest_mode", "round_prefer_floor")
    if nearest_mode not in _ROUNDINGS:
        raise unsupported(node, f"nearest_mode '{nearest_mode}'")
    axes, policy, antialias = list(range(rank)), "stretch", False
    if ctx.opset >= 18:
        antialias = bool(int(node.attr("antialias", 0)))
        if antialias and mode_name == "nearest":
            raise unsupported(node, "antialias=1 with mode nearest (onnxruntime refuses it too)")
        policy = node.attr("keep_aspect_ratio_policy", "stretch")
        if policy not in ("stretch", "not_larger", "not_smaller"):
            raise unsupported(node, f"keep_aspect_ratio_policy '{policy}'")
        if node.attr("axes") is not None:
            axes = [normalize_axis(node, a, rank, "axes") for a in node.attr("axes")]
            if len(set(axes)) != len(axes):
                raise CompileError(f"{node.label}: repeated axes {list(node.attr('axes'))}")
    exclude_outside = bool(int(node.attr("exclude_outside", 0)))
    if exclude_outside and mode_name != "cubic" and not antialias:  # onnxruntime refuses it too
        raise CompileError(f"{node.label}: exclude_outside=1 needs mode cubic or antialias=1")
    scales = ctx.const_input(node, 2, "scales")
    sizes = ctx.const_input(node, 3, "sizes")
    scales = None if scales is None or scales.size == 0 else _values(node, scales, "scales", len(axes))
    sizes = None if sizes is None or sizes.size == 0 else _values(node, sizes, "sizes", len(axes))
    if (scales is None) == (sizes is None):
        raise CompileError(f"{node.label}: exactly one of scales and sizes must be given")
    if scales is not None:
        full = [1.0] * rank
        for a, s in zip(axes, scales):
            full[a] = s
        if any(not s > 0 for s in full):
            raise CompileError(f"{node.label}: scales {scales} must be > 0")
        out, full = resize_from_scales(node, x.shape, full)
    else:
        full = list(x.shape)
        for a, s in zip(axes, sizes):
            full[a] = int(s)
        if any(s < 1 for s in full):
            raise CompileError(f"{node.label}: sizes {sizes} must be >= 1")
        out, full = resize_from_sizes(x.shape, full, axes, policy)
    outer_resized = any(out[i] != x.shape[i] or (full[i] != 1 and x.shape[i] != 1) for i in range(rank - 2))
    if mode_name == "cubic" or antialias or coord == "tf_crop_and_resize" or outer_resized:
        if x.dtype != np.float32:  # the resample op filters in float32
            raise unsupported(node, f"dtype {x.dtype} of input '{x.name}' with mode '{mode_name}', antialias, "
                                    f"tf_crop_and_resize or an axis before the last two resized (float32 only)")
        emit_resample(ctx, node, x, out, full, mode_name, coord, rounding=nearest_mode,
                      roi=_roi(ctx, node, rank, axes) if coord == "tf_crop_and_resize" else None,
                      cubic_a=float(node.attr("cubic_coeff_a", -0.75)), exclude_outside=exclude_outside,
                      antialias=antialias, extrapolation=float(node.attr("extrapolation_value", 0.0)))
        return
    _emit_resize(ctx, node, x, out, full, _MODES[mode_name], _COORDS[coord], _ROUNDINGS[nearest_mode])


def _roi(ctx, node, rank, axes):
    """tf_crop_and_resize's roi as [starts of every axis, ends of every axis] (opset 18's axes form names
    only those axes; the others keep 0 .. 1), from the constant input 1."""
    roi = ctx.const_input(node, 1, "roi")
    full = [0.0] * rank + [1.0] * rank
    if roi is None or roi.size == 0:
        return full
    vals = _values(node, roi, "roi", 2 * len(axes))
    for j, a in enumerate(axes):
        full[a], full[rank + a] = vals[j], vals[len(axes) + j]
    return full


def lower_upsample(ctx, node):
    """Upsample, opsets 7 to 9, float32, any rank, resizing at most the last two axes: mode nearest or
    linear (bilinear), scales >= 1 from the attribute (opset 7) or a constant input (opset 9), asymmetric
    coordinates as onnxruntime computes them. Not supported: opsets before 7 (experimental attributes),
    resizing N or C (or any axis before the last two).

    Emits one resize node (FORMAT.md op 17)."""
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if ctx.opset < 7:
        raise unsupported(node, f"opset {ctx.opset} (Upsample 7 and 9 are supported)")
    if rank == 0:
        raise CompileError(f"{node.label}: input is a scalar")
    mode = _mode(node)
    scales = node.attr("scales") if ctx.opset < 9 else ctx.const_input(node, 1, "scales")
    if scales is None:
        raise CompileError(f"{node.label}: scales are required")
    scales = _values(node, scales, "scales", rank)
    if any(not s >= 1 for s in scales):
        raise CompileError(f"{node.label}: scales {scales} must be >= 1")
    out, scales = resize_from_scales(node, x.shape, scales)
    _emit_resize(ctx, node, x, out, scales, mode, _ASYMMETRIC, _FLOOR)


HANDLERS: dict = {"Resize": lower_resize, "Upsample": lower_upsample}
