"""RGB/BGR <-> NV12 (4:2:0: one U, V pair per 2x2 block of pixels).

Down: Y per pixel; U and V of a block are the mean of its four pixels' exact float values (equally: of
the block's mean colour), rounded once (:func:`accel.image.formula.round_to_uint8`). Up: nearest, each U,
V pair covers its 2x2 block.
"""
from __future__ import annotations

from typing import Any, Tuple, Union

import numpy as np

from .formula import rgb_to_yuv_matrix, round_to_uint8
from .layout import U8Array, check_even, check_three_channels, join_nv12, nv12_planes
from .yuv444 import yuv_to_rgb_uint8

__all__ = ["bgr_to_nv12", "rgb_to_nv12", "nv12_to_bgr", "nv12_to_rgb"]

NV12 = Union[U8Array, Tuple[U8Array, U8Array]]


def encode(name: str, rgb: U8Array, range: str, planes: bool) -> NV12:
    height, width = rgb.shape[:2]
    check_even(f"{name} of shape {rgb.shape}", height, width)
    matrix, offset = rgb_to_yuv_matrix(range)
    pixels = rgb.astype(np.float64)
    y = round_to_uint8(pixels @ matrix[0] + offset[0])
    # The mean of a block's four U (V) values is U (V) of the block's mean colour (the formula is linear):
    # a quarter of the work. The sum of four uint8 values is exact in float64.
    block_mean = (pixels[0::2, 0::2] + pixels[0::2, 1::2] + pixels[1::2, 0::2] + pixels[1::2, 1::2]) * 0.25
    uv = round_to_uint8(block_mean @ matrix[1:].T + offset[1:])
    return (y, uv) if planes else join_nv12(y, uv)


def rgb_to_nv12(rgb: Any, *, range: str = "full", planes: bool = False) -> NV12:
    """NV12 of an RGB image (H, W, 3), H and W even: one buffer (H * 3 // 2, W), or with ``planes=True``
    the pair ``(y (H, W), uv (H / 2, W / 2, 2))``."""
    return encode("rgb", check_three_channels("rgb", rgb, "RGB"), range, planes)


def bgr_to_nv12(bgr: Any, *, range: str = "full", planes: bool = False) -> NV12:
    """NV12 of a BGR image (H, W, 3), H and W even: one buffer (H * 3 // 2, W), or with ``planes=True``
    the pair ``(y (H, W), uv (H / 2, W / 2, 2))``."""
    return encode("bgr", check_three_channels("bgr", bgr, "BGR")[..., ::-1], range, planes)


def nv12_to_rgb(nv12: Any, *, range: str = "full") -> U8Array:
    """RGB (H, W, 3) of an NV12 image: one buffer (H * 3 // 2, W) or a ``(y, uv)`` pair of planes."""
    y, uv = nv12_planes("nv12", nv12)
    yuv = np.empty(y.shape + (3,), dtype=np.uint8)
    yuv[..., 0] = y
    yuv[..., 1:] = uv.repeat(2, axis=0).repeat(2, axis=1)
    return yuv_to_rgb_uint8(yuv, range)


def nv12_to_bgr(nv12: Any, *, range: str = "full") -> U8Array:
    """BGR (H, W, 3) of an NV12 image: one buffer (H * 3 // 2, W) or a ``(y, uv)`` pair of planes."""
    return np.ascontiguousarray(nv12_to_rgb(nv12, range=range)[..., ::-1])
