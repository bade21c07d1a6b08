"""Camera frames in: the colour conversion and normalization a Horizon toolchain compiles into an image
model, prepended to the ONNX graph before import.

`parse(spec)` checks a request (FrameInputError names what is wrong); `prepend(proto, requests, input_shapes)`
replaces each named float input (4-D, NCHW or NHWC, 3 channels; 1 for
"y") by a uint8 frame input in the ABI's image layout (accel.h, accel_image_format: batch 1, NHWC, the
buffer's rows, columns and bytes per pixel), and adds the ONNX nodes that turn the frame into what the
model was trained on:

    frame (uint8) -> float -> [NV12: split Y and UV, UV upsampled by nearest] -> YUV
        -> RGB = round(clip(M @ YUV + offset, 0, 255))      (M, offset: accel.image.formula, BT.601)
        -> (RGB - mean) * scale                               (Horizon's mean_value and scale_value)
        -> NCHW if the model's input is -> the model

The conversion rounds to whole levels as `accel.image.nv12_to_rgb` does (clip, then floor(x + 0.5)), so a
frame gives the model what converting it with accel.image first would give (float32 against float64: a
level can differ where the exact value is within ~1e-5 of a half). For a quantized (QDQ) model the added
nodes are float and feed the model's own QuantizeLinear: the integers after it are the model's.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ._shared import formula
from .errors import FrameInputError

# What a frame input can be (accel_image_format names); nv12_planes makes two inputs, <name>_y and <name>_uv.
FORMATS = ("nv12", "nv12_planes", "y", "yuv444", "rgb", "bgr")
CHANNEL_ORDERS = ("rgb", "bgr")
_KEYS = ("format", "to", "mean", "scale", "range", "layout")


@dataclass(frozen=True)
class ImageInput:
    """One input's request, checked: the frame's format, the model's channel order and normalization."""

    name: str
    format: str
    to: str = "rgb"
    mean: Tuple[float, ...] = (0.0,)
    scale: Tuple[float, ...] = (1.0,)
    range: str = "full"
    layout: Optional[str] = None  # the model input's, "NCHW" or "NHWC"; None: from its shape


def parse(spec) -> List[ImageInput]:
    """The requests of an image_inputs mapping {input name: {"format": ..., ...}}, each checked."""
    if spec is None:
        return []
    if not hasattr(spec, "items"):
        raise TypeError(f"image_inputs must be a dict mapping input names to dicts, not {type(spec).__name__}")
    out = []
    for name, options in spec.items():
        if isinstance(options, str):
            options = {"format": options}
        if not hasattr(options, "items"):
            raise TypeError(f"image_inputs['{name}'] must be a dict such as {{'format': 'nv12'}}, "
                            f"not {type(options).__name__}")
        unknown = sorted(set(options) - set(_KEYS), key=repr)
        if unknown:
            raise FrameInputError(f"image_inputs['{name}']: unknown key {unknown[0]!r} "
                                  f"(known: {', '.join(_KEYS)})")
        fmt = options.get("format")
        if fmt not in FORMATS:
            raise FrameInputError(f"image_inputs['{name}']: format {fmt!r}: expected one of {', '.join(FORMATS)}")
        to = options.get("to", fmt if fmt in CHANNEL_ORDERS else "rgb")
        if to not in CHANNEL_ORDERS:
            raise FrameInputError(f"image_inputs['{name}']: to={to!r}: expected 'rgb' or 'bgr' "
                                  f"(the model's channel order)")
        layout = options.get("layout")
        if layout not in (None, "NCHW", "NHWC"):
            raise FrameInputError(f"image_inputs['{name}']: layout={layout!r}: expected 'NCHW' or 'NHWC'")
        try:
            rng = formula.canonical_range(options.get("range", "full"))
        except ValueError as e:
            raise FrameInputError(f"image_inputs['{name}']: {e}") from None
        channels = 1 if fmt == "y" else 3
        mean = _numbers(name, "mean", options.get("mean", 0.0), channels)
        scale = _numbers(name, "scale", options.get("scale", 1.0), channels)
        _check_normalization(name, mean, scale)
        out.append(ImageInput(name=str(name), format=fmt, to=to, mean=mean, scale=scale, range=rng, layout=layout))
    return out


