"""The cache of ONNX models compiled for the emulator.

``Device.load("model.onnx")`` on the emulator compiles the model with ``accel.compiler``. The result is
cached under a SHA-256 of the ONNX bytes, the input shapes (sorted by name) and the compiler (its
format version and a fingerprint of its source), as ``<key>.entry`` in ``$ACCEL_CACHE_DIR``, else
``$XDG_CACHE_HOME/accel``, else ``~/.cache/accel``. When that folder cannot be written, the cache lives
in memory for the life of the process.

An entry is never trusted: it is read only if it is a regular file (a FIFO there would block the
read), and it records the key it was made for and a SHA-256 of its .accm bytes, both checked. An entry
swapped for another (even a valid model), truncated or corrupted is compiled again and rewritten.
Entries are written atomically (a temporary file renamed).

The folder holds at most ``$ACCEL_CACHE_SIZE`` bytes of entries (a number with an optional K, M or G suffix;
default 1G; 0 keeps nothing on disk): after each write, the entries used longest ago go first (a hit marks its
entry used: its modification time). ``info()`` and ``clear()`` (``accel cache info|clear``) report and empty it.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections import OrderedDict
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from ._forksafe import ForkSafeLock
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


def cache_dir() -> Path:
    """The folder of the on-disk cache (it may not exist yet)."""
    env = os.environ.get("ACCEL_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "accel"


DEFAULT_SIZE_LIMIT = 1 << 30
_SUFFIXES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def size_limit() -> int:
    """The most bytes of entries the folder keeps: ``$ACCEL_CACHE_SIZE`` (``512M``, ``2G``, ``0``), else 1 GiB.
    A value that is not a size raises InvalidArgumentError naming it."""
    text = os.environ.get("ACCEL_CACHE_SIZE", "").strip()
    if not text:
        return DEFAULT_SIZE_LIMIT
    unit = text[-1].upper() if text[-1].isalpha() else ""
    try:
        value = float(text[:-1] if unit else text)
        factor = _SUFFIXES[unit]
    except (ValueError, KeyError):
        value, factor = -1.0, 1
    if not value >= 0:
        raise InvalidArgumentError(f"ACCEL_CACHE_SIZE={text!r} is not a size in bytes (e.g. 512M, 2G or 0)")
    return int(value * factor)


def _entries() -> List[Tuple[float, int, Path]]:
    """(last used, bytes, path) of every entry in the folder, least recently used first."""
    rows: List[Tuple[float, int, Path]] = []
    try:
        paths = list(cache_dir().glob("*.entry"))
    except OSError:
        return rows
    for p in paths:
        try:
            st = p.stat()
        except OSError:
            continue  # removed meanwhile by another process
        if stat.S_ISREG(st.st_mode):
            rows.append((st.st_mtime, st.st_size, p))
    rows.sort(key=lambda r: r[0])
    return rows


def _evict(limit: int, keep: Optional[Path] = None) -> int:
    """Removes the least recently used entries until the rest fit in ``limit`` bytes, ``keep`` (the entry just
    written) last: only when it alone is over the limit. Returns how many were removed."""
    rows = _entries()
    total = sum(r[1] for r in rows)
    removed = 0
    for _, size, p in [r for r in rows if r[2] != keep] + [r for r in rows if r[2] == keep]:
        if total <= limit:
            break
        try:
            p.unlink()
        except OSError:
            continue
        total -= size
        removed += 1
    return removed


def info() -> Dict[str, object]:
    """The on-disk cache: its folder, entries, bytes and size limit."""
    rows = _entries()
    return {"folder": str(cache_dir()), "entries": len(rows), "bytes": sum(r[1] for r in rows),
            "limit_bytes": size_limit()}


def clear() -> int:
    """Removes every entry from the folder (and the memory cache); returns how many files were removed."""
    clear_memory_cache()
    return _evict(-1)


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
    from .dtypes import normalize_shape

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
              extra_outputs: ExtraOutputs = None, image_inputs: ImageInputs = None) -> str:
    """SHA-256 (hex) of the ONNX bytes, the sorted input shapes, the int8 rule set, the extra outputs and the image
    inputs asked for and the compiler's fingerprint."""
    shapes = sorted((k, list(v)) for k, v in (input_shapes or {}).items())
    h = hashlib.sha256(b"accel-compile-cache 1\0")
    h.update(_compiler_fingerprint().encode() + b"\0")
    h.update(f"int8={int8}\0".encode())
    if extra_outputs is not None:
        h.update(f"extra_outputs={json.dumps(extra_outputs)}\0".encode())
    if image_inputs is not None:
        # A value JSON cannot hold is the compiler's to refuse (frame_inputs.parse, naming it): keyed by its repr.
        h.update(f"image_inputs={json.dumps(image_inputs, sort_keys=True, default=repr)}\0".encode())
    h.update(json.dumps(shapes).encode() + b"\0")
    h.update(onnx_bytes)
    return h.hexdigest()


