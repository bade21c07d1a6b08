"""Rules of the ops that move data: concat, reshape, permute, flatten and interpolate."""
from __future__ import annotations

import math
from typing import Any, Sequence, Tuple

import numpy as np

from ..errors import InvalidArgumentError, ShapeError
from ..runtime.messages import shown
from .args import ELEMENTS, Shape, as_float, as_int, as_ints, axis, sized
from .plan import Arg, Call, Plan, const, node, plan


def concat(c: Call) -> Plan:
    names = [n for n in c.shapes if n.startswith("tensors[")]
    first = c.shape(names[0])
    d = axis(c.op, "dim", c.get("dim"), len(first), first)
    total = 0
    for n in names:
        s = c.shape(n)
        if len(s) != len(first) or s[:d] + s[d + 1:] != first[:d] + first[d + 1:]:
            raise ShapeError(f"{c.op}: {n} of shape {s} does not match {names[0]} of shape {first} in every dim "
                             f"but dim {d}")
        total += s[d]
    out = (*first[:d], total, *first[d + 1:])
    return plan(out, node("Concat", *(Arg(n) for n in names), axis=d))


def _reshape(shape: Shape) -> Plan:
    return plan(shape, node("Reshape", Arg("input"), const(shape, np.int64)))


def reshape(c: Call) -> Plan:
    x = c.shape()
    want = as_ints(c.op, "shape", c.get("shape"))
    size = math.prod(x)
    unknown = [i for i, d in enumerate(want) if d == -1]
    if len(unknown) > 1 or any(d < -1 for d in want):
        raise InvalidArgumentError(f"{c.op}: shape {want} may hold one -1 and no other negative dim")
    known = math.prod(d for d in want if d != -1)
    if unknown:
        if known == 0 or size % known:
            raise ShapeError(f"{c.op}: shape {want} is invalid for input of shape {x} ({size} elements)")
        want = tuple(size // known if d == -1 else d for d in want)
    elif known != size:
        raise ShapeError(f"{c.op}: shape {want} ({known} elements) is invalid for input of shape {x} "
                         f"({size} elements)")
    return _reshape(want)


def permute(c: Call) -> Plan:
    x = c.shape()
    dims = as_ints(c.op, "dims", c.get("dims"))
    if len(dims) != len(x):
        raise ShapeError(f"{c.op}: dims {dims} must name each of the {len(x)} dims of input of shape {x} once")
    perm = [axis(c.op, "dims", d, len(x), x) for d in dims]
    if sorted(perm) != list(range(len(x))):
        raise InvalidArgumentError(f"{c.op}: dims {dims} is not a permutation of the dims of input of shape {x}")
    return plan(tuple(x[p] for p in perm), node("Transpose", Arg("input"), perm=perm))


def flatten(c: Call) -> Plan:
    x = c.shape()
    if not x:
        return _reshape((1,))
    a = axis(c.op, "start_dim", c.get("start_dim"), len(x), x)
    b = axis(c.op, "end_dim", c.get("end_dim"), len(x), x)
    if a > b:
        raise InvalidArgumentError(f"{c.op}: start_dim {c.get('start_dim')} comes after end_dim {c.get('end_dim')} "
                                   f"for input of shape {x}")
    return _reshape((*x[:a], math.prod(x[a:b + 1]), *x[b + 1:]))


def _per_axis(c: Call, name: str, value: object, n: int) -> Sequence[object]:
    values: Sequence[object] = value if isinstance(value, (tuple, list)) else [value] * n
    if len(values) != n:
        raise InvalidArgumentError(f"{c.op}: {name} {shown(value)} must give {n} values (one per spatial dim) for "
                                   f"input of shape {c.shape()}")
    return values


def _scaled(c: Call, x: Shape, scales: Sequence[float], scale: object) -> Shape:
    """The output shape as ONNX Resize (onnxruntime, the compiler) computes it from float32 scales:
    floor(scale * size) in float32. torch computes it in float64, so a few scales give one more or less."""
    f32 = np.float32
    with np.errstate(over="ignore"):
        sizes = [np.floor(f32(s) * f32(d)) for s, d in zip(scales, x[2:])]
    if not all(np.isfinite(sizes)):
        raise InvalidArgumentError(f"{c.op}: scale_factor {shown(scale)} makes a result past float32 from input of "
                                   f"shape {x}; at most {ELEMENTS.text}")
    return sized(c.op, (*x[:2], *(int(v) for v in sizes)), f"scale_factor {shown(scale)} of input of shape {x}")


def interpolate(c: Call) -> Plan:
    x = c.shape()
    mode, align = c.get("mode"), c.get("align_corners")
    if mode not in ("nearest", "bilinear"):
        raise InvalidArgumentError(f"{c.op}: mode must be 'nearest' or 'bilinear', not {shown(mode)}")
    ranks = (3, 4) if mode == "nearest" else (4,)
    if len(x) not in ranks:
        want = "3-D (N, C, W) or 4-D (N, C, H, W)" if mode == "nearest" else "4-D (N, C, H, W)"
        raise ShapeError(f"{c.op}: mode {mode!r} needs input {want}; input has shape {x}")
    if mode == "nearest" and align is not None:
        raise InvalidArgumentError(f"{c.op}: align_corners applies to mode 'bilinear' only; leave it None for "
                                   f"'nearest'")
    size, scale = c.get("size"), c.get("scale_factor")
    if (size is None) == (scale is None):
        raise InvalidArgumentError(f"{c.op}: give exactly one of size and scale_factor")
    n = len(x) - 2
    attrs = ({"coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"} if mode == "nearest" else
             {"coordinate_transformation_mode": "align_corners" if align else "half_pixel"})
    inputs: Tuple[Any, ...]
    if size is not None:
        sizes = [as_int(c.op, "size", v, minimum=1) for v in _per_axis(c, "size", size, n)]
        out = sized(c.op, (*x[:2], *sizes), f"size {shown(size)}")
        inputs = (Arg("input"), None, None, const(out, np.int64))
    else:
        scales = [as_float(c.op, "scale_factor", v, finite=True) for v in _per_axis(c, "scale_factor", scale, n)]
        if not all(v > 0 for v in scales):
            raise InvalidArgumentError(f"{c.op}: scale_factor must be > 0, got {shown(scale)}")
        out = _scaled(c, x, scales, scale)
        if min(out[2:]) < 1:
            raise ShapeError(f"{c.op}: scale_factor {shown(scale)} makes an empty output {out} from input of shape "
                             f"{x}")
        inputs = (Arg("input"), None, const([1.0, 1.0, *scales]))
    return plan(out, node("Resize", *inputs, mode="nearest" if mode == "nearest" else "linear", **attrs))
