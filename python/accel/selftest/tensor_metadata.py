"""What cannot be right in a tensor's metadata (strides, byte size, layout, quantization), and a
tensor's quantization in words (the ``introspection`` check uses both)."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

import accel


def quant_text(q: Optional[accel.Quantization]) -> str:
    """A tensor's quantization in words: its type, axis, and the first few scales, zero points, shifts."""
    if q is None:
        return "not quantized"
    parts = [q.type]
    if q.axis is not None:
        parts.append(f"axis {q.axis}")
    if q.scales:
        parts.append(f"scales {list(q.scales)[:4]}{'...' if len(q.scales) > 4 else ''}")
    if q.zero_points is not None:
        parts.append(f"zero points {list(q.zero_points)[:4]}{'...' if len(q.zero_points) > 4 else ''}")
    if q.shifts is not None:
        parts.append(f"shifts {list(q.shifts)[:4]}")
    return ", ".join(parts)


def tensor_problems(info: accel.TensorInfo) -> List[str]:
    """What cannot be right in one tensor's metadata: strides that overlap or do not fit the byte size,
    a layout on a tensor that is not 4-D, quantization parameters that do not match the shape."""
    found = []
    what = f"{info.name!r}"
    itemsize = info.dtype.itemsize
    if not info.name:
        found.append("a tensor has an empty name")
    if any(d < 0 for d in info.shape):
        found.append(f"{what}: negative dimension in {info.shape}")
    if len(info.strides) != len(info.shape):
        found.append(f"{what}: {len(info.strides)} strides for {len(info.shape)} dimensions")
    elif info.size > 0:
        # Non-overlapping: sorted by stride, each dimension steps past the whole extent of the one inside.
        extent = itemsize
        for stride, dim in sorted((s, d) for s, d in zip(info.strides, info.shape) if d > 1):
            if stride < extent:
                found.append(f"{what}: strides {info.strides} overlap for shape {info.shape}")
                break
            extent = stride * dim
        span = sum((d - 1) * s for d, s in zip(info.shape, info.strides)) + itemsize
        if info.nbytes < span:
            found.append(f"{what}: {info.nbytes} bytes cannot hold shape {info.shape} with strides "
                         f"{info.strides} ({span} bytes)")
    if info.nbytes < info.size * itemsize:
        found.append(f"{what}: {info.nbytes} bytes for {info.size} elements of {itemsize} bytes")
    if info.layout is not None and len(info.shape) != 4:
        found.append(f"{what}: layout {info.layout} on a {len(info.shape)}-D tensor")
    if info.quant is not None:
        found += _quant_problems(info)
    return found


def _quant_problems(info: accel.TensorInfo) -> List[str]:
    q = info.quant
    assert q is not None
    what = f"{info.name!r}"
    found = []
    if info.dtype.kind not in "iu":
        found.append(f"{what}: quantized ({q.type}) but of dtype {info.dtype}")
    if q.type == "per_tensor" and len(q.scales) != 1:
        found.append(f"{what}: per-tensor quantization with {len(q.scales)} scales")
    if q.type == "per_axis":
        if q.axis is None or not 0 <= q.axis < len(info.shape):
            found.append(f"{what}: per-axis quantization on axis {q.axis} of a {len(info.shape)}-D tensor")
        elif len(q.scales) != info.shape[q.axis]:
            found.append(f"{what}: {len(q.scales)} scales for axis {q.axis} of size {info.shape[q.axis]}")
    if q.type == "shift" and not q.shifts:
        found.append(f"{what}: shift quantization with no shifts")
    if not all(np.isfinite(s) and s > 0 for s in q.scales):
        found.append(f"{what}: scales must be finite and > 0: {q.scales}")
    if q.zero_points is not None and len(q.zero_points) != len(q.scales):
        found.append(f"{what}: {len(q.zero_points)} zero points for {len(q.scales)} scales")
    return found
