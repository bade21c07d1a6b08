"""The memory layouts of the frame formats, their checks, and NV12's two forms (one buffer, two planes).

    RGB / BGR   (H, W, 3) uint8, channels last (HWC, as OpenCV)
    YUV444      (H, W, 3) uint8, packed Y, U, V per pixel
    Y (grey)    (H, W) uint8
    NV12        one buffer: (H * 3 // 2, W) uint8, the Y plane (H rows) then the UV plane (H / 2 rows of
                W / 2 interleaved U, V pairs, U first); or two planes: y (H, W) and uv (H / 2, W / 2, 2).
                H and W even. S100's planes (y (1, H, W, 1), uv (1, H / 2, W / 2, 2)) are accepted as
                they are; ``y[None, :, :, None]`` and ``uv[None]`` make them from the (H, W) forms (views).
"""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np
import numpy.typing as npt

__all__ = ["split_nv12", "join_nv12", "nv12_size"]

U8Array = npt.NDArray[np.uint8]


def check_uint8(name: str, value: Any) -> U8Array:
    """`value` as a uint8 ndarray, or a TypeError naming `name` and what it is."""
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name}: expected a numpy.ndarray of uint8, got {type(value).__name__}")
    if value.dtype != np.uint8:
        raise TypeError(f"{name}: expected dtype uint8, got {value.dtype} (shape {value.shape})")
    return value


def check_even(name: str, height: int, width: int) -> None:
    if height % 2 or width % 2 or height == 0 or width == 0:
        raise ValueError(f"{name}: an NV12 image needs an even, non-zero height and width, got {height}x{width}")


def check_three_channels(name: str, value: Any, what: str) -> U8Array:
    """A (H, W, 3) uint8 image (`what` says which format, for the error)."""
    image = check_uint8(name, value)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueError(f"{name}: expected a {what} image of shape (H, W, 3), got shape {image.shape}")
    return image


def check_grey(name: str, value: Any) -> U8Array:
    image = check_uint8(name, value)
    if image.ndim != 2:
        raise ValueError(f"{name}: expected a Y (grey) image of shape (H, W), got shape {image.shape}")
    return image


def checked_nv12_size(name: str, frame: Any) -> Tuple[int, int]:
    frame = check_uint8(name, frame)
    if frame.ndim != 2 or frame.shape[0] % 3:
        raise ValueError(f"{name}: expected an NV12 buffer of shape (H * 3 // 2, W), got shape {frame.shape}")
    height, width = frame.shape[0] // 3 * 2, frame.shape[1]
    check_even(f"{name} of shape {frame.shape}", height, width)
    return height, width


def nv12_size(frame: Any) -> Tuple[int, int]:
    """(height, width) of the image an NV12 buffer of shape (H * 3 // 2, W) holds."""
    return checked_nv12_size("frame", frame)


def split_buffer(name: str, frame: Any) -> Tuple[U8Array, U8Array]:
    height, width = checked_nv12_size(name, frame)
    return frame[:height], frame[height:].reshape(height // 2, width // 2, 2)


def split_nv12(frame: Any) -> Tuple[U8Array, U8Array]:
    """The planes of an NV12 buffer: ``(y (H, W), uv (H / 2, W / 2, 2))``, views of `frame` (the UV plane
    is a copy only if `frame`'s rows are not contiguous)."""
    return split_buffer("frame", frame)


def planes(y: Any, uv: Any) -> Tuple[U8Array, U8Array]:
    """`y` and `uv` checked and as (H, W) and (H / 2, W / 2, 2) (S100's 4-D forms are viewed down)."""
    y, uv = check_uint8("y", y), check_uint8("uv", uv)
    if y.ndim == 4 and y.shape[0] == 1 and y.shape[3] == 1:
        y = y[0, :, :, 0]
    if uv.ndim == 4 and uv.shape[0] == 1:
        uv = uv[0]
    if y.ndim != 2:
        raise ValueError(f"y: expected a Y plane of shape (H, W) or (1, H, W, 1), got shape {y.shape}")
    height, width = y.shape
    check_even(f"y of shape {y.shape}", height, width)
    if uv.shape != (height // 2, width // 2, 2):
        raise ValueError(f"uv: expected shape ({height // 2}, {width // 2}, 2) (or (1, {height // 2}, "
                         f"{width // 2}, 2)) for a Y plane of {height}x{width}, got shape {uv.shape}")
    return y, uv


def join_nv12(y: Any, uv: Any) -> U8Array:
    """One NV12 buffer (H * 3 // 2, W) from its planes (a new array: the planes live in two buffers)."""
    y, uv = planes(y, uv)
    height, width = y.shape
    frame = np.empty((height * 3 // 2, width), dtype=np.uint8)
    frame[:height] = y
    frame[height:] = uv.reshape(height // 2, width)
    return frame


def nv12_planes(name: str, nv12: Any) -> Tuple[U8Array, U8Array]:
    """An NV12 image given either way (one buffer, or a (y, uv) pair) as its two planes."""
    if isinstance(nv12, tuple) and len(nv12) == 2:
        return planes(*nv12)
    if not isinstance(nv12, np.ndarray):
        raise TypeError(f"{name}: expected an NV12 buffer (H * 3 // 2, W) or a (y, uv) tuple, "
                        f"got {type(nv12).__name__}")
    return split_buffer(name, nv12)
