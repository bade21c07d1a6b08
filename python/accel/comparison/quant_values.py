"""A quantized tensor's integers and real values, for comparing: dequantizing in float64 (exact for int8 and
uint8 values and float32 scales), and quantizing real values onto another tensor's grid as onnxruntime's
QuantizeLinear does (a float32 division, rounded half to even, saturated to the integer type's range), so
that a float tensor can be held against an int8 one integer by integer.

The parameters are a :class:`~accel.Quantization` (a model's ``TensorInfo.quant`` or a run record's);
``"shift"`` quantization (``real = q / 2**shift``) is a scale of ``2**-shift`` with zero point 0.
"""
from __future__ import annotations

import numpy as np

from .._lazy_import import import_or_undo
from ..quantization import parameters
from ..runtime.tensor_info import Quantization

__all__ = ["dequantize", "quantize"]


def dequantize(ints: np.ndarray, q: Quantization, what: str) -> np.ndarray:
    """``(q - zero_point) * scale`` in float64; ValueError naming ``what`` when the parameters do not fit."""
    record = parameters(q, what, ints.shape)
    zeros = record.broadcast(record.zero_point, ints.ndim)
    scales = record.broadcast(record.scale, ints.ndim).astype(np.float64)
    real: np.ndarray = (ints.astype(np.int64) - zeros).astype(np.float64) * scales
    return real


def quantize(values: np.ndarray, q: Quantization, dtype: np.dtype, what: str) -> np.ndarray:
    """Real ``values`` on the grid of ``q`` as int64: ``saturate(round_half_even(float32(x) / scale) + zero)``
    to ``dtype``'s range (QuantizeLinear's arithmetic)."""
    with import_or_undo():
        from ..compiler import quant

    return quant.quantize(values, parameters(q, what, values.shape), dtype).astype(np.int64)
