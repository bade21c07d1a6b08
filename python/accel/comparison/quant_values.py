"""A quantized tensor's integers and real values, for comparing: dequantizing in float64 (exact for int8 and
uint8 values and float32 scales), and quantizing real values onto another tensor's grid as onnxruntime's
QuantizeLinear does (a float32 division, rounded half to even, saturated to the integer type's range), so
that a float tensor can be held against an int8 one integer by integer.

The parameters are a :class:`~accel.Quantization` (a model's ``TensorInfo.quant`` or a run record's);
``"shift"`` quantization (``real = q / 2**shift``) is a scale of ``2**-shift`` with zero point 0.
"""
from __future__ import annotations

from typing import Tuple

import numpy as np

from ..tensor_info import Quantization

__all__ = ["dequantize", "quantize", "scales_and_zero_points"]


def scales_and_zero_points(q: Quantization, shape: Tuple[int, ...], what: str) -> Tuple[np.ndarray, np.ndarray]:
    """``(scales float32, zero points int64)`` shaped to broadcast against a tensor of ``shape``; ValueError
    naming ``what`` when the parameters do not fit the shape."""
    if q.type == "shift":
        if q.shifts is None:
            raise ValueError(f"tensor {what!r}: shift quantization without shifts")
        scales = np.ldexp(np.float32(1), -np.asarray(q.shifts, np.int32)).astype(np.float32)
        zeros = np.zeros(len(q.shifts), np.int64)
    else:
        scales = np.asarray(q.scales, np.float32)
        zeros = np.asarray(q.zero_points if q.zero_points is not None else [0] * len(q.scales), np.int64)
    if scales.size == 0 or zeros.size != scales.size:
        raise ValueError(f"tensor {what!r}: {scales.size} scales and {zeros.size} zero points")
    if scales.size == 1:
        return scales.reshape(()), zeros.reshape(())
    axis = q.axis
    if axis is None or not 0 <= axis < len(shape) or shape[axis] != scales.size:
        raise ValueError(f"tensor {what!r} of shape {tuple(shape)}: {scales.size} scales along axis {axis} "
                         f"do not fit it")
    dims = [1] * len(shape)
    dims[axis] = scales.size
    return scales.reshape(dims), zeros.reshape(dims)


def dequantize(ints: np.ndarray, q: Quantization, what: str) -> np.ndarray:
    """``(q - zero_point) * scale`` in float64."""
    scales, zeros = scales_and_zero_points(q, ints.shape, what)
    return (ints.astype(np.int64) - zeros).astype(np.float64) * scales.astype(np.float64)


def quantize(values: np.ndarray, q: Quantization, dtype: np.dtype, what: str) -> np.ndarray:
    """Real ``values`` on the grid of ``q`` as int64: ``saturate(round_half_even(float32(x) / scale) + zero)``
    to ``dtype``'s range (QuantizeLinear's arithmetic)."""
    scales, zeros = scales_and_zero_points(q, values.shape, what)
    with np.errstate(invalid="ignore", over="ignore"):
        steps = np.rint(values.astype(np.float32) / scales).astype(np.float64)
    info = np.iinfo(dtype)
    return np.clip(np.nan_to_num(steps) + zeros, info.min, info.max).astype(np.int64)
