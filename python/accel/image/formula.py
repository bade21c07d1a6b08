"""The one definition of the colour formulas: BT.601 YCbCr in two ranges, and how results become uint8.

Every conversion in :mod:`accel.image` takes its numbers from here, and so will any preprocessing built
from them (an ONNX MatMul + Add prepended to a model takes :func:`rgb_to_yuv_matrix` or
:func:`yuv_to_rgb_matrix` as they are).

Where it comes from. Horizon's toolchain (OpenExplorer ``hb_mapper makertbin``, ``input_parameters``)
converts an ``input_type_rt: nv12`` (or ``yuv444``) frame into the model's ``input_type_train: rgb|bgr``
inside the compiled model, with ``input_space_and_range: regular`` (the default: Y, U, V over the full
0..255) or ``bt601_video`` (Y 16..235, U and V 16..240, "video"/limited range, for cameras that produce
it). Its reference transforms (horizon_tc_ui's RGB->YUV transformers) use BT.601 coefficients written to
three decimals (Y = 0.299 R + 0.587 G + 0.114 B, U = -0.169 R - 0.331 G + 0.5 B + 128, ... and 0.257,
0.504, 0.098 + 16 for video range). The docs name no matrix beyond "BT.601"; we take BT.601 exactly, from
its two constants Kr = 0.299 and Kb = 0.114 (the three-decimal tables are these rounded), as OpenVINO's
NV12toRGB does for its (video-range) formula and as JPEG/JFIF does for full range:

    full ("regular"):  Y  = Kr R + Kg G + Kb B                      Kg = 1 - Kr - Kb
                       Cb = (B - Y) / (2 (1 - Kb)) + 128            (U)
                       Cr = (R - Y) / (2 (1 - Kr)) + 128            (V)
    video ("bt601_video"): Y  = 16 + 219/255 * Y_full
                           Cb = 128 + 224/255 * (Cb_full - 128), Cr likewise

and the inverse is the exact inverse of that matrix (no separately rounded decoding constants).

Rounding (the one integer rule, :func:`round_to_uint8`): compute in float64, then round half up,
``floor(x + 0.5)``, then clip to 0..255. 4:2:0 chroma (NV12) is the mean of the 2x2 block's four exact
float values (the formula applied to the block's mean colour), rounded once by the same rule; upsampling
back is nearest (each chroma sample covers its 2x2 block). Against OpenCV's fixed-point code this differs
by at most 1 (docs/image-inputs.md gives the counts and the cases).
"""
from __future__ import annotations

from typing import Dict, Tuple

import numpy as np
import numpy.typing as npt

__all__ = ["KR", "KB", "RANGES", "canonical_range", "rgb_to_yuv_matrix", "yuv_to_rgb_matrix",
           "round_to_uint8"]

#: BT.601's luma weights of red and blue (green's is what is left: 1 - KR - KB).
KR = 0.299
KB = 0.114

#: The two ranges, by their names here; Horizon's yaml spellings are accepted as aliases.
RANGES = ("full", "video")
_ALIASES: Dict[str, str] = {"full": "full", "regular": "full", "video": "video", "bt601_video": "video"}

FloatArray = npt.NDArray[np.float64]


def canonical_range(range: str) -> str:
    """``"full"`` or ``"video"`` for any accepted spelling (``"regular"``, ``"bt601_video"`` too)."""
    try:
        return _ALIASES[range]
    except (KeyError, TypeError):
        raise ValueError(f"range={range!r}: expected one of 'full' (alias 'regular') or 'video' "
                         f"(alias 'bt601_video')") from None


def rgb_to_yuv_matrix(range: str = "full") -> Tuple[FloatArray, FloatArray]:
    """(matrix (3, 3), offset (3,)) with ``[Y, U, V] = matrix @ [R, G, B] + offset``, values in 0..255.

    Rows are Y, U (Cb), V (Cr); columns R, G, B. Fresh arrays: the caller may change them.
    """
    kg = 1.0 - KR - KB
    full = np.array([
        [KR, kg, KB],
        [-KR / (2 * (1 - KB)), -kg / (2 * (1 - KB)), 0.5],
        [0.5, -kg / (2 * (1 - KR)), -KB / (2 * (1 - KR))],
    ])
    if canonical_range(range) == "full":
        return full, np.array([0.0, 128.0, 128.0])
    scale = np.array([[219.0 / 255.0], [224.0 / 255.0], [224.0 / 255.0]])
    return full * scale, np.array([16.0, 128.0, 128.0])


def yuv_to_rgb_matrix(range: str = "full") -> Tuple[FloatArray, FloatArray]:
    """(matrix (3, 3), offset (3,)) with ``[R, G, B] = matrix @ [Y, U, V] + offset``: the exact inverse
    of :func:`rgb_to_yuv_matrix` (clip the result to 0..255 before rounding it to uint8)."""
    forward, offset = rgb_to_yuv_matrix(range)
    inverse: FloatArray = np.linalg.inv(forward).astype(np.float64)
    return inverse, -(inverse @ offset)


def round_to_uint8(values: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """The rounding rule: round half up (``floor(x + 0.5)``), clip to 0..255, as uint8."""
    return np.clip(np.floor(np.asarray(values, dtype=np.float64) + 0.5), 0, 255).astype(np.uint8)
