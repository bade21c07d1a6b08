"""Camera-frame formats as NumPy arrays: NV12, YUV444, Y (grey), RGB and BGR, and the conversions between them.

    import accel.image as image
    nv12 = image.bgr_to_nv12(bgr)                      # (H * 3 // 2, W) uint8, full range (Horizon's default)
    y, uv = image.split_nv12(nv12)                     # views: (H, W) and (H / 2, W / 2, 2)
    back = image.nv12_to_bgr((y, uv), range="full")

Models compiled for Horizon BPUs with ``input_type_rt: nv12`` (or yuv444, rgb, bgr, gray) take such frames
and convert them inside the model. The formulas (BT.601; ``range="full"`` = Horizon's ``regular``,
``range="video"`` = ``bt601_video``) and the rounding are defined once, in :mod:`accel.image.formula`;
the layouts in :mod:`accel.image.layout`. uint8 in, uint8 out, NumPy only. docs/image-inputs.md.
"""
from __future__ import annotations

from .formula import RANGES, rgb_to_yuv_matrix, round_to_uint8, yuv_to_rgb_matrix
from .frames import FRAME_FORMATS, IMAGE_FORMATS, to_frame
from .layout import join_nv12, nv12_size, split_nv12
from .nv12 import bgr_to_nv12, nv12_to_bgr, nv12_to_rgb, rgb_to_nv12
from .pictures import IMAGE_SUFFIXES, MAX_PIXELS, read_image
from .yuv444 import bgr_to_y, bgr_to_yuv444, rgb_to_y, rgb_to_yuv444, yuv444_to_bgr, yuv444_to_rgb

__all__ = [
    "bgr_to_nv12", "rgb_to_nv12", "nv12_to_bgr", "nv12_to_rgb",
    "bgr_to_yuv444", "rgb_to_yuv444", "yuv444_to_bgr", "yuv444_to_rgb",
    "bgr_to_y", "rgb_to_y",
    "split_nv12", "join_nv12", "nv12_size",
    "FRAME_FORMATS", "IMAGE_FORMATS", "IMAGE_SUFFIXES", "MAX_PIXELS", "read_image", "to_frame",
    "RANGES", "rgb_to_yuv_matrix", "yuv_to_rgb_matrix", "round_to_uint8",
]
