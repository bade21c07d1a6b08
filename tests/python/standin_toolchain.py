"""The stand-in SDKs' toolchain, for running the Python suite on a vendor device (ACCEL_TEST_DEVICE).

On a board, a model reaches the BPU as a `.bin` made by Horizon's compiler and the DPU as an `.xmodel`
made by Vitis AI's; ``Device.load`` takes those and nothing else. The stand-in SDKs (tests/standin) run
their model files on the emulator, and their tools pack an emulator model into one. ``install`` wraps
``accel.Device.load`` so that an ONNX model or an emulator model handed to a device of that backend is
packed first, exactly as the test would have loaded it on the emulator: a path stays a path (a packed file
of the same stem, so the model keeps its name), bytes stay bytes. Everything else (the device's own files,
bad input) reaches the real ``load`` untouched, so its errors are the driver's.

Test-only: nothing here is part of accel.
"""
from __future__ import annotations

import atexit
import functools
import importlib
import itertools
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Callable, Dict, Tuple

import accel
from accel import compile_cache

STANDIN = Path(__file__).resolve().parents[1] / "standin"
ACCM_MAGIC = b"ACCM"


# Model formats by file suffix (X3/X5's `.bin`, S100's `.hbm`, Vitis AI's `.xmodel`): the stand-in folder
# and module of the tool that packs them.
TOOLS: Dict[str, Tuple[str, str]] = {
    ".bin": ("hbdnn", "make_bin"),
    ".hbm": ("hbucp", "make_hbm"),
    ".xmodel": ("vart", "make_xmodel"),
}


def tool(suffix: str) -> ModuleType:
    """The stand-in's packing tool (a module of tests/standin/*/tools) for the format `suffix`."""
    folder, module = TOOLS[suffix]
    tools = str(STANDIN / folder / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    return importlib.import_module(module)


def packer(suffix: str) -> Callable[..., bytes]:
    """(model name, emulator model bytes, the image inputs it was compiled with or None) -> the format's file
    bytes, tensors described as the model has them, image inputs as the vendor's toolchain describes them."""
    t = tool(suffix)
    if suffix == ".xmodel":
        return lambda name, accm, images=None: t.pack_accm(name, accm)
    if suffix == ".bin":
        return lambda name, accm, images=None: t.pack([t.accm_record(name, accm, t.image_spec(images or {}), images)])
    return lambda name, accm, images=None: t.pack([t.accm_record(name, accm, t.image_spec(images or {}))])


# The emulator's int8 rules each backend's stand-in computes with (its model files are compiled with them).
INT8_RULES = {"bpu": "bpu", "vart": "dpu"}

# A backend's format; the BPU's depends on the runtime generation the driver was built for, which the
# test run names (ACCEL_TEST_MODEL_FORMAT=.hbm for S100).
DEFAULT_SUFFIXES = {"bpu": ".bin", "vart": ".xmodel"}


def suffix_for(backend: str) -> str:
    suffix = os.environ.get("ACCEL_TEST_MODEL_FORMAT", "") or DEFAULT_SUFFIXES.get(backend, "")
    if suffix not in TOOLS:
        raise SystemExit(f"ACCEL_TEST_DEVICE / ACCEL_TEST_MODEL_FORMAT: no stand-in toolchain for backend "
                         f"{backend!r} and format {suffix!r} (known: {', '.join(sorted(TOOLS))})")
    return suffix


def model_file(backend: str, onnx_path: Path, folder: Path) -> Path:
    """`onnx_path` compiled for the emulator and packed into `folder` as the backend's model file."""
    from accel import compiler

    suffix = suffix_for(backend)
    target = Path(folder) / (Path(onnx_path).stem + suffix)
    accm = compiler.compile_model(str(onnx_path), int8=INT8_RULES[backend])
    target.write_bytes(packer(suffix)(Path(onnx_path).stem, accm))
    return target


def install(backend: str) -> None:
    suffix = suffix_for(backend)
    packers: list = []  # made at the first load that needs one
    folder = Path(tempfile.mkdtemp(prefix=f"accel-{backend}-models-"))
    atexit.register(shutil.rmtree, folder, True)
    serial = itertools.count()
    original = accel.Device.load

    @functools.wraps(original)
    def load(self, path_or_bytes, input_shapes=None, extra_outputs=None, image_inputs=None, *, subgraph=None,
             source=None, dequantized=False, shapes=None, pad=False, fold_limit=None):
        # Another device's load, extra outputs (which the vendor's toolchain would compile in: the stand-in's
        # models have float32 tensors only), a subgraph of a file by name, a .bin's source, a float counterpart and
        # the options of ONNX compiles (fold_limit; shapes= and pad=, which a compiled file refuses, naming its
        # shapes: passed on with the packed file below) are the real load's.
        if (self.info.backend != backend or extra_outputs is not None or subgraph is not None or source is not None
                or dequantized or fold_limit is not None):
            return original(self, path_or_bytes, input_shapes, extra_outputs, image_inputs, subgraph=subgraph,
                            source=source, dequantized=dequantized, shapes=shapes, pad=pad, fold_limit=fold_limit)
        more = {"shapes": shapes, "pad": pad}
        is_path = isinstance(path_or_bytes, (str, os.PathLike))
        if is_path:
            path = Path(os.fspath(path_or_bytes))
            if not path.is_file():
                return original(self, path_or_bytes, input_shapes, None, image_inputs, **more)
            data, name = path.read_bytes(), path.stem
            is_onnx = path.suffix.lower() == ".onnx"
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            data, name = bytes(path_or_bytes), "model"
            is_onnx = data[:1] == b"\x08"
        else:
            return original(self, path_or_bytes, input_shapes, None, image_inputs, **more)
        images = None
        if data[:4] == ACCM_MAGIC and image_inputs is None:
            accm = data
        elif is_onnx and (shapes is not None or pad):
            return original(self, path_or_bytes, input_shapes, None, image_inputs, **more)
        elif is_onnx:
            # Image inputs compiled in as Horizon's toolchain does (the emulator's preprocessing), and described
            # as its image types.
            shapes = compile_cache.normalize_input_shapes(input_shapes)
            images = compile_cache.normalize_image_inputs(image_inputs)
            accm = compile_cache.compile_onnx(data, shapes, repr(name), None, INT8_RULES[backend], None, images)[0]
            input_shapes = image_inputs = None
        else:
            return original(self, path_or_bytes, input_shapes, None, image_inputs, **more)
        if not packers:
            packers.append(packer(suffix))
        packed = packers[0](name, accm, images)
        if not is_path:
            return original(self, packed, input_shapes, **more)
        # A folder per load: two tests' "model.onnx" must not share a file, even in threads.
        target = folder / str(next(serial)) / f"{name}{suffix}"
        target.parent.mkdir()
        target.write_bytes(packed)
        return original(self, str(target), input_shapes, **more)

    accel.Device.load = load
