"""``TensorProperties`` of pyeasy_dnn (RDK X3/X5's ``hobot_dnn``), made from accel's TensorInfo and, for a .bin, its
container's description: the names and values the board's binding gives (x5-hobot-spdev src/python/dnn_python.cpp,
read, not copied), with the differences noted in docs/shims/horizon.md."""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

__all__ = ["TensorProperties", "properties"]

#: The binding's ``tensor_type`` string for an image input (accel's ImageInfo.format -> libdnn's image type).
IMAGE_TYPES: Dict[str, str] = {"y": "Y", "nv12": "NV12", "yuv444": "YUV444", "rgb": "RGB", "bgr": "BGR"}

#: libdnn's hbDNNQuantiType values (hb_dnn.h), which ``quantiType`` reports.
QUANTI_NONE, QUANTI_SHIFT, QUANTI_SCALE = 0, 1, 2


class TensorProperties:
    """What the board's binding tells of one input or output (``pyDNNTensor.properties``).

    ``tensor_type``: "NV12", "Y", "YUV444", "RGB", "BGR" for a camera-frame input, else the element type as the
    binding names it ("int8", "uint8", "float32", ...); ``dtype``: the element type ("uint8" for a frame);
    ``layout``: "NCHW", "NHWC" or "NONE"; ``shape``, ``validShape``: the valid shape (a frame input's is the
    model's (1, 3, H, W) or (1, H, W, 3), as libdnn gives it, not the frame buffer's); ``alignedShape``: the shape
    the device's buffer is laid out in (padding included); ``scale_data``: float32 scales (empty when not
    quantized by scale). accel adds ``quantiType`` (0 none, 1 shift, 2 scale), ``quantizeAxis``,
    ``zero_point_data`` and ``shift_data`` (libdnn's fields of the same names), which X5's binding does not give.
    """

    __slots__ = ("tensor_type", "dtype", "layout", "shape", "validShape", "alignedShape", "scale_data",
                 "quantiType", "quantizeAxis", "zero_point_data", "shift_data")

    def __init__(self, tensor_type: str, dtype: str, layout: str, shape: Tuple[int, ...],
                 aligned: Tuple[int, ...], quant: Any) -> None:
        self.tensor_type = tensor_type
        self.dtype = dtype
        self.layout = layout
        self.shape = shape
        self.validShape = shape
        self.alignedShape = aligned
        scales: Tuple[float, ...] = ()
        zeros: Tuple[int, ...] = ()
        shifts: Tuple[int, ...] = ()
        kind, axis = QUANTI_NONE, -1
        if quant is not None and quant.type == "shift":
            kind, shifts = QUANTI_SHIFT, tuple(quant.shifts or ())
        elif quant is not None:
            kind, scales = QUANTI_SCALE, tuple(quant.scales)
            zeros = tuple(quant.zero_points) if quant.zero_points is not None else (0,) * len(scales)
        if quant is not None and quant.axis is not None:
            axis = int(quant.axis)
        # Fresh arrays per TensorProperties: a script may scale them in place without changing the model's.
        self.scale_data = np.array(scales, np.float32)
        self.zero_point_data = np.array(zeros, np.int32)
        self.shift_data = np.array(shifts, np.uint8)
        self.quantiType = kind
        self.quantizeAxis = axis

    def __repr__(self) -> str:
        return (f"TensorProperties(tensor_type={self.tensor_type!r}, layout={self.layout!r}, "
                f"shape={self.shape}, scale_data={self.scale_data.tolist()})")


def _aligned(info: Any) -> Tuple[int, ...]:
    """The shape the device buffer is laid out in: the valid shape where the buffer is dense, else each dimension
    widened to what its outer stride holds (X3/X5 pad rows)."""
    shape = tuple(int(d) for d in info.shape)
    strides = tuple(int(s) for s in info.strides)
    if info.dense or len(strides) != len(shape) or not shape:
        return shape
    # Dimension i (after the first) holds strides[i-1] // strides[i] elements of dimension i's step.
    aligned = [shape[0]] + [outer // inner if inner > 0 else 0 for outer, inner in zip(strides[:-1], strides[1:])]
    return tuple(max(a, v) for a, v in zip(aligned, shape))


def _frame_shape(info: Any, described: Optional[Any]) -> Tuple[Tuple[int, ...], str]:
    """A camera-frame input's valid shape and layout as libdnn gives them: the .bin's own (its container says),
    else NV12's and Y's picture in NCHW (hb_mapper's usual input_layout_train) and packed pixels in NHWC."""
    if described is not None and all(isinstance(d, int) for d in described.shape):
        layout = described.layout_rt or described.layout_train or "NCHW"
        return tuple(described.shape), layout
    h, w = int(info.image.height), int(info.image.width)
    if info.image.format in ("nv12", "y"):   # libdnn gives these the picture's NCHW shape
        return (1, 1 if info.image.format == "y" else 3, h, w), "NCHW"
    return (1, h, w, 3), "NHWC"               # packed pixels, as the frame lies in memory


def properties(info: Any, described: Optional[Any] = None) -> TensorProperties:
    """The binding's properties of the tensor ``info`` (accel.TensorInfo); ``described`` is the .bin container's
    description of that input (accel.compiler.hbin.BinInput), when there is one."""
    if info.image is not None and info.image.format in IMAGE_TYPES:
        shape, layout = _frame_shape(info, described)
        return TensorProperties(IMAGE_TYPES[info.image.format], "uint8", layout, shape, shape, None)
    name = np.dtype(info.dtype).name
    shape = tuple(int(d) for d in info.shape)
    return TensorProperties(name, name, info.layout or "NONE", shape, _aligned(info), info.quant)
