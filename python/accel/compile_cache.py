"""The cache of ONNX models compiled for the emulator.

``Device.load("model.onnx")`` on the emulator compiles the model with ``accel.compiler``. The result is
cached under a SHA-256 of the ONNX bytes, the input shapes (sorted by name) and the compiler (its
format version and a fingerprint of its source), in memory (the models used last) and as ``<key>.entry`` in a
folder of this user's alone (accel._cache_folder: where it is, ``$ACCEL_CACHE_DIR`` and ``$ACCEL_CACHE_SIZE``, and
what makes an entry trusted). When that folder cannot be written, or is not to be trusted, the cache lives in memory
for the life of the process.

An entry records the key it was made for and a SHA-256 of its .accm bytes, both checked: an entry swapped for
another (even a valid model), truncated or corrupted is compiled again and rewritten.

The folder holds at most ``$ACCEL_CACHE_SIZE`` bytes of entries (a number with an optional K, M or G suffix;
default 1G; 0 keeps nothing on disk): after each write, the entries used longest ago go first (a hit marks its
entry used: its modification time). ``info()`` and ``clear()`` (``accel cache info|clear``) report and empty it.
"""
from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple, Union

from . import _cache_folder
from ._cache_folder import DEFAULT_SIZE_LIMIT as DEFAULT_SIZE_LIMIT  # re-exported: the limit when none is set
from ._cache_folder import cache_dir, size_limit
from ._forksafe import ForkSafeLock
from ._lazy_import import import_or_undo
from .errors import InvalidArgumentError, ModelFormatError, OutOfMemoryError, UnsupportedError

__all__ = ["INT8_RULES", "cache_dir", "clear", "clear_memory_cache", "compile_onnx", "info", "normalize_extra_outputs",
           "normalize_image_inputs",
           "normalize_input_shapes", "size_limit"]

#: The emulator's int8 rule sets (its URI's ``int8=``, the compiler's ``int8``): accel.compiler.INT8_RULES, spelled
#: out so that the command line and accel.compare need not load the compiler (and onnx) to know them.
INT8_RULES = ("ort", "dpu", "bpu")

#: Extra outputs as the compiler takes them: None, "all", or tensor names in order.
ExtraOutputs = Union[None, str, Tuple[str, ...]]
ImageInputs = Optional[Dict[str, Dict[str, Any]]]

_MEMORY_LIMIT = 32
_memory: OrderedDict[str, bytes] = OrderedDict()
_lock = ForkSafeLock()
_fingerprint: Optional[str] = None
_disk_disabled = False


def info() -> Dict[str, object]:
    """The on-disk cache: its folder, entries, bytes and size limit, how many files in it accel did not write (left
    alone), and why the folder is not used (None when it is)."""
    return _cache_folder.info(_cache_folder.settings())


def clear() -> int:
    """Removes every entry accel wrote from the folder (and the memory cache), with the temporary files of writes a
    killed process left; returns how many files were removed. Files accel did not write are left alone."""
    s = _cache_folder.settings()
    clear_memory_cache()
    return _cache_folder.clear(s)


def clear_memory_cache() -> None:
    """Forgets the compiled models kept in memory (the on-disk cache is left alone)."""
    with _lock:
        _memory.clear()


def normalize_image_inputs(image_inputs: object) -> ImageInputs:
    """``Device.load``'s ``image_inputs`` as the compiler and the cache key take it: None, or a dict of input name
    to a dict of options ({"format": "nv12", ...}; a format name alone stands for {"format": name}). The options
    themselves are the compiler's to check (accel.compiler.image_inputs)."""
    if image_inputs is None:
        return None
    if not isinstance(image_inputs, Mapping):
        raise TypeError(f"image_inputs must be a dict mapping input names to dicts such as {{'format': 'nv12'}}, "
                        f"not {type(image_inputs).__name__}")
    out: Dict[str, Dict[str, Any]] = {}
    for name, options in image_inputs.items():
        if not isinstance(name, str):
            raise TypeError(f"image_inputs: names must be str, not {type(name).__name__} ({name!r})")
        if isinstance(options, str):
            options = {"format": options}
        if not isinstance(options, Mapping):
            raise TypeError(f"image_inputs[{name!r}] must be a dict such as {{'format': 'nv12'}}, "
                            f"not {type(options).__name__}")
        out[name] = {str(k): _plain(v) for k, v in options.items()}
    return out or None


