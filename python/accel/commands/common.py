"""What the ``accel`` verbs share: turning accel's own errors into a message and exit code 1, file
arguments checked before anything runs, and loading a model (ONNX or compiled) on a device."""
from __future__ import annotations

import argparse
import functools
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Optional, Sequence, Tuple

from .._lazy_import import import_or_undo
from ..cli import UsageError
from .progress import while_running

#: The device verbs use unless ``--device`` says otherwise.
DEFAULT_DEVICE = "emu"


def reports_failures(verb: str) -> Callable[[Callable[[Any], int]], Callable[[Any], int]]:
    """Wraps a handler so that a failure of accel, the compiler or the file system prints
    ``accel VERB: error: ...`` on stderr and returns 1 instead of raising a traceback."""
    with import_or_undo():
        from ..compiler import CompileError
    from ..errors import AccelError

    def wrap(handler: Callable[[Any], int]) -> Callable[[Any], int]:
        @functools.wraps(handler)
        def run(args: Any) -> int:
            quiet_pillow_size_warning()
            try:
                return handler(args)
            except BrokenPipeError:
                raise  # stdout's reader gone: not the command's failure (accel.cli.main ends it quietly)
            # ValueError/TypeError: Model.run names a wrong input name or count, or a non-array, with them;
            # ImportError: an optional dependency missing, said with what to install (import_optional).
            except (AccelError, CompileError, OSError, ValueError, TypeError, ImportError) as e:
                print(f"accel {verb}: error: {command_line_message(e)}", file=sys.stderr)
                return 1
        return run
    return wrap


def quiet_pillow_size_warning() -> None:
    """Pillow's DecompressionBombWarning off in this command's process: pictures are read by accel.image's reader,
    which refuses a picture over its own pixel limit (--max-pixels) with an error naming the file, so the warning
    (issued as Pillow reads the header of one over Pillow's lower limit) would only precede that error."""
    import warnings

    # By its message, so as not to import Pillow (an optional dependency) for every command.
    warnings.filterwarnings("ignore", message=r"Image size \(\d+ pixels\) exceeds limit")


def command_line_message(e: BaseException) -> str:
    """``e``'s message, where it tells the Python API's fix (an input shape the model leaves open), told in the
    command line's syntax: ``--input-shape NAME=D0,D1,...``."""
    with import_or_undo():
        from ..compiler import InputShapeError

    cause = e if isinstance(e, InputShapeError) else e.__cause__
    return cause.command_line() if isinstance(cause, InputShapeError) else str(e)


def existing_file(option: str, path: str) -> Path:
    """``path`` as a Path; a UsageError naming ``option`` if there is no such file."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{option} {path!r}: no such file")
    return p


def writable_path(option: str, path: str) -> Path:
    """``path`` as a Path; a UsageError naming ``option`` if its folder does not exist."""
    p = Path(path)
    if not p.resolve().parent.is_dir():
        raise UsageError(f"{option} {path!r}: no such folder")
    return p


def number_arg(kind: Callable[[str], Any], low: float, high: float = math.inf) -> Callable[[str], Any]:
    """An argparse ``type``: the text as ``kind`` (int or float), refused (a usage error naming the option) unless
    it is a finite number in [``low``, ``high``]: NaN, inf, 1e999 and out-of-range values never reach a verb."""
    words = "an integer" if kind is int else "a number"
    bounds = f">= {low:g}" if high == math.inf else f"in [{low:g}, {high:g}]"

    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except (ValueError, OverflowError):
            value = None
        if value is None or not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"expected {words} {bounds}, got {text!r}")
        return value

    return parse


def input_shapes(pairs: Sequence[Tuple[str, Tuple[int, ...]]]) -> Optional[Dict[str, Tuple[int, ...]]]:
    """``--input-shape`` values (see :func:`add_input_shape_option`) as the compiler's dict, or None."""
    return dict(pairs) or None