def _remember(key: str, data: bytes) -> None:
    with _lock:
        _memory[key] = data
        _memory.move_to_end(key)
        while len(_memory) > _MEMORY_LIMIT:
            _memory.popitem(last=False)


# An entry: this magic line, the key it was made for and the SHA-256 of the .accm bytes that follow
# (64 hex digits each, one line each), then those bytes.
_ENTRY_MAGIC = b"accel compile cache entry 1\n"
_ENTRY_HEAD = len(_ENTRY_MAGIC) + 2 * 65


def _entry_path(key: str) -> Path:
    return cache_dir() / f"{key}.entry"


def _entry(key: str, data: bytes) -> bytes:
    return b"".join((_ENTRY_MAGIC, key.encode(), b"\n", hashlib.sha256(data).hexdigest().encode(), b"\n", data))


def _read_regular_file(path: Path) -> Optional[bytes]:
    """The bytes of `path` if it is a regular file (opened without blocking, so a FIFO or a device
    node is seen for what it is before anything is read), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_disk(key: str) -> Optional[bytes]:
    """The .accm bytes of the entry for `key`, or None when there is none or it is not what it claims."""
    if _disk_disabled:
        return None
    raw = _read_regular_file(_entry_path(key))
    if raw is None or len(raw) < _ENTRY_HEAD or not raw.startswith(_ENTRY_MAGIC):
        return None
    head = raw[len(_ENTRY_MAGIC):_ENTRY_HEAD].split(b"\n")
    data = raw[_ENTRY_HEAD:]
    if head[0] != key.encode() or head[1] != hashlib.sha256(data).hexdigest().encode():
        return None  # made for another key, or damaged: compiled again, and overwritten
    try:
        os.utime(_entry_path(key))  # used now: the last to be evicted
    except OSError:
        pass
    return data


def _write_disk(key: str, data: bytes) -> None:
    global _disk_disabled
    if _disk_disabled:
        return
    folder = cache_dir()
    limit = size_limit()
    if limit == 0:
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_entry(key, data))
            os.replace(tmp, _entry_path(key))
            _evict(limit, keep=_entry_path(key))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        # Not writable (read-only home, full disk): keep this process's entries in memory only.
        if not os.environ.get("ACCEL_CACHE_DIR"):
            _disk_disabled = True


def invalidate(key: str) -> None:
    """Drops one entry from memory and disk (a cached file the device rejected)."""
    with _lock:
        _memory.pop(key, None)
    try:
        _entry_path(key).unlink()
    except OSError:
        pass


def compile_onnx(onnx_bytes: bytes, input_shapes: Optional[Mapping[str, Tuple[int, ...]]],
                 what: str = "model", path: Optional[str] = None, int8: str = "ort",
                 extra_outputs: ExtraOutputs = None, image_inputs: ImageInputs = None) -> Tuple[bytes, str, bool]:
    """The .accm bytes of an ONNX model, compiled or from the cache, its quantized ops with the int8 rule
    set `int8`, with the intermediate tensors `extra_outputs` (normalize_extra_outputs) as outputs after its own and
    the camera frames `image_inputs` (normalize_image_inputs) in place of the inputs they name.

    ``path``, when the model came from a file, is what the compiler reads (so that weights stored as
    ONNX external data next to it are found); the cache key covers ``onnx_bytes`` only.
    Returns ``(accm bytes, cache key, True if it came from the cache)``. A model the compiler rejects
    raises ModelFormatError naming ``what`` (the compiler's error is its ``__cause__``); an input_shapes
    error or an extra output the model cannot give raises InvalidArgumentError, an op or dtype the emulator lacks
    UnsupportedError.
    """
    key = cache_key(onnx_bytes, input_shapes, int8, extra_outputs, image_inputs)
    with _lock:
        hit = _memory.get(key)
    if hit is not None:
        return hit, key, True
    data = _read_disk(key)
    if data is not None:
        _remember(key, data)
        return data, key, True

    from . import compiler

    shapes = {k: tuple(v) for k, v in input_shapes.items()} if input_shapes else None
    try:
        data = compiler.compile_model(path if path is not None else onnx_bytes, shapes, int8,
                                      extra_outputs=extra_outputs, image_inputs=image_inputs)
    except compiler.CompileError as e:
        text = str(e)
        # A bad or missing input shape, an extra output the model has not, an image input it cannot take: the
        # caller's to fix.
        if "input_shapes" in text or isinstance(e, (compiler.ExtraOutputError, compiler.FrameInputError)):
            raise InvalidArgumentError(f"cannot compile {what}: {text}") from e
        if isinstance(e, compiler.UnsupportedOpsError) or text.startswith("unsupported") or "does not support" in text:
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
    _write_disk(key, data)
    return data, key, False
