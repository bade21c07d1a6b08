"""Tensor metadata of a model's inputs and outputs: ``TensorInfo`` and ``Quantization``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from .dtypes import dtype_from_code, layout_from_code, quant_type_from_code

__all__ = ["TensorInfo", "Quantization"]


@dataclass(frozen=True)
class Quantization:
    """How a quantized tensor's integers map to real values.

    Attributes:
        type: ``"per_tensor"`` (``real = scales[0] * (q - zero_points[0])``), ``"per_axis"``
            (``real = scales[i] * (q - zero_points[i])``, ``i`` the index along ``axis``) or ``"shift"``
            (``real = q / 2**shifts[i]``).
        axis: the axis the parameters vary along, or ``None`` when they do not vary.
        scales: one scale per entry (empty for ``"shift"``).
        zero_points: one zero point per entry, or ``None`` when symmetric (all zero).
        shifts: power-of-two shifts for ``"shift"``, else ``None``.
    """

    type: str
    axis: Optional[int]
    scales: Tuple[float, ...]
    zero_points: Optional[Tuple[int, ...]]
    shifts: Optional[Tuple[int, ...]]


@dataclass(frozen=True)
class TensorInfo:
    """Everything needed to feed or read one model input or output.

    Attributes:
        name: the tensor's name in the model.
        shape: the valid (logical) shape, a tuple of ints.
        dtype: the element type, a NumPy dtype.
        layout: ``"NCHW"``, ``"NHWC"`` or ``None`` (no image layout).
        quant: the quantization parameters, or ``None`` for a tensor that is not quantized.
        strides: byte strides of the device buffer (they can exceed the dense C-order strides where a
            device pads rows).
        nbytes: bytes the device buffer must hold, padding included.
    """

    name: str
    shape: Tuple[int, ...]
    dtype: np.dtype
    layout: Optional[str] = None
    quant: Optional[Quantization] = None
    strides: Tuple[int, ...] = ()
    nbytes: int = 0

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements (the product of :attr:`shape`)."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def dense(self) -> bool:
        """True if :attr:`strides` are the dense C-order strides of :attr:`shape` (no padding)."""
        return self.strides == dense_strides(self.shape, self.dtype.itemsize)

    def __str__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        text = f"{self.name}: {self.dtype}[{dims}]"
        if self.layout:
            text += f" {self.layout}"
        if self.quant is not None:
            text += f" ({self.quant.type})"
        return text


def dense_strides(shape: Tuple[int, ...], itemsize: int) -> Tuple[int, ...]:
    """The C-order byte strides of a dense tensor."""
    strides = []
    step = itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def from_core(t: Tuple[Any, ...]) -> TensorInfo:
    """A TensorInfo from a core's tuple ``(name, shape, dtype, layout, strides, byte_size, quant)``
    (CORE_API.md)."""
    name, shape, dtype, layout, strides, byte_size, quant = t
    q = None
    if quant is not None:
        qtype, axis, scales, zero_points, shifts = quant
        q = Quantization(
            type=quant_type_from_code(int(qtype)) or "none",
            axis=None if axis is None or axis < 0 else int(axis),
            scales=tuple(float(s) for s in scales) if scales is not None else (),
            zero_points=tuple(int(z) for z in zero_points) if zero_points is not None else None,
            shifts=tuple(int(s) for s in shifts) if shifts is not None else None,
        )
    return TensorInfo(
        name=str(name),
        shape=tuple(int(d) for d in shape),
        dtype=dtype_from_code(int(dtype)),
        layout=layout_from_code(int(layout)),
        quant=q,
        strides=tuple(int(s) for s in strides),
        nbytes=int(byte_size),
    )