def add_input_shape_option(parser: Any) -> None:
    """Adds the compiler's repeatable ``--input-shape NAME=D0,D1,...`` to ``parser``."""
    # The same syntax as `python -m accel.compiler`, from its own parser.
    with import_or_undo():
        from ..compiler.__main__ import _shape_arg

    parser.add_argument("--input-shape", action="append", default=[], type=_shape_arg, metavar="NAME=D0,D1,...",
                        help="ONNX only: fix an input's shape (repeatable)")


def add_extra_outputs_option(parser: Any) -> None:
    """Adds ``--extra-outputs NAME,NAME,...|all`` (``Device.load``'s ``extra_outputs``) to ``parser``."""
    parser.add_argument("--extra-outputs", metavar="NAME,NAME,...|all", type=_tensor_names,
                        help="ONNX and .xmodel only: also output these intermediate tensors (or all of them), "
                             "after the model's own outputs")


def _tensor_names(text: str) -> Any:
    if text.strip() == "all":
        return "all"
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected NAME,NAME,... or all, got {text!r}")
    return names


def add_image_input_option(parser: Any) -> None:
    """Adds the repeatable ``--image-input NAME=FORMAT[,to=rgb|bgr][,mean=M[,M,M]][,scale=S[,S,S]][,range=full|video]
    [,layout=NCHW|NHWC]`` (``Device.load``'s ``image_inputs``) to ``parser``."""
    parser.add_argument("--image-input", action="append", default=[], type=image_input_arg,
                        metavar="NAME=FORMAT[,to=rgb|bgr,mean=M,M,M,scale=S,S,S,range=full|video]",
                        help="ONNX only: the float image input NAME takes a camera frame of FORMAT (nv12, nv12_planes, "
                             "y, yuv444, rgb, bgr) and converts it to the model's channel order (to=, default rgb) "
                             "with BT.601 (range=full, Horizon's regular, or video), then feeds (pixel - mean) * "
                             "scale (repeatable); see docs/image-inputs.md")


IMAGE_INPUT_KEYS = ("to", "mean", "scale", "range", "layout")


def image_input_arg(text: str) -> Tuple[str, Dict[str, Any]]:
    """``NAME=FORMAT,key=value,...`` as (name, options); mean and scale take one value or three (comma separated)."""
    name, sep, rest = text.partition("=")
    tokens = [t.strip() for t in rest.split(",")]
    if not sep or not name.strip() or not tokens[0] or "=" in tokens[0]:
        raise argparse.ArgumentTypeError(f"expected NAME=FORMAT[,key=value,...], got {text!r}")
    options: Dict[str, Any] = {"format": tokens[0]}
    key = None
    for token in tokens[1:]:
        k, eq, value = token.partition("=")
        if eq:
            if k not in IMAGE_INPUT_KEYS:
                raise argparse.ArgumentTypeError(f"{text!r}: unknown key {k!r} (known: {', '.join(IMAGE_INPUT_KEYS)})")
            key, token = k, value
            options[key] = [] if key in ("mean", "scale") else value
            if key not in ("mean", "scale"):
                continue
        if key not in ("mean", "scale"):
            raise argparse.ArgumentTypeError(f"{text!r}: {token!r} is not key=value")
        try:
            options[key].append(float(token))
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: {key} value {token!r} is not a number") from None
    return name.strip(), options


def add_max_pixels_option(parser: Any) -> None:
    """Adds ``--max-pixels N``: the pixel limit of picture inputs (``accel.image.read_image``'s ``max_pixels``)."""
    from ..image.pictures import MAX_PIXELS

    parser.add_argument("--max-pixels", type=number_arg(int, 1), default=MAX_PIXELS, metavar="N",
                        help=f"refuse a picture input of more than N pixels (width x height, read from its header "
                             f"before decoding it; default {MAX_PIXELS}, 8192 x 8192)")


