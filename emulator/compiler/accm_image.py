"""The .accm tensor record's image_format (emulator/FORMAT.md, minor 4): its codes, and the rules a graph
input that is an image keeps. accm.py writes and reads the field; these are what its writer checks (the
emulator's reader, model_reader.cc, keeps the same rules)."""

from __future__ import annotations

# accel_image_format (accel.h, ABI 1.2): the pixel format of a graph input that is a camera frame the model
# converts itself. Every image tensor is uint8, NHWC, batch 1.
from ._shared import IMAGE_FORMATS

IMAGE_FORMAT_NAMES = {code: name for name, code in IMAGE_FORMATS.items()}
# Bytes per pixel of each format's buffer: its shape's last dim.
_CHANNELS = {"nv12": 1, "nv12_y": 1, "nv12_uv": 2, "y": 1, "yuv444": 3, "rgb": 3, "bgr": 3}
_NV12_FORMS = ("nv12", "nv12_y", "nv12_uv")
# The tensor record's codes an image needs (accm.KIND_INPUT, accm.LAYOUT_NHWC).
_KIND_INPUT, _LAYOUT_NHWC = 1, 2


def image_size(image_format: str, dims: tuple) -> tuple[int, int]:
    """(height, width) in pixels of an image of `image_format` whose buffer has shape `dims` (1, rows,
    columns, bytes per pixel): NV12's buffer holds H * 3/2 rows, its UV plane's H/2 rows of W/2 pairs."""
    rows, cols = int(dims[1]), int(dims[2])
    if image_format == "nv12":
        return rows * 2 // 3, cols
    if image_format == "nv12_uv":
        return rows * 2, cols * 2
    return rows, cols


def check_image(name: str, image_format: int, dtype: str, kind: int, layout: int, dims: tuple) -> None:
    """Raises ValueError unless a tensor record's image_format is allowed: 0, or a known format on a uint8
    (`dtype`, a numpy dtype name) NHWC graph input of batch 1 whose shape the format gives."""
    if image_format == 0:
        return
    fmt = IMAGE_FORMAT_NAMES.get(image_format)
    if fmt is None:
        raise ValueError(f"tensor '{name}': image_format {image_format} is unknown "
                         f"(known: {', '.join(f'{c} {n}' for n, c in IMAGE_FORMATS.items())})")
    if kind != _KIND_INPUT:
        raise ValueError(f"tensor '{name}': image_format {fmt} on a tensor of kind {kind}; only graph inputs "
                         f"(kind {_KIND_INPUT}) are images")
    if dtype != "uint8":
        raise ValueError(f"tensor '{name}': image_format {fmt} needs dtype uint8, got {dtype}")
    dims = tuple(int(d) for d in dims)
    if len(dims) != 4 or layout != _LAYOUT_NHWC:
        raise ValueError(f"tensor '{name}': image_format {fmt} needs 4 dims and layout NHWC, got dims {dims} "
                         f"and layout {layout}")
    channels = _CHANNELS[fmt]
    if dims[0] != 1 or dims[3] != channels:
        raise ValueError(f"tensor '{name}': image_format {fmt} needs shape (1, rows, columns, {channels}), "
                         f"got {dims}")
    if fmt == "nv12" and dims[1] % 3 != 0:
        raise ValueError(f"tensor '{name}': image_format nv12 needs H * 3/2 rows (a multiple of 3), got {dims}")
    height, width = image_size(fmt, dims)
    if fmt in _NV12_FORMS and (height < 2 or width < 2 or height % 2 or width % 2):
        raise ValueError(f"tensor '{name}': image_format {fmt} needs an even height and width of at least 2, "
                         f"got {height}x{width} (shape {dims})")


def check_image_pairs(formats: list[int], dims: list[tuple], names: list[str]) -> None:
    """Raises ValueError unless every nv12_y graph input is followed by an nv12_uv one of the same image
    size, and every nv12_uv one follows such an nv12_y (the arguments: the graph inputs', in order)."""
    y, uv = IMAGE_FORMATS["nv12_y"], IMAGE_FORMATS["nv12_uv"]
    for i, fmt in enumerate(formats):
        if fmt == y:
            if i + 1 >= len(formats) or formats[i + 1] != uv:
                raise ValueError(f"tensor '{names[i]}': image_format nv12_y (input {i}) is not followed by its "
                                 f"nv12_uv plane as input {i + 1}")
            if image_size("nv12_y", dims[i]) != image_size("nv12_uv", dims[i + 1]):
                raise ValueError(f"tensor '{names[i + 1]}': the nv12_uv plane {tuple(dims[i + 1])} does not "
                                 f"match the size of its nv12_y plane '{names[i]}' {tuple(dims[i])}")
        elif fmt == uv and (i == 0 or formats[i - 1] != y):
            raise ValueError(f"tensor '{names[i]}': image_format nv12_uv (input {i}) does not follow an nv12_y "
                             f"plane")
