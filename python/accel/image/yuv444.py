"""Full-resolution conversions: RGB/BGR <-> YUV444 (packed Y, U, V per pixel), and RGB/BGR -> Y (grey).

The formulas and the rounding are :mod:`accel.image.formula`'s; `range` is ``"full"`` (Horizon's
``regular``, the default) or ``"video"`` (``bt601_video``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .formula import rgb_to_yuv_matrix, round_to_uint8, yuv_to_rgb_matrix
from .layout import U8Array, check_three_channels

__all__ = ["bgr_to_yuv444", "rgb_to_yuv444", "yuv444_to_bgr", "yuv444_to_rgb", "bgr_to_y", "rgb_to_y"]


def rgb_float_to_yuv(rgb: Any, range: str) -> Any:
    """Float Y, U, V (..., 3) of float R, G, B (..., 3), unrounded."""
    matrix, offset = rgb_to_yuv_matrix(range)
    return rgb @ matrix.T + offset


def yuv_to_rgb_uint8(yuv: U8Array, range: str) -> U8Array:
    matrix, offset = yuv_to_rgb_matrix(range)
    return round_to_uint8(yuv.astype(np.float64) @ matrix.T + offset)


def rgb_to_yuv444(rgb: Any, *, range: str = "full") -> U8Array:
    """YUV444 (H, W, 3) of an RGB image (H, W, 3)."""
    rgb = check_three_channels("rgb", rgb, "RGB")
    return round_to_uint8(rgb_float_to_yuv(rgb.astype(np.float64), range))


def bgr_to_yuv444(bgr: Any, *, range: str = "full") -> U8Array:
    """YUV444 (H, W, 3) of a BGR image (H, W, 3)."""
    bgr = check_three_channels("bgr", bgr, "BGR")
    return round_to_uint8(rgb_float_to_yuv(bgr[..., ::-1].astype(np.float64), range))


def yuv444_to_rgb(yuv: Any, *, range: str = "full") -> U8Array:
    """RGB (H, W, 3) of a YUV444 image (H, W, 3)."""
    return yuv_to_rgb_uint8(check_three_channels("yuv", yuv, "YUV444"), range)


def yuv444_to_bgr(yuv: Any, *, range: str = "full") -> U8Array:
    """BGR (H, W, 3) of a YUV444 image (H, W, 3)."""
    return np.ascontiguousarray(yuv444_to_rgb(yuv, range=range)[..., ::-1])


def luma(rgb: U8Array, range: str) -> U8Array:
    matrix, offset = rgb_to_yuv_matrix(range)
    return round_to_uint8(rgb.astype(np.float64) @ matrix[0] + offset[0])


def rgb_to_y(rgb: Any, *, range: str = "full") -> U8Array:
    """Y (grey) (H, W) of an RGB image (H, W, 3): the Y plane NV12 would carry."""
    return luma(check_three_channels("rgb", rgb, "RGB"), range)


def bgr_to_y(bgr: Any, *, range: str = "full") -> U8Array:
    """Y (grey) (H, W) of a BGR image (H, W, 3): the Y plane NV12 would carry."""
    return luma(check_three_channels("bgr", bgr, "BGR")[..., ::-1], range)
