"""``accel.quantize`` and ``accel.dequantize``: a quantized model input or output's integers to and from
real values, with the tensor's own scales and zero points (``TensorInfo.quant``) and onnxruntime's
QuantizeLinear / DequantizeLinear arithmetic (the compiler's, ``accel.compiler.quant``), so that a value
quantized here is what the model's own QuantizeLinear would have made of it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ._lazy_import import import_or_undo
from .runtime.tensor_info import Quantization, TensorInfo

__all__ = ["dequantize", "quantize"]


def _record(info: TensorInfo, ndim: int) -> Any:
    q = info.quant
    if not isinstance(info, TensorInfo) or q is None:
        name = getattr(info, "name", info)
        raise ValueError(f"tensor {name!r} is not quantized (its TensorInfo.quant is None)")
    return parameters(q, info.name, (-1,) * ndim)


def parameters(q: Quantization, name: str, shape: Any) -> Any:
    """The compiler's record (``accel.compiler.quant.Quant``) of ``q`` for a tensor of ``shape`` (-1 for a dim
    not known); ValueError naming ``name`` when the parameters do not fit it. A ``"shift"`` quantization
    (``real = q / 2**shift``) is a scale of ``2**-shift`` with zero point 0."""
    with import_or_undo():
        from .compiler import quant  # numpy only, but its package loads onnx: not at ``import accel``

    if q.type == "shift":
        if q.shifts is None:
            raise ValueError(f"tensor {name!r}: shift quantization without shifts")
        scales = np.ldexp(np.float32(1), -np.asarray(q.shifts, np.int32)).astype(np.float32)
        zeros = np.zeros(len(q.shifts), np.int64)
    else:
        scales = np.asarray(q.scales, np.float32)
        zeros = np.asarray(q.zero_points if q.zero_points is not None else [0] * len(q.scales), np.int64)
    if scales.size == 0 or zeros.size != scales.size:
        raise ValueError(f"tensor {name!r}: {scales.size} scales and {zeros.size} zero points")
    if scales.size == 1 or q.axis is None:
        return quant.Quant(scales, zeros)
    if not 0 <= q.axis < len(shape):
        raise ValueError(f"tensor {name!r} is quantized along axis {q.axis}, but the array has {len(shape)} dims")
    if shape[q.axis] not in (-1, scales.size):
        raise ValueError(f"tensor {name!r} of shape {tuple(shape)}: {scales.size} scales along axis {q.axis} do "
                         f"not fit it")
    return quant.Quant(scales, zeros, q.axis)


def _check_shape(array: np.ndarray, info: TensorInfo) -> None:
    if tuple(array.shape) != tuple(info.shape):
        raise ValueError(f"array of shape {tuple(array.shape)} does not match tensor {info.name!r} "
                         f"of shape {tuple(info.shape)}")


def quantize(array: Any, info: TensorInfo) -> np.ndarray:
    """Real values to the integers of the quantized tensor ``info``: ``saturate(round(x / scale) + zero)``
    (float32 division, half to even), as an array of ``info.dtype``. Raises ValueError if the tensor is
    not quantized or the shape differs."""
    with import_or_undo():
        from .compiler import quant

    x = np.asarray(array, dtype=np.float32)
    record = _record(info, x.ndim)
    _check_shape(x, info)
    if info.dtype not in (np.dtype(np.int8), np.dtype(np.uint8)):
        raise ValueError(f"tensor {info.name!r} is {info.dtype}, not int8 or uint8")
    return quant.quantize(x, record, info.dtype)


def dequantize(array: Any, info: TensorInfo) -> np.ndarray:
    """The integers of the quantized tensor ``info`` to real values: ``float32(q - zero) * scale``, as a
    float32 array. Raises ValueError if the tensor is not quantized or the shape or dtype differs."""
    with import_or_undo():
        from .compiler import quant

    q = np.asarray(array)
    record = _record(info, q.ndim)
    _check_shape(q, info)
    if q.dtype != info.dtype:
        raise ValueError(f"array of dtype {q.dtype} does not match tensor {info.name!r} of dtype {info.dtype}")
    return quant.dequantize(q, record)