_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _numbers(name, key, value, channels: int) -> Tuple[float, ...]:
    """mean or scale: one number, or one per channel, each finite in float32 (the model computes in it); scale
    nonzero there too."""
    if isinstance(value, np.ndarray):
        items = list(value) if value.ndim == 1 else [value[()]] if value.ndim == 0 else [value]
    else:
        items = list(value) if isinstance(value, (list, tuple)) else [value]
    counts = "one number (a y frame has one channel)" if channels == 1 else "one number or three (one per channel)"
    if len(items) not in (1, channels):
        raise FrameInputError(f"image_inputs['{name}']: {key}={value!r}: expected {counts}")
    for v in items:
        if not _is_number(v):
            raise FrameInputError(f"image_inputs['{name}']: {key}={value!r}: expected {counts}; {v!r} "
                                  f"({type(v).__name__}) is not a number")
    values = tuple(float(v) for v in items)
    with np.errstate(over="ignore", under="ignore"):
        as_float32 = np.asarray(values, np.float64).astype(np.float32)
    for v, v32 in zip(values, as_float32):
        if not np.isfinite(v32):
            raise FrameInputError(f"image_inputs['{name}']: {key}={value!r}: {v!r} is not a finite float32 "
                                  f"(expected within +-{_FLOAT32_MAX:.8g})")
        if key == "scale" and v32 == 0:
            raise FrameInputError(f"image_inputs['{name}']: scale={value!r}: {v!r} is 0 in float32 (expected a "
                                  f"nonzero scale, at least {float(np.finfo(np.float32).smallest_subnormal):.8g} "
                                  f"in magnitude)")
    return values


