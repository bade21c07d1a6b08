"""Tensor metadata of a model's inputs and outputs: ``TensorInfo``, ``Quantization`` and ``ImageInfo``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np

from .dtypes import dtype_from_code, layout_from_code, quant_type_from_code
from .image_formats import IMAGE_FORMATS

__all__ = ["TensorInfo", "Quantization", "ImageInfo"]

# accel_image_format (accel.h, ABI 1.2) by name: the pixel format of an image input.
_IMAGE_FORMAT_NAMES = {code: name for name, code in IMAGE_FORMATS.items()}


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
class ImageInfo:
    """How an image input (a camera frame the model converts itself) lies in its buffer.

    The tensor is uint8, NHWC, batch 1; its shape is the buffer's rows, columns and bytes per pixel.

    Attributes:
        format: the pixel format: ``"nv12"`` (shape ``(1, H * 3/2, W, 1)``: the Y plane, then the
            interleaved UV plane), ``"nv12_y"`` and ``"nv12_uv"`` (an NV12 frame's two planes as two
            consecutive inputs, shapes ``(1, H, W, 1)`` and ``(1, H/2, W/2, 2)``), ``"y"`` (grey,
            ``(1, H, W, 1)``), ``"yuv444"``, ``"rgb"`` or ``"bgr"`` (``(1, H, W, 3)``).
        width: W, the image's width in pixels.
        height: H, the image's height in pixels.
        plane_offsets: the byte offset of each plane inside the buffer, padding included: two for
            ``"nv12"`` (``(0, H * row stride)``), one for the others.
        width_align: the device takes images whose width is a multiple of this (2 for the NV12 forms).
        height_align: likewise for the height.
    """

    format: str
    width: int
    height: int
    plane_offsets: Tuple[int, ...]
    width_align: int
    height_align: int

    def __str__(self) -> str:
        return f"{self.format} {self.width}x{self.height}"


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
        image: for an image input (a camera frame in a pixel format such as NV12, which the model
            converts itself), its format, size and planes; ``None`` for a plain tensor.
        symbols: for a model whose dims are set at run time (an ONNX model with symbolic dims), per dim the
            symbol's name where :attr:`shape` has ``-1`` (``None`` for a dim the model leaves unnamed, and for
            the fixed ones); ``None`` for a tensor of fixed shape.
    """

    name: str
    shape: Tuple[int, ...]
    dtype: np.dtype
    layout: Optional[str] = None
    quant: Optional[Quantization] = None
    strides: Tuple[int, ...] = ()
    nbytes: int = 0
    image: Optional[ImageInfo] = None
    symbols: Optional[Tuple[Optional[str], ...]] = None

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
        named = self.symbols or (None,) * len(self.shape)
        dims = ", ".join(str(d) if d != -1 else (s or "?") for d, s in zip(self.shape, named))
        text = f"{self.name}: {self.dtype}[{dims}]"
        if self.layout:
            text += f" {self.layout}"
        if self.quant is not None:
            text += f" ({self.quant.type})"
        if self.image is not None:
            text += f" (image {self.image})"
        return text


def dense_strides(shape: Tuple[int, ...], itemsize: int) -> Tuple[int, ...]:
    """The C-order byte strides of a dense tensor."""
    strides = []
    step = itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def image_from_core(image: Any) -> Optional[ImageInfo]:
    """An ImageInfo from a core's ``image`` tuple ``(format, plane_offsets, width, height, width_align,
    height_align)`` (CORE_API.md); None for None (a plain tensor)."""
    if image is None:
        return None
    code, plane_offsets, width, height, width_align, height_align = image
    return ImageInfo(
        format=_IMAGE_FORMAT_NAMES.get(int(code), f"unknown ({int(code)})"),
        width=int(width),
        height=int(height),
        plane_offsets=tuple(int(o) for o in plane_offsets),
        width_align=int(width_align),
        height_align=int(height_align),
    )


def from_core(t: Tuple[Any, ...]) -> TensorInfo:
    """A TensorInfo from a core's tuple ``(name, shape, dtype, layout, strides, byte_size, quant, image)``
    (CORE_API.md)."""
    name, shape, dtype, layout, strides, byte_size, quant, image = t
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
        image=image_from_core(image),
    )
