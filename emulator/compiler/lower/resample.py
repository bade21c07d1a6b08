"""Resize's forms the resize op (17) does not compute: mode cubic, antialias=1 and coordinate_transformation_mode
tf_crop_and_resize, as one resample node (FORMAT.md op 81) per resized axis, with the taps and weights
computed here in float32 with onnxruntime's expressions (onnxruntime/core/providers/cpu/tensor/upsample*.{h,cc}),
and the outputs onnxruntime extrapolates set by a where node.

Every function of this file works on one axis: `in_len` input elements to `out_len` outputs at ONNX scale
`scale` (out / in when the model gave sizes). Each returns (taps, weights, outside): taps [out_len, K] int32 with
-1 for padding, weights [out_len, K] float32, outside [out_len] bool (the outputs tf_crop_and_resize
extrapolates)."""
from __future__ import annotations

import math

import numpy as np

from ..op_params import Resample
f32 = np.float32

# onnxruntime treats a nearest coordinate within 1e-6 of a half as a tie (as the resize op does).
_TIE = f32(1e-6)


def coordinate(coord: str, o: int, scale, in_len: int, out_len: int, roi=(0.0, 1.0)) -> np.float32:
    """The input coordinate of output o, as onnxruntime's GetOriginalCoordinate computes it (float32, but
    half_pixel_symmetric and a one-element tf_crop_and_resize evaluate part of it in double)."""
    x, s, li, lo = f32(o), f32(scale), f32(in_len), f32(out_len)
    if s == 1:
        return x  # onnxruntime maps an unscaled axis's output o to input o whatever the mode
    if coord == "asymmetric":
        return x / s
    if coord == "pytorch_half_pixel":
        return (x + f32(0.5)) / s - f32(0.5) if lo > 1 else f32(0)
    if coord == "tf_half_pixel_for_nn":
        return (x + f32(0.5)) / s
    if coord == "align_corners":
        return f32(0) if lo == 1 else x * (li - f32(1)) / (lo - f32(1))
    if coord == "tf_crop_and_resize":
        start, end = f32(roi[0]), f32(roi[1])
        if lo > 1:
            return start * (li - f32(1)) + (x * (end - start) * (li - f32(1))) / (lo - f32(1))
        return f32(0.5 * float(start + end) * float(li - f32(1)))
    if coord == "half_pixel_symmetric":
        adjustment = lo / (s * li)
        offset = li / f32(2) * (f32(1) - adjustment)
        return f32(float(offset) + (o + 0.5) / float(s) - 0.5)
    return (x + f32(0.5)) / s - f32(0.5)  # half_pixel


def _outside(c, in_len) -> bool:
    return bool(c < 0 or c > f32(in_len - 1))


def _pack(rows, out_len):
    """Rows of (tap, weight) lists as the padded [out_len, K] tables."""
    k = max(1, max((len(r) for r in rows), default=1))
    taps = np.full((out_len, k), -1, np.int32)
    weights = np.zeros((out_len, k), np.float32)
    for o, r in enumerate(rows):
        for j, (t, w) in enumerate(r):
            taps[o, j], weights[o, j] = t, w
    return taps, weights


def nearest_axis(coord, rounding, scale, in_len, out_len, roi):
    """Nearest (tf_crop_and_resize only): the input element of the rounded coordinate, clamped."""
    rows, outside = [], np.zeros(out_len, bool)
    for o in range(out_len):
        c = coordinate(coord, o, scale, in_len, out_len, roi)
        outside[o] = _outside(c, in_len)
        c = min(max(c, f32(-1)), f32(in_len)) if np.isfinite(c) else f32(0)
        lo = math.floor(c)
        if rounding == "floor":
            i = lo
        elif rounding == "ceil":
            i = math.ceil(c)
        elif abs(c - f32(lo) - f32(0.5)) <= _TIE:
            i = lo + (1 if rounding == "round_prefer_ceil" else 0)
        else:
            i = lo + 1 if c - f32(lo) > f32(0.5) else lo
        rows.append([(min(max(i, 0), in_len - 1), f32(1))])
    return (*_pack(rows, out_len), outside)