def _plain(value: Any) -> Any:
    """NumPy arrays and scalars as lists and Python numbers (for the cache key's JSON)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def normalize_extra_outputs(extra_outputs: object) -> ExtraOutputs:
    """``Device.load``'s ``extra_outputs`` (None, ``"all"`` or an iterable of tensor names) as the compiler
    takes it; TypeError for anything else, InvalidArgumentError for an empty list or a string other than "all"
    (a single name is given as a list of one)."""
    if extra_outputs is None:
        return None
    if isinstance(extra_outputs, str):
        if extra_outputs != "all":
            raise InvalidArgumentError(f"extra_outputs must be 'all' or a list of tensor names, not the string "
                                       f"{extra_outputs!r} (for one tensor: [{extra_outputs!r}])")
        return "all"
    if isinstance(extra_outputs, (bytes, bytearray)) or not hasattr(extra_outputs, "__iter__"):
        raise TypeError(f"extra_outputs must be 'all' or a list of tensor names, not {type(extra_outputs).__name__}")
    names = tuple(extra_outputs)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"extra_outputs: {name!r} is not a tensor name (a str)")
    if not names:
        raise InvalidArgumentError("extra_outputs is empty: give tensor names, 'all', or None")
    return names


def normalize_input_shapes(input_shapes: object) -> Optional[Dict[str, Tuple[int, ...]]]:
    """``input_shapes`` as ``{name: tuple of ints}``; TypeError/ValueError for anything else."""
    if input_shapes is None:
        return None
    if not isinstance(input_shapes, Mapping):
        raise TypeError("input_shapes must be a dict mapping input names to shapes, "
                        f"not {type(input_shapes).__name__}")
    from .runtime.dtypes import normalize_shape

    out: Dict[str, Tuple[int, ...]] = {}
    for name, shape in input_shapes.items():
        if not isinstance(name, str):
            raise TypeError(f"input_shapes: names must be str, not {type(name).__name__} ({name!r})")
        try:
            dims = normalize_shape(shape)
        except TypeError as e:
            raise TypeError(f"input_shapes[{name!r}]: {e}") from None
        except ValueError as e:
            raise InvalidArgumentError(f"input_shapes[{name!r}]: {e}") from None
        out[name] = dims
    return out


def _compiler_fingerprint() -> str:
    """The compiler's format version plus a hash of its source files: a changed compiler never reuses
    an entry made by another."""
    global _fingerprint
    if _fingerprint is None:
        with import_or_undo():
            from . import compiler
            from .compiler import accm

        h = hashlib.sha256(f"accm {accm.VERSION_MAJOR}.{accm.VERSION_MINOR}\0".encode())
        folder = Path(compiler.__file__).resolve().parent
        # The compiler's own files, and the colour formula its image inputs are built from.
        for p in sorted(folder.rglob("*.py")) + [folder.parent / "image" / "formula.py"]:
            h.update(p.relative_to(folder.parent).as_posix().encode() + b"\0")
            try:
                h.update(p.read_bytes())
            except OSError:
                pass
            h.update(b"\0")
        _fingerprint = h.hexdigest()
    return _fingerprint


def cache_key(onnx_bytes: bytes, input_shapes: Optional[Mapping[str, Tuple[int, ...]]], int8: str = "ort",
              extra_outputs: ExtraOutputs = None, image_inputs: ImageInputs = None, dequantized: bool = False) -> str:
    """SHA-256 (hex) of the ONNX bytes, the sorted input shapes, the int8 rule set, the extra outputs and the image
    inputs asked for, whether the float counterpart was, and the compiler's fingerprint."""
    shapes = sorted((k, list(v)) for k, v in (input_shapes or {}).items())
    h = hashlib.sha256(b"accel-compile-cache 1\0")
    h.update(_compiler_fingerprint().encode() + b"\0")
    h.update(f"int8={int8}\0".encode())
    if extra_outputs is not None:
        h.update(f"extra_outputs={json.dumps(extra_outputs)}\0".encode())
    if image_inputs is not None:
        # A value JSON cannot hold is the compiler's to refuse (frame_inputs.parse, naming it): keyed by its repr.
        h.update(f"image_inputs={json.dumps(image_inputs, sort_keys=True, default=repr)}\0".encode())
    if dequantized:
        h.update(b"dequantized\0")
    h.update(json.dumps(shapes).encode() + b"\0")
    h.update(onnx_bytes)
    return h.hexdigest()


def _remember(key: str, data: bytes) -> None:
    with _lock:
        _memory[key] = data
        _memory.move_to_end(key)
        while len(_memory) > _MEMORY_LIMIT:
            _memory.popitem(last=False)


def _read_disk(key: str, s: Optional[_cache_folder.Settings] = None) -> Optional[bytes]:
    """The .accm bytes of the on-disk entry for `key`, or None when there is none or it is not to be trusted."""
    return None if _disk_disabled else _cache_folder.read_entry(s or _cache_folder.settings(), key)


def _write_disk(key: str, data: bytes, s: _cache_folder.Settings, label: str = "") -> None:
    global _disk_disabled
    if _disk_disabled:
        return
    try:
        _cache_folder.write_entry(s, key, data, label)
    except OSError:
        # Not writable (read-only home, full disk): keep this process's entries in memory only.
        if not s.explicit:
            _disk_disabled = True