def image_inputs(pairs: Sequence[Tuple[str, Dict[str, Any]]]) -> Optional[Dict[str, Dict[str, Any]]]:
    """``--image-input`` values as ``Device.load``'s ``image_inputs``, or None."""
    return dict(pairs) or None


#: The image input a float input fed with pictures gets when --image-input names none: RGB scaled to [0, 1].
DEFAULT_PICTURES = {"format": "rgb", "to": "rgb", "scale": [1 / 255]}


def pictures_default(verb: str, model: Any, pictured: Iterable[str],
                     images: Optional[Dict[str, Dict[str, Any]]]) -> Dict[str, Dict[str, Any]]:
    """``images`` with :data:`DEFAULT_PICTURES` added for each input of ``model`` (an ONNX model, loaded with
    ``images`` or none) named in ``pictured`` (the inputs given pictures) that takes no frame (a float input) and
    that ``images`` leaves out; each one said on stderr, as ``accel VERB``."""
    fed = set(pictured)
    chosen = dict(images or {})
    for info in model.inputs:
        if info.name in fed and info.image is None and info.name not in chosen:
            chosen[info.name] = dict(DEFAULT_PICTURES)
            print(f"accel {verb}: input {info.name!r} takes pictures as RGB scaled to [0, 1] (--image-input "
                  f"{info.name}=rgb,scale={1 / 255:.8g}); give --image-input to choose", file=sys.stderr)
    return chosen


def add_device_option(parser: Any) -> None:
    parser.add_argument("--device", default=DEFAULT_DEVICE, metavar="URI",
                        help=f"the device: emu[:options], bpu:0, vart:0, ... (default {DEFAULT_DEVICE})")


def converted_options(path: Path) -> Tuple[str, ...]:
    """The Device.load options (``input_shapes``, ``extra_outputs``, ``image_inputs``) that the front ends which
    convert files like ``path`` take (ONNX all; a Vitis AI .xmodel on the emulator ``extra_outputs``); () for a file
    devices load as it is. The device's own load says the last word."""
    from .. import front_ends

    fronts = front_ends.claiming(path)
    return tuple(o for o in front_ends.ALL_OPTIONS if any(o in f.options for f in fronts))


def refuse_option(path: Path, flag: str, option: str, value: Any) -> None:
    """UsageError for command-line option ``flag`` (Device.load's ``option``) given (``value``) for a model whose
    format does not take it, naming the formats that do."""
    from .. import front_ends

    if value is not None and value != {} and option not in converted_options(path):
        formats = " and ".join(f.name for f in front_ends.registered() if option in f.options)
        raise UsageError(f"{flag} applies to {formats} models only; {str(path)!r} is already compiled (its "
                         f"inputs and outputs are those it was compiled with)")


def load_model(device: Any, path: Path, shapes: Optional[Dict[str, Tuple[int, ...]]], extra_outputs: Any = None,
               images: Optional[Dict[str, Dict[str, Any]]] = None) -> Any:
    """``path`` loaded on ``device``: ONNX (compiled on the fly, emulator only, with ``extra_outputs`` and the image
    inputs ``images`` as ``Device.load`` takes them), a Vitis AI .xmodel (on the emulator, with ``extra_outputs``)
    or a compiled model."""
    refuse_option(path, "--input-shape", "input_shapes", shapes)
    refuse_option(path, "--image-input", "image_inputs", images)
    with while_running(f"compiling {path.name}", sys.stderr, enabled=bool(converted_options(path))):
        return device.load(path, input_shapes=shapes, extra_outputs=extra_outputs, image_inputs=images)


def describe_tensors(infos: Sequence[Any]) -> str:
    """``name shape dtype`` of each of a model's inputs or outputs (and the frame an image input takes: ``nv12
    640x480``), comma separated."""
    return ", ".join(f"{i.name} {tuple(i.shape)} {i.dtype}" + (f" {i.image}" if i.image is not None else "")
                     for i in infos)