def _is_number(v) -> bool:
    """A real number: an int or float of Python or NumPy; not a bool (a flag passed by mistake), a string or an
    object."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


def _check_normalization(name, mean: Tuple[float, ...], scale: Tuple[float, ...]) -> None:
    """(level - mean) * scale, computed in float32 for the levels 0 and 255 of each channel, must stay finite:
    else the model would see infinities (and NaN after them)."""
    m = np.asarray(mean, np.float32)
    s = np.asarray(scale, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        ends = (np.asarray([[0.0], [255.0]], np.float32) - m) * s
    if not np.all(np.isfinite(ends)):
        raise FrameInputError(f"image_inputs['{name}']: mean={_plain(mean)} and scale={_plain(scale)} take pixel "
                              f"levels 0..255 past float32's range: (level - mean) * scale must stay within "
                              f"+-{_FLOAT32_MAX:.8g}")


def _plain(values: Tuple[float, ...]):
    return values[0] if len(values) == 1 else list(values)


def frame_tensors(request: ImageInput, height: int, width: int) -> List[Tuple[str, Tuple[int, ...], str]]:
    """The frame inputs that stand for the model input: (name, uint8 shape, accel_image_format name)."""
    n = request.name
    if request.format == "nv12":
        return [(n, (1, height * 3 // 2, width, 1), "nv12")]
    if request.format == "nv12_planes":
        return [(f"{n}_y", (1, height, width, 1), "nv12_y"), (f"{n}_uv", (1, height // 2, width // 2, 2), "nv12_uv")]
    if request.format == "y":
        return [(n, (1, height, width, 1), "y")]
    return [(n, (1, height, width, 3), request.format)]


def prepend(proto: onnx.ModelProto, requests: Sequence[ImageInput], input_shapes=None):
    """(a new ModelProto with the frame inputs and their conversion for `requests` (parse's), input_shapes without
    the replaced inputs, {frame input name: accel_image_format name}). `proto` is not changed."""
    input_shapes = dict(input_shapes or {})
    if not requests:
        return proto, input_shapes, {}
    model = onnx.ModelProto()
    model.CopyFrom(proto)
    g = model.graph
    by_name = {vi.name: vi for vi in g.input}
    initializers = {t.name for t in g.initializer}
    taken = {x for n in g.node for x in (*n.input, *n.output)} | set(by_name) | initializers
    formats: Dict[str, str] = {}
    new_nodes: List[onnx.NodeProto] = []
    for r in requests:
        vi = by_name.get(r.name)
        if vi is None or r.name in initializers:
            names = ", ".join(f"'{x}'" for x in by_name if x not in initializers)
            raise FrameInputError(f"image_inputs names '{r.name}', which is not an input of the model "
                               f"(its inputs: {names})")
        layout, channels, height, width = _model_input(vi, r, input_shapes.pop(r.name, None))
        frames = frame_tensors(r, height, width)
        for fname, _, _ in frames:
            if fname != r.name and fname in taken:
                raise FrameInputError(f"image_inputs['{r.name}']: the frame input '{fname}' it makes is already a "
                                   f"tensor of the model")
        build = _Builder(r.name, taken)
        new_nodes += build.conversion(r, frames, layout, channels, height, width)
        _rename_reads(g, r.name, build.output)
        model.graph.initializer.extend(build.constants)
        index = list(g.input).index(vi)
        del g.input[index]
        for k, (fname, shape, fmt) in enumerate(frames):
            g.input.insert(index + k, helper.make_tensor_value_info(fname, TensorProto.UINT8, list(shape)))
            formats[fname] = fmt
    nodes = new_nodes + list(g.node)
    del g.node[:]
    g.node.extend(nodes)
    return model, input_shapes, formats


def _rename_reads(g: onnx.GraphProto, old: str, new: str) -> None:
    """The model's nodes (and outputs) read `new` where they read the input `old`."""
    for node in g.node:
        for i, x in enumerate(node.input):
            if x == old:
                node.input[i] = new
    for out in g.output:
        if out.name == old:
            raise FrameInputError(f"image_inputs['{old}']: the input is also an output of the model; a frame input "
                               f"cannot be")


def _model_input(vi, r: ImageInput, given) -> Tuple[str, int, int, int]:
    """(layout, channels, height, width) of the float input `vi` that the frame replaces."""
    t = vi.type.tensor_type
    if t.elem_type != TensorProto.FLOAT:
        dtype = TensorProto.DataType.Name(t.elem_type).lower()
        raise FrameInputError(f"image_inputs['{r.name}']: the input is {dtype}; a frame can replace a float32 input "
                              f"only")
    if given is not None:
        dims: List[Optional[int]] = [int(d) for d in given]
    else:
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
    if len(dims) != 4 or any(d is None for d in dims):
        raise FrameInputError(f"image_inputs['{r.name}']: the input's shape {_shape_text(dims)} is not a static 4-D "
                           f"image shape (give input_shapes for it)")
    channels_wanted = 1 if r.format == "y" else 3
    layout = r.layout or ("NHWC" if dims[1] not in (1, 3) and dims[3] in (1, 3) else "NCHW")
    n, c, h, w = (dims[0], dims[1], dims[2], dims[3]) if layout == "NCHW" else (dims[0], dims[3], dims[1], dims[2])
    assert n is not None and c is not None and h is not None and w is not None
    if n != 1:
        raise FrameInputError(f"image_inputs['{r.name}']: batch {n}; a frame input has batch 1")
    if c != channels_wanted:
        raise FrameInputError(f"image_inputs['{r.name}']: the input has {c} channels ({layout} {_shape_text(dims)}); a "
                           f"{r.format} frame gives {channels_wanted}")
    if r.format.startswith("nv12") and (h % 2 or w % 2):
        raise FrameInputError(f"image_inputs['{r.name}']: NV12 needs an even height and width (4:2:0 chroma), "
                           f"not {h}x{w}")
    return layout, c, h, w


def _shape_text(dims: Sequence[Optional[int]]) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in dims) + ")"