def linear_axis(coord, scale, in_len, out_len, roi):
    """Linear without antialias: the two neighbours of the coordinate clamped to [0, in-1], each weighed by
    the other's distance (0.5 each when they are one element), as onnxruntime's bilinear setup."""
    rows, outside = [], np.zeros(out_len, bool)
    last = f32(in_len - 1)
    for o in range(out_len):
        c = coordinate(coord, o, scale, in_len, out_len, roi)
        outside[o] = _outside(c, in_len)
        c = max(f32(0), min(c, last)) if np.isfinite(c) else f32(0)
        i1 = min(int(c), in_len - 1)
        i2 = min(i1 + 1, in_len - 1)
        w1, w2 = (f32(0.5), f32(0.5)) if i1 == i2 else (abs(c - f32(i2)), abs(c - f32(i1)))
        rows.append([(i1, w1), (i2, w2)])
    return (*_pack(rows, out_len), outside)


def cubic_coefficients(s, a):
    """Keys' cubic convolution weights of the four taps around a coordinate of fraction s, as onnxruntime's
    GetCubicCoeffs (float32)."""
    s, a = abs(f32(s)), f32(a)
    one, two = f32(1), f32(2)
    t0, t3 = s + one, two - s
    return [((a * t0 - f32(5) * a) * t0 + f32(8) * a) * t0 - f32(4) * a,
            ((a + two) * s - (a + f32(3))) * s * s + one,
            ((a + two) * (one - s) - (a + f32(3))) * (one - s) * (one - s) + one,
            ((a * t3 - f32(5) * a) * t3 + f32(8) * a) * t3 - f32(4) * a]


def cubic_axis(coord, scale, in_len, out_len, roi, a, exclude_outside):
    """Cubic without antialias: taps floor(x)-1 .. floor(x)+2 clamped to the axis (or, with exclude_outside,
    those outside weighed 0 and the rest renormalized), each weight the coefficient over their sum."""
    rows, outside = [], np.zeros(out_len, bool)
    for o in range(out_len):
        c = coordinate(coord, o, scale, in_len, out_len, roi)
        outside[o] = _outside(c, in_len)
        if not np.isfinite(c):
            c = f32(0)
        base = math.floor(c)
        coeffs = cubic_coefficients(c - f32(base), a)
        total = f32(1)
        if exclude_outside:
            total = f32(0)
            for k in range(4):
                if not 0 <= base - 1 + k < in_len:
                    coeffs[k] = f32(0)
                total += coeffs[k]
        rows.append([(min(max(base - 1 + k, 0), in_len - 1), coeffs[k] / total) for k in range(4)])
    return (*_pack(rows, out_len), outside)


def _filter(cubic: bool, a, x):
    """Pillow's triangle (linear) or Keys cubic filter, as onnxruntime's antialias filters (float32)."""
    x = abs(x)
    if not cubic:
        return f32(1) - x if x < 1 else f32(0)
    a = f32(a)
    if x < 1:
        return ((a + f32(2)) * x - (a + f32(3))) * x * x + f32(1)
    if x < 2:
        return (((x - f32(5)) * x + f32(8)) * x - f32(4)) * a
    return f32(0)


