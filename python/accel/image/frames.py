"""A picture as the frame an image input takes (TensorInfo.image), and picture files read for it.

    bgr = image.read_image("photo.jpg", size=(640, 480))      # (480, 640, 3) uint8, BGR
    frame = image.to_frame(bgr, "nv12")                         # what an NV12 input takes

Picture files are read with Pillow (``pip install pillow``; matplotlib brings it) and, when their size is not the
model's, resized with Pillow's bilinear filter (``Image.Resampling.BILINEAR``) to it: a documented, reproducible
choice, not the camera's. Frames made here are full range ("regular") unless ``range="video"`` is given.
"""
from __future__ import annotations

import os
from typing import Any, Optional, Tuple, Union

import numpy as np

from .layout import check_three_channels, split_nv12
from .nv12 import bgr_to_nv12
from .yuv444 import bgr_to_y, bgr_to_yuv444

__all__ = ["FRAME_FORMATS", "IMAGE_FORMATS", "IMAGE_SUFFIXES", "read_image", "to_frame"]

#: accel_image_format's codes (accel.h) by the names TensorInfo.image.format and the .accm reader use.
IMAGE_FORMATS = {"none": 0, "nv12": 1, "nv12_y": 2, "nv12_uv": 3, "y": 4, "yuv444": 5, "rgb": 6, "bgr": 7}
#: TensorInfo.image formats: every accel_image_format but none.
FRAME_FORMATS = tuple(name for name in IMAGE_FORMATS if name != "none")
#: File name endings read as pictures (anything else is left to NumPy).
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pnm", ".tif", ".tiff", ".webp", ".gif")

Frame = Union[np.ndarray, Tuple[np.ndarray, np.ndarray]]


def read_image(path: Union[str, os.PathLike[str]], size: Optional[Tuple[int, int]] = None) -> np.ndarray:
    """The picture at ``path`` as a BGR ``(H, W, 3)`` uint8 array (OpenCV's order), resized to ``size = (width,
    height)`` with Pillow's bilinear filter when it is given and differs. FileNotFoundError for a missing file,
    ValueError for one Pillow cannot read, ImportError (saying what to install) without Pillow."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("reading picture files needs Pillow: pip install pillow") from None
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such picture file: {path!r}")
    try:
        with Image.open(path) as picture:
            rgb = picture.convert("RGB")
            if size is not None and rgb.size != tuple(size):
                rgb = rgb.resize((int(size[0]), int(size[1])), Image.Resampling.BILINEAR)
            array = np.asarray(rgb, dtype=np.uint8)
    except OSError as e:
        raise ValueError(f"cannot read {path!r} as a picture: {e}") from None
    return np.ascontiguousarray(array[:, :, ::-1])


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
