"""Picture files read as BGR arrays: the one reader of pictures, for Python, ``accel run``/``bench`` and ``accel
batch``.

    bgr = image.read_image("photo.jpg", size=(640, 480))      # (480, 640, 3) uint8, BGR

A picture file is untrusted input to a decoder: a few hundred bytes of PNG can claim 100000 x 100000 pixels and a
small one decode to gigabytes. So its size is read from its header first (``Image.open`` decodes nothing) and a
picture of more than ``max_pixels`` pixels is refused before any decoding; a JPEG is decoded at the size needed
(its DCT scaled by 1/2, 1/4 or 1/8, ``Image.draft``), and whatever the decoder raises becomes an error naming the
file. Pillow's own limit (``PIL.Image.MAX_IMAGE_PIXELS``) is a process-wide setting anyone may change or lift:
this check does not depend on it. docs/image-inputs.md.
"""
from __future__ import annotations

import os
from typing import Any, Optional, Tuple, Union

import numpy as np

from .._lazy_import import import_optional
from ..errors import AccelError, InvalidArgumentError

__all__ = ["IMAGE_SUFFIXES", "MAX_PIXELS", "read_image"]

#: File name endings read as pictures (anything else is left to NumPy).
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".ppm", ".pgm", ".pnm", ".tif", ".tiff", ".webp", ".gif")

#: The most pixels (width x height, as its header says) a picture file may have by default: 8192 x 8192, 64 Mi.
#: Decoding one that large takes up to about 7 bytes a pixel (the decoded picture, then its RGB copy).
MAX_PIXELS = 8192 * 8192

#: How much larger than the wanted size a picture is first reduced to by averaging whole blocks of pixels
#: (Pillow's ``reducing_gap``); the bilinear filter does the rest. Pillow's documentation: from 3 on, the result
#: cannot be told from the bilinear filter's alone in most cases; it is much faster on large reductions.
REDUCING_GAP = 3.0


def pillow() -> Any:
    """Pillow's ``PIL.Image`` module; ImportError saying what to install without it."""
    return import_optional("PIL.Image", "reading picture files needs Pillow",
                           "pip install pillow (or pip install 'accel[ray]', which brings it)")


def positive_int(name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise InvalidArgumentError(f"{name}={value!r}: expected a positive integer")
    return int(value)


def checked_size(size: Any) -> Tuple[int, int]:
    """``size`` as ``(width, height)``, two positive integers."""
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise InvalidArgumentError(f"size={size!r}: expected (width, height)")
    return positive_int("size[0] (width)", size[0]), positive_int("size[1] (height)", size[1])


def read_image(path: Union[str, os.PathLike[str]], size: Optional[Tuple[int, int]] = None, *,
               max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """The picture at ``path`` as a BGR ``(H, W, 3)`` uint8 array (OpenCV's order), resized to ``size = (width,
    height)`` with Pillow's bilinear filter when it is given and differs (a JPEG decoded at 1/2, 1/4 or 1/8 of its
    size where that is still at least ``size``).

    FileNotFoundError for a missing file; InvalidArgumentError naming the file for a picture of more than
    ``max_pixels`` pixels (:data:`MAX_PIXELS` by default; refused from its header, before decoding) and for one
    that cannot be decoded (not a picture, truncated, corrupt); ImportError (saying what to install) without
    Pillow."""
    max_pixels = positive_int("max_pixels", max_pixels)
    wanted = None if size is None else checked_size(size)
    Image = pillow()
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such picture file: {path!r}")
    try:
        with Image.open(path) as picture:  # the header only: nothing is decoded yet
            width, height = picture.size
            if width * height > max_pixels:
                raise InvalidArgumentError(
                    f"picture {path!r} is {width}x{height} ({width * height} pixels), more than the limit of "
                    f"{max_pixels} pixels (max_pixels; accel's CLI: --max-pixels)")
            box = None
            if wanted is not None:
                drafted = picture.draft("RGB", wanted)  # JPEG only: None for other formats
                box = None if drafted is None else drafted[1]
            picture.load()
            rgb = picture if picture.mode == "RGB" else picture.convert("RGB")
            if wanted is not None and rgb.size != wanted:
                rgb = rgb.resize(wanted, Image.Resampling.BILINEAR, box=box, reducing_gap=REDUCING_GAP)
            array = np.asarray(rgb, dtype=np.uint8)
    except AccelError:
        raise
    except Image.DecompressionBombError as e:  # Pillow's process-wide limit, met in Image.open before ours
        raise InvalidArgumentError(f"picture {path!r} is too large: {e} (Pillow's limit, PIL.Image.MAX_IMAGE_PIXELS; "
                                   f"accel's is max_pixels={max_pixels})") from None
    except Exception as e:  # a decoder fed a hostile file may raise anything: the file is at fault, name it
        raise InvalidArgumentError(f"cannot read {path!r} as a picture: {str(e) or type(e).__name__}") from None
    return np.ascontiguousarray(array[:, :, ::-1])