def antialias_axis(cubic, coord, scale, in_len, out_len, roi, a, exclude_outside):
    """Antialiased linear or cubic, as onnxruntime's SetupUpsampleFilterAntiAlias: the filter stretched by
    in/out when downsampling, over the input elements whose centres it covers; without exclude_outside the
    weights of elements past an edge go to the edge element; then normalized by their sum."""
    rscale = f32(scale)
    inv = f32(1) / rscale
    support = f32(4 if cubic else 2) * f32(0.5)
    if inv >= 1:
        support = support * inv
    window = math.ceil(support) * 2 + 1
    inv_scale = f32(1) / inv if inv >= 1 else f32(1)
    rows, outside = [], np.zeros(out_len, bool)
    for o in range(out_len):
        center = f32(0.5) + (f32(o) if inv == 1 else coordinate(coord, o, rscale, in_len, out_len, roi))
        outside[o] = _outside(center - f32(0.5), in_len)
        xmin_real = int(np.floor(center - support + f32(0.5)))
        xmax_real = int(np.floor(center + support + f32(0.5)))
        xmax_real = xmin_real + min(max(xmax_real - xmin_real, 0), window)
        xmin_cut, xmax_cut = min(max(xmin_real, 0), in_len), min(max(xmax_real, 0), in_len)
        xmin, xmax = (xmin_cut, xmax_cut) if exclude_outside else (xmin_real, xmax_real)
        n = xmax - xmin
        buf = [f32(0)] * max(window, n)
        total = f32(0)
        for x in range(n):
            w = _filter(cubic, a, (f32(x + xmin) - center + f32(0.5)) * inv_scale)
            buf[x] = w
            total += w
        if not exclude_outside and xmin_cut < xmax_cut:
            neg = min(max(-xmin, 0), n - 1)
            for x in range(neg):
                buf[neg] += buf[x]
            bound = min(max(n + xmin - in_len, 0), n - 1)
            for x in range(n - bound, n):
                buf[n - bound - 1] += buf[x]
            if neg or bound:
                for x in range(xmax_cut - xmin_cut):
                    buf[x] = buf[x + neg]
        total_inv = f32(1) if total == 0 else f32(1) / total
        rows.append([(xmin_cut + x, buf[x] * total_inv) for x in range(xmax_cut - xmin_cut)])
    return (*_pack(rows, out_len), outside)


def emit_resample(ctx, node, x, out_shape, scales, mode, coord, *, rounding="round_prefer_floor", roi=None,
                  cubic_a=-0.75, exclude_outside=False, antialias=False, extrapolation=0.0):
    """One resample node per resized axis, the last axis first (as onnxruntime interpolates), and a where
    node setting tf_crop_and_resize's extrapolated outputs. Returns nothing; defines the node's output."""
    rank = len(x.shape)
    roi = roi if roi is not None else [0.0] * rank + [1.0] * rank
    cur, cur_shape = x.name, tuple(x.shape)
    outside_axes = {}
    steps = []
    for axis in reversed(range(rank)):
        in_len, out_len, s = x.shape[axis], out_shape[axis], f32(scales[axis])
        # An axis onnxruntime leaves alone: unscaled and unresized (outer axes, and any under antialias).
        if s == 1 and out_len == in_len and (antialias or axis < rank - 2):
            continue
        r = (roi[axis], roi[rank + axis])
        if antialias:
            taps, weights, outside = antialias_axis(mode == "cubic", coord, s, in_len, out_len, r, cubic_a,
                                                    exclude_outside)
        elif mode == "cubic":
            taps, weights, outside = cubic_axis(coord, s, in_len, out_len, r, cubic_a, exclude_outside)
        elif mode == "linear":
            taps, weights, outside = linear_axis(coord, s, in_len, out_len, r)
        else:
            taps, weights, outside = nearest_axis(coord, rounding, s, in_len, out_len, r)
        steps.append((axis, taps, weights))
        if coord == "tf_crop_and_resize" and s != 1 and outside.any():
            outside_axes[axis] = outside
    y = ctx.output(node)
    ctx.define(y, x.dtype, out_shape)
    if not steps or tuple(out_shape) == tuple(x.shape):  # onnxruntime copies an unresized input whatever the mode
        ctx.copy_to(x.name, y, out_shape, node.name)
        return
    for j, (axis, taps, weights) in enumerate(steps):
        cur_shape = cur_shape[:axis] + (out_shape[axis],) + cur_shape[axis + 1:]
        last = j == len(steps) - 1 and not outside_axes
        dst = y if last else ctx.temp(f"{y}_axis{axis}", x.dtype, cur_shape)
        ctx.emit("resample", [cur, ctx.const(taps, f"{node.name}_taps{axis}"),
                              ctx.const(weights, f"{node.name}_weights{axis}")], [dst], node.name,
                 params=Resample(axis=axis))
        cur = dst
    if outside_axes:
        mask = np.zeros([out_shape[i] if i in outside_axes else 1 for i in range(rank)], bool)
        for axis, outside in outside_axes.items():
            view = [1] * rank
            view[axis] = out_shape[axis]
            mask |= outside.reshape(view)
        fill = ctx.const(np.array(extrapolation, np.float32), f"{node.name}_extrapolation")
        ctx.emit("where", [ctx.const(mask, f"{node.name}_outside"), fill, cur], [y], node.name)
