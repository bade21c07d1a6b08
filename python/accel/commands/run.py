"""``accel run``: one run of a model on a device, with inputs from ``.npy`` files; its outputs (and intermediate
tensors) printed and saved."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .._wording import counted
from ..array_files import read_npy
from ..cli import UsageError
from ..errors import ModelFormatError
from ..run_record import RunRecord, save, write_npz
from .common import (add_device_option, add_extra_outputs_option, add_image_input_option, add_input_shape_option,
                     add_max_pixels_option, converted_options, describe_tensors, existing_file, image_inputs,
                     input_shapes, load_model, pictures_default, refuse_option, reports_failures, writable_path)


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``run`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "run", help="run a model once on inputs from .npy files",
        description="Loads a model (ONNX on the emulator, or a compiled model), runs it once, and prints "
                    "each output's name, shape, dtype and a summary. Inputs are never cast: each .npy "
                    "must have the input's dtype and shape. Exit code: 0 ok, 1 failure (a wrong input, "
                    "a model that cannot load), 2 usage error.")
    p.add_argument("model", metavar="MODEL", help="the model: .onnx (emulator) or compiled (.accm, ...)")
    p.add_argument("--input", action="append", default=[], required=True, metavar="[NAME=]FILE",
                   help="an input: FILE.npy for the model's inputs in order, NAME=FILE.npy by name (repeatable); "
                        "for an image input a picture (.jpg, .png, ...), read with Pillow, resized (bilinear) to the "
                        "model's size and converted to its frame format (NV12, ...; full range); a float input of an "
                        "ONNX model given a picture without --image-input takes it as RGB scaled to [0, 1] "
                        "(rgb,scale=1/255), as accel batch does")
    p.add_argument("--output", metavar="OUT.npz", help="save the outputs (by name) to this .npz file")
    p.add_argument("--save", metavar="RUN.npz",
                   help="save the run to this .npz file: inputs, outputs and their quantization, for `accel compare`")
    add_extra_outputs_option(p)
    p.add_argument("--save-intermediates", action="store_true",
                   help="--extra-outputs all for an ONNX model; a compiled model gives the tensors it was compiled "
                        "to output. Needs --save or --output")
    add_device_option(p)
    add_input_shape_option(p)
    add_image_input_option(p)
    add_max_pixels_option(p)
    p.set_defaults(handler=command)
    return p


def split_input(text: str) -> Tuple[Optional[str], str]:
    """``(name or None, path)`` of an ``--input`` value; ``a=b.npy`` is a name unless the whole is a file."""
    name, sep, path = text.partition("=")
    if sep and name and not Path(text).is_file():
        return name, path
    return None, text


class Picture:
    """A picture file given for an image input: read once the model says which frame it takes (at most
    ``max_pixels`` pixels, accel.image.read_image's limit)."""

    def __init__(self, path: Path, max_pixels: Optional[int] = None) -> None:
        from ..image import MAX_PIXELS

        self.path = path
        self.max_pixels = MAX_PIXELS if max_pixels is None else max_pixels

    def inputs(self, model: Any, name: str) -> List[Any]:
        """The TensorInfo of each input the picture given for ``name`` fills: that input's, or both planes' of an
        NV12 y/uv pair (named by either plane or by the name they share, ``images`` for ``images_y`` and
        ``images_uv``); [] for a name the model does not have."""
        infos = list(model.inputs)
        names = [i.name for i in infos]
        k = names.index(name) if name in names else names.index(f"{name}_y") if f"{name}_y" in names else None
        if k is None:
            return []
        if infos[k].image is not None and infos[k].image.format == "nv12_uv" and k > 0:
            k -= 1  # the pair starts at its y plane
        pair = infos[k].image is not None and infos[k].image.format == "nv12_y" and k + 1 < len(infos)
        return infos[k:k + 2] if pair else [infos[k]]

    def frames(self, model: Any, name: str) -> Dict[str, np.ndarray]:
        """The frame(s) of input ``name``: {name: frame}, or both planes of an NV12 pair (see :meth:`inputs`)."""
        from ..image import read_image, to_frame

        infos = self.inputs(model, name)
        if not infos:
            return {name: np.zeros(0)}  # an unknown name: Model.run words it
        info = infos[0]
        if info.image is None:
            raise ValueError(f"--input {name}={self.path}: input {info.name!r} is not an image input ({info}); give "
                             f"it a .npy array")
        bgr = read_image(self.path, (info.image.width, info.image.height), max_pixels=self.max_pixels)
        frame = to_frame(bgr, info.image.format)
        if isinstance(frame, tuple):
            return {infos[0].name: frame[0], infos[1].name: frame[1]}
        return {info.name: frame}


Given = List[Tuple[Optional[str], Any]]


def read_inputs(values: Sequence[str], max_pixels: Optional[int] = None) -> Given:
    """``[(name or None, array or Picture)]`` from the ``--input`` values (pictures of at most ``max_pixels``
    pixels); UsageError for a missing file."""
    from ..image import IMAGE_SUFFIXES

    found: Given = []
    for value in values:
        name, path = split_input(value)
        file = existing_file("--input", path)
        if file.suffix.lower() in IMAGE_SUFFIXES:
            found.append((name, Picture(file, max_pixels)))
            continue
        try:  # bounded: a header may declare more than the file holds
            array = read_npy(file, f"--input {value!r}")
        except ModelFormatError as e:
            raise UsageError(f"{e} (an input is a .npy array or a picture)") from None
        found.append((name, array))
    return found


def placed(model: Any, given: Given) -> Dict[str, Any]:
    """``{input name: array or Picture}``: named inputs as given, unnamed ones filling the remaining inputs in order;
    a picture under each input it fills (both planes of an NV12 y/uv pair). Unknown or missing names are left for
    ``Model.run`` to report."""
    named: Dict[str, Any] = {}

    def place(name: str, a: Any) -> None:
        filled = [i.name for i in a.inputs(model, name)] if isinstance(a, Picture) else []
        named.update(dict.fromkeys(filled or [name], a))

    for n, a in given:
        if n is not None:
            place(n, a)
    for a in [a for n, a in given if n is None]:
        free = [i.name for i in model.inputs if i.name not in named]
        if not free:
            raise ValueError(f"{counted(len(given), 'input')} given; model {model.name!r} takes {len(model.inputs)}: "
                             f"{describe_tensors(model.inputs)}")
        place(free[0], a)
    return named


def pictured(model: Any, given: Given) -> List[str]:
    """The inputs of ``model`` that ``given`` feeds pictures."""
    return [name for name, a in placed(model, given).items() if isinstance(a, Picture)]


def feeds(model: Any, given: Given) -> Dict[str, np.ndarray]:
    """``{input name: array}`` (see :func:`placed`): a picture read into the frame its input takes."""
    fed: Dict[str, np.ndarray] = {}
    for name, a in placed(model, given).items():
        if name not in fed:  # an NV12 pair's uv plane came with its y plane
            fed.update(a.frames(model, name) if isinstance(a, Picture) else {name: a})
    return fed


def load_fed(device: Any, path: Path, shapes: Optional[Dict[str, Tuple[int, ...]]], extra_outputs: Any,
             images: Optional[Dict[str, Dict[str, Any]]], given: Given, verb: str) -> Any:
    """``path`` loaded on ``device`` (:func:`~accel.commands.common.load_model`) for the inputs ``given``: an ONNX
    model whose float input is given a picture (and no --image-input) loaded again with that input taking pictures
    as RGB scaled to [0, 1], as accel batch takes them (:func:`~accel.commands.common.pictures_default`)."""
    model = load_model(device, path, shapes, extra_outputs, images)
    if "image_inputs" not in converted_options(path):
        return model  # a compiled model's inputs are as they are
    chosen = pictures_default(verb, model, pictured(model, given), images)
    return model if chosen == (images or {}) else load_model(device, path, shapes, extra_outputs, chosen)


def summary(array: np.ndarray) -> str:
    """A short summary of an output: its range and mean, and its first values."""
    if array.size == 0:
        return "empty"
    flat = array.reshape(-1)
    wide = flat.astype(np.float64)
    # The output's line is one line: NumPy would wrap the list at 75 characters (its default line width).
    head = np.array2string(flat[:6], precision=4, separator=", ", max_line_width=sys.maxsize)
    more = " ..." if flat.size > 6 else ""
    return f"min {wide.min():.6g} max {wide.max():.6g} mean {wide.mean():.6g} values {head}{more}"


@reports_failures("run")
def command(args: argparse.Namespace) -> int:
    """``accel run``: loads, runs once, prints and saves the outputs; returns the exit code."""
    import accel

    path = existing_file("MODEL", args.model)
    out_path = writable_path("--output", args.output) if args.output else None
    record_path = writable_path("--save", args.save) if args.save else None
    extra = args.extra_outputs
    if args.save_intermediates:
        if out_path is None and record_path is None:
            raise UsageError("--save-intermediates needs --save RUN.npz or --output OUT.npz")
        if extra is not None:
            raise UsageError("--save-intermediates is --extra-outputs all: give one of them")
        extra = "all" if "extra_outputs" in converted_options(path) else None
    refuse_option(path, "--extra-outputs", "extra_outputs", extra)
    given = read_inputs(args.input, args.max_pixels)
    with accel.open(args.device) as dev:
        model = load_fed(dev, path, input_shapes(args.input_shape), extra, image_inputs(args.image_input), given,
                         "run")
        fed = feeds(model, given)
        results = model.run(fed)
        outputs = {info.name: np.array(r) for info, r in zip(model.outputs, results)}
        device = f"{args.device} ({dev.info.name})"
    printed = list(outputs.items())
    if extra == "all":
        printed = printed[:len(printed) - len(model.extra_outputs)]
    for name, array in printed:
        print(f"{name}: shape {array.shape} {array.dtype}: {summary(array)}")
    if len(printed) < len(outputs):
        print(f"and {counted(len(outputs) - len(printed), 'intermediate tensor')} (saved, not printed)")
    if out_path is not None:
        write_npz(out_path, outputs)
        print(f"outputs saved to {out_path}")
    if record_path is not None:
        inputs = {i.name: np.asarray(fed[i.name]) for i in model.inputs}
        quant = {i.name: i.quant for i in [*model.inputs, *model.outputs] if i.quant is not None}
        save(record_path, RunRecord(inputs=inputs, outputs=outputs, quant=quant, model=path.name, device=device))
        print(f"run saved to {record_path} ({counted(len(inputs), 'input')}, {counted(len(outputs), 'output')})")
    return 0