class _Builder:
    """Names, constants and nodes of one input's conversion (everything named after the input)."""

    def __init__(self, name: str, taken: set):
        self.base, self.taken = name, taken
        self.constants: List[onnx.TensorProto] = []
        self.nodes: List[onnx.NodeProto] = []
        self.output = self._name("preprocessed")  # what the model's nodes read in place of the input

    def _name(self, hint: str) -> str:
        stem = f"{self.base}_{hint}"
        name, k = stem, 1
        while name in self.taken:
            name, k = f"{stem}_{k}", k + 1
        self.taken.add(name)
        return name

    def const(self, hint: str, value, dtype=np.float32) -> str:
        name = self._name(hint)
        self.constants.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(self, op_type: str, inputs: Sequence[str], hint: str, output: Optional[str] = None, **attrs) -> str:
        out = output or self._name(hint)
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=self._name(f"{hint}_node"), **attrs))
        return out

    def conversion(self, r: ImageInput, frames, layout: str, channels: int, h: int, w: int) -> List[onnx.NodeProto]:
        pixels = self._pixels(r, [self.op("Cast", [f], "float", to=TensorProto.FLOAT) for f, _, _ in frames], h, w)
        x = self._normalized(r, pixels, channels)
        if layout == "NCHW":
            self.op("Transpose", [x], "nchw", output=self.output, perm=[0, 3, 1, 2])
        else:
            self.op("Identity", [x], "nhwc", output=self.output)
        return self.nodes

    def _pixels(self, r: ImageInput, floats: List[str], h: int, w: int) -> str:
        """(1, H, W, C) float levels in the model's channel order."""
        if r.format in ("rgb", "bgr"):
            if r.format == r.to:
                return floats[0]
            return self.op("Gather", [floats[0], self.const("reorder", [2, 1, 0], np.int64)], "reorder", axis=3)
        if r.format == "y":
            return floats[0]
        if r.format == "yuv444":
            yuv = floats[0]
        else:
            if r.format == "nv12":
                y = self._rows(floats[0], 0, h, "y")
                uv_rows = self._rows(floats[0], h, h * 3 // 2, "uv")
            else:
                y, uv_rows = floats
            # Each U, V pair covers its 2x2 block: (1, H/2, 1, W/2, 1, 2) broadcast to (1, H/2, 2, W/2, 2, 2).
            uv = self.op("Reshape", [uv_rows, self.const("uv_blocks", [1, h // 2, 1, w // 2, 1, 2], np.int64)],
                         "uv_blocks")
            uv = self.op("Expand", [uv, self.const("uv_expand", [1, h // 2, 2, w // 2, 2, 2], np.int64)], "uv_expanded")
            uv = self.op("Reshape", [uv, self.const("uv_full", [1, h, w, 2], np.int64)], "uv_full")
            yuv = self.op("Concat", [y, uv], "yuv", axis=3)
        matrix, offset = formula.yuv_to_rgb_matrix(r.range if r.format.startswith("nv12") else "full")
        if r.to == "bgr":
            matrix, offset = matrix[::-1], offset[::-1]
        # round half up after the clip, as accel.image does: floor(clip(x, 0, 255) + 0.5)
        rgb = self.op("MatMul", [yuv, self.const("yuv_to_rgb", matrix.T)], "rgb_exact")
        rgb = self.op("Add", [rgb, self.const("rgb_offset", offset + 0.5)], "rgb_offset")
        rgb = self.op("Clip", [rgb, self.const("low", 0.5), self.const("high", 255.5)], "rgb_clipped")
        return self.op("Floor", [rgb], "rgb")

    def _rows(self, x: str, start: int, end: int, hint: str) -> str:
        ints = np.int64
        return self.op("Slice", [x, self.const(f"{hint}_start", [start], ints), self.const(f"{hint}_end", [end], ints),
                                 self.const(f"{hint}_axes", [1], ints)], hint)

    def _normalized(self, r: ImageInput, x: str, channels: int) -> str:
        mean = np.broadcast_to(np.asarray(r.mean), (channels,))
        scale = np.broadcast_to(np.asarray(r.scale), (channels,))
        if np.any(mean != 0):
            x = self.op("Sub", [x, self.const("mean", mean)], "centred")
        if np.any(scale != 1):
            x = self.op("Mul", [x, self.const("scale", scale)], "scaled")
        return x
