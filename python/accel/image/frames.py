"""A picture as the frame an image input takes (TensorInfo.image).

    bgr = image.read_image("photo.jpg", size=(640, 480))      # (480, 640, 3) uint8, BGR (accel.image.pictures)
    frame = image.to_frame(bgr, "nv12")                         # what an NV12 input takes

Frames made here are full range ("regular") unless ``range="video"`` is given.
"""
from __future__ import annotations

from typing import Any, Tuple, Union

import numpy as np

from ..runtime.image_formats import FRAME_FORMATS, IMAGE_FORMATS
from .layout import check_three_channels, split_nv12
from .nv12 import bgr_to_nv12
from .yuv444 import bgr_to_y, bgr_to_yuv444

__all__ = ["FRAME_FORMATS", "IMAGE_FORMATS", "to_frame"]

Frame = Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]


def to_frame(bgr: Any, format: str, *, range: str = "full") -> Frame:
    """``bgr`` (``(H, W, 3)`` uint8) as a frame of ``format`` (FRAME_FORMATS): NV12 ``(H * 3/2, W)``; ``"nv12_y"``
    or ``"nv12_uv"``: the ``(y, uv)`` pair of planes (an NV12 frame given as two inputs); Y ``(H, W)``;
    YUV444, RGB, BGR ``(H, W, 3)``. Model.run takes these as they are for an input of that format."""
    if format in ("nv12", "nv12_y", "nv12_uv"):
        nv12 = bgr_to_nv12(bgr, range=range)
        return nv12 if format == "nv12" else split_nv12(nv12)
    if format == "y":
        return bgr_to_y(bgr, range=range)
    if format == "yuv444":
        return bgr_to_yuv444(bgr, range=range)
    if format == "rgb":
        return np.ascontiguousarray(check_three_channels("bgr", bgr, "BGR")[..., ::-1])
    if format == "bgr":
        return check_three_channels("bgr", bgr, "BGR")
    raise ValueError(f"format {format!r}: expected one of {', '.join(FRAME_FORMATS)}")