def invalidate(key: str) -> None:
    """Drops one entry from memory and disk (a cached file the device rejected)."""
    with _lock:
        _memory.pop(key, None)
    _cache_folder.remove_entry(_cache_folder.settings(), key)


def compile_onnx(onnx_bytes: bytes, input_shapes: Optional[Mapping[str, Tuple[int, ...]]],
                 what: str = "model", path: Optional[str] = None, int8: str = "ort",
                 extra_outputs: ExtraOutputs = None, image_inputs: ImageInputs = None,
                 dequantized: bool = False, fold_limit: Optional[int] = None) -> Tuple[bytes, str, bool]:
    """The .accm bytes of an ONNX model, compiled or from the cache, its quantized ops with the int8 rule
    set `int8`, with the intermediate tensors `extra_outputs` (normalize_extra_outputs) as outputs after its own and
    the camera frames `image_inputs` (normalize_image_inputs) in place of the inputs they name; ``dequantized``: the
    model's float counterpart instead (accel.compiler.dequantize; a model with none raises UnsupportedError).
    ``fold_limit`` bounds the bytes one folded node may compute at compile time (None: the compiler's default,
    accel.compiler.FOLD_LIMIT_BYTES); it decides only whether a model compiles, so the key does not cover it.

    ``path``, when the model came from a file, is what the compiler reads (so that weights stored as
    ONNX external data next to it are found); the cache key covers ``onnx_bytes`` only.
    Returns ``(accm bytes, cache key, True if it came from the cache)``. A model the compiler rejects
    raises ModelFormatError naming ``what`` (the compiler's error is its ``__cause__``); an input_shapes
    error or an extra output the model cannot give raises InvalidArgumentError, an op or dtype the emulator lacks
    UnsupportedError.
    """
    settings = _cache_folder.settings()  # a bad ACCEL_CACHE_* fails every load alike, before any work
    key = cache_key(onnx_bytes, input_shapes, int8, extra_outputs, image_inputs, dequantized)
    with _lock:
        hit = _memory.get(key)
    if hit is not None:
        return hit, key, True
    data = _read_disk(key, settings)
    if data is not None:
        _remember(key, data)
        return data, key, True

    with import_or_undo():
        from . import compiler

    shapes = {k: tuple(v) for k, v in input_shapes.items()} if input_shapes else None
    try:
        limit = {} if fold_limit is None else {"fold_limit": fold_limit}
        data = compiler.compile_model(path if path is not None else onnx_bytes, shapes, int8,
                                      extra_outputs=extra_outputs, image_inputs=image_inputs,
                                      dequantized=dequantized, **limit)
    except compiler.CompileError as e:
        text = str(e)
        # A bad or missing input shape, an extra output the model has not, an image input it cannot take: the
        # caller's to fix.
        if "input_shapes" in text or isinstance(e, (compiler.ExtraOutputError, compiler.FrameInputError)):
            raise InvalidArgumentError(f"cannot compile {what}: {text}") from e
        if (isinstance(e, (compiler.UnsupportedOpsError, compiler.NoFloatCounterpartError,
                           compiler.RunTimeConditionError))
                or text.startswith("unsupported") or "does not support" in text):
            raise UnsupportedError(f"cannot compile {what} for the emulator: {text}") from e
        raise ModelFormatError(f"cannot compile {what}: {text}") from e
    except MemoryError as e:
        raise OutOfMemoryError(f"cannot compile {what}: out of host memory ({e})") from e
    except (TypeError, OSError):
        raise
    except Exception as e:  # onnx's DecodeError, ValidationError and the like: not a usable ONNX model
        raise ModelFormatError(f"cannot compile {what}: not a valid ONNX model "
                               f"({type(e).__name__}: {e})") from e
    _remember(key, data)
    _write_disk(key, data, settings, _label(what, path, shapes, int8, extra_outputs, image_inputs, dequantized))
    return data, key, False


def _label(what: str, path: Optional[str], shapes: Optional[Mapping[str, Tuple[int, ...]]], int8: str,
           extra_outputs: ExtraOutputs, image_inputs: ImageInputs, dequantized: bool) -> str:
    """What an entry was compiled from, for ``accel cache info``: the model (its file's name) and the options."""
    options = [f"{k}={'x'.join(map(str, v))}" for k, v in sorted((shapes or {}).items())]
    options.append(f"int8={int8}")
    if extra_outputs is not None:
        options.append("extra outputs" if extra_outputs != "all" else "all tensors as outputs")
    if image_inputs:
        options.append("camera frames")
    if dequantized:
        options.append("float counterpart")
    return f"{Path(path).name if path else what} ({', '.join(options)})"
