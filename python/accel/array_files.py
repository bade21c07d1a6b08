"""Reading ``.npy`` and ``.npz`` files that may come from anyone (a run saved on a board, an input given to
``accel run``) with bounded memory: every size a file declares (its zip entries' and its ``.npy`` headers') is
checked against a limit and against the bytes the file holds before anything is allocated, compressed
entries are inflated a chunk at a time up to their declared size, and every flaw is a
:class:`~accel.errors.ModelFormatError` naming the file, the entry and the limit.

A ``.npz`` is read entry by entry by its exact name, never through ``numpy.load``, whose ``NpzFile`` takes
key ``x.npy`` for the entry of key ``x`` when the file holds both.
"""
from __future__ import annotations

import ast
import io
import struct
import zipfile
import zlib
from pathlib import Path
from typing import IO, Dict, Iterable, List, Tuple, Union

import numpy as np

from .errors import ModelFormatError

__all__ = ["ARRAY_KINDS", "MAX_ARRAY_BYTES", "Npz", "file_kind", "read_npy", "write_npz"]

#: The most bytes of array data read from one file (all its arrays together) unless the caller says otherwise.
MAX_ARRAY_BYTES = 4 << 30
#: The dtype kinds of tensors: booleans, integers and floats (no objects, strings or records).
ARRAY_KINDS = "biuf"
_MAX_HEADER = 1 << 16  # numpy writes headers of a few hundred bytes
_CHUNK = 1 << 20
_NPY_MAGIC = b"\x93NUMPY"
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")  # an entry first, or the end record of an empty archive
# zipfile inflates DEFLATED entries a bounded chunk at a time; it hands BZIP2 and LZMA ones whole chunks of
# whatever they inflate to, so those are refused (numpy never writes them).
_METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}

PathLike = Union[str, Path]


def size_words(n: int) -> str:
    """``n`` bytes in words: ``4294967296 bytes (4.0 GiB)``."""
    for unit, shift in (("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n} bytes ({n / (1 << shift):.1f} {unit})"
    return f"{n} bytes"


def file_kind(path: PathLike) -> str:
    """``"npy"``, ``"npz"`` or ``"other"``, by the file's first bytes (not its name)."""
    with open(path, "rb") as f:
        head = f.read(len(_NPY_MAGIC))
    if head == _NPY_MAGIC:
        return "npy"
    return "npz" if head[:4] in _ZIP_MAGICS else "other"


def read_npy(path: PathLike, what: str, max_bytes: int = MAX_ARRAY_BYTES, kinds: str = ARRAY_KINDS) -> np.ndarray:
    """The array of the ``.npy`` file ``path``: ModelFormatError naming ``what`` (``"--input 'x.npy'"``) when it
    is not one, declares more data than it holds or than ``max_bytes``, or holds a dtype not of ``kinds``."""
    with open(path, "rb") as f:
        size = f.seek(0, io.SEEK_END)
        f.seek(0)
        return _read_array(f, size, what, max_bytes, kinds)


class Npz:
    """An open ``.npz`` (a zip of ``.npy`` entries), read entry by exact name with bounded memory (see the
    module's docstring). ``what`` names the file in errors (``"run record 'run.npz'"``); a context manager."""

    def __init__(self, path: PathLike, what: str) -> None:
        self.what = what
        kind = file_kind(path)
        if kind == "npy":
            raise ModelFormatError(f"{what} is a .npy array, not a .npz file of named arrays")
        if kind != "npz":
            raise ModelFormatError(f"{what} is not a .npz file (a zip of .npy arrays)")
        try:
            self._zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError,
                struct.error) as e:
            raise ModelFormatError(f"{what} is not a readable .npz file: {e}") from None
        self._infos: Dict[str, zipfile.ZipInfo] = {}
        for info in self._zip.infolist():
            if info.filename in self._infos:
                self.close()
                raise ModelFormatError(f"{what} holds entry {info.filename!r} twice")
            self._infos[info.filename] = info

    @property
    def names(self) -> List[str]:
        """The entries' exact names, in the archive's order."""
        return list(self._infos)

    def __contains__(self, name: object) -> bool:
        return name in self._infos

    @property
    def comment(self) -> bytes:
        """The archive's comment (accel marks the files it writes there)."""
        return self._zip.comment

    def declared_size(self, name: str) -> int:
        """The bytes entry ``name`` says it inflates to (to check a total against a limit before reading)."""
        return self._info(name).file_size

    def read(self, name: str, max_bytes: int = MAX_ARRAY_BYTES, kinds: str = ARRAY_KINDS) -> np.ndarray:
        """The array of entry ``name``: ModelFormatError naming the file and the entry when it is not a ``.npy``
        of ``kinds``, is damaged, or declares more than it holds or than ``max_bytes``."""
        info = self._info(name)
        where = f"{self.what}, entry {name!r}"
        if info.compress_type not in _METHODS:
            raise ModelFormatError(f"{where}: compression method {info.compress_type} is not one accel reads "
                                   f"({', '.join(_METHODS.values())})")
        if info.flag_bits & 0x1:
            raise ModelFormatError(f"{where}: encrypted")
        if info.file_size > max_bytes + _MAX_HEADER:
            raise ModelFormatError(f"{where}: declares {size_words(info.file_size)}, more than the limit of "
                                   f"{size_words(max_bytes)}")
        try:
            with self._zip.open(info) as f:
                return _read_array(f, info.file_size, where, max_bytes, kinds)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, NotImplementedError,
                struct.error) as e:
            raise ModelFormatError(f"{where}: damaged: {e}") from None

    def _info(self, name: str) -> zipfile.ZipInfo:
        info = self._infos.get(name)
        if info is None:
            raise ModelFormatError(f"{self.what} has no entry {name!r}")
        return info

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> Npz:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_npz(path: PathLike, arrays: Iterable[Tuple[str, np.ndarray]], comment: bytes = b"") -> None:
    """Writes each ``(entry name, array)`` as a ``.npy`` entry of a ``.npz`` (numpy.load reads it), under the
    name as given (the caller makes the names), with the archive comment ``comment``. Uncompressed: a run's
    tensors rarely shrink, and a reader maps stored entries without inflating them."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, array in arrays:
            with z.open(name, "w", force_zip64=True) as entry:
                np.lib.format.write_array(entry, np.asarray(array), allow_pickle=False)
        z.comment = comment


def _read_array(f: IO[bytes], size: int, where: str, max_bytes: int, kinds: str) -> np.ndarray:
    """The ``.npy`` array in ``f`` (``size`` bytes long), its header checked before its data is allocated."""
    dtype, shape, fortran, start = _read_header(f, where)
    count = 1
    for d in shape:
        count *= d
    nbytes = count * dtype.itemsize
    if (dtype.kind not in kinds or dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None
            or dtype.itemsize == 0):
        raise ModelFormatError(f"{where}: holds dtype {dtype.str!r}; expected a plain array of "
                               f"{_kind_words(kinds)}")
    if nbytes > max_bytes:
        raise ModelFormatError(f"{where}: its .npy header declares shape {shape} of {dtype} "
                               f"({size_words(nbytes)}), more than the limit of {size_words(max_bytes)}")
    if start + nbytes != size:
        raise ModelFormatError(f"{where}: its .npy header declares shape {shape} of {dtype} "
                               f"({size_words(nbytes)} of data), but it holds {size_words(max(size - start, 0))}")
    data = np.empty(nbytes, np.uint8)
    done = 0
    while done < nbytes:  # a chunk at a time: an entry inflates no further than it is read
        chunk = f.read(min(_CHUNK, nbytes - done))
        if not chunk:
            raise ModelFormatError(f"{where}: ends after {done} of its {nbytes} bytes of data")
        data[done:done + len(chunk)] = np.frombuffer(chunk, np.uint8)
        done += len(chunk)
    if f.read(1):
        raise ModelFormatError(f"{where}: holds more than its declared {size} bytes")
    array = data.view(dtype)
    return array.reshape(shape[::-1]).transpose() if fortran else array.reshape(shape)


def _read_header(f: IO[bytes], where: str) -> Tuple[np.dtype, Tuple[int, ...], bool, int]:
    """``(dtype, shape, fortran_order, data offset)`` of the ``.npy`` header at the start of ``f``, its length
    bounded and its fields type-checked (numpy's own reader trusts them)."""
    head = f.read(len(_NPY_MAGIC) + 2)
    if len(head) < len(_NPY_MAGIC) + 2 or head[:len(_NPY_MAGIC)] != _NPY_MAGIC:
        raise ModelFormatError(f"{where}: not a NumPy .npy array")
    major = head[-2]
    if major not in (1, 2, 3):
        raise ModelFormatError(f"{where}: .npy format version {major}.{head[-1]} is not one accel reads (1 to 3)")
    length_format = "<H" if major == 1 else "<I"
    raw = f.read(struct.calcsize(length_format))
    if len(raw) != struct.calcsize(length_format):
        raise ModelFormatError(f"{where}: its .npy header is cut short")
    (length,) = struct.unpack(length_format, raw)
    if length > _MAX_HEADER:
        raise ModelFormatError(f"{where}: its .npy header declares {size_words(length)}, more than the limit of "
                               f"{size_words(_MAX_HEADER)}")
    text = f.read(length)
    if len(text) != length:
        raise ModelFormatError(f"{where}: its .npy header is cut short")
    try:
        header = ast.literal_eval(text.decode("utf-8" if major == 3 else "latin1"))
    except (ValueError, TypeError, SyntaxError, UnicodeDecodeError, MemoryError, RecursionError) as e:
        raise ModelFormatError(f"{where}: its .npy header is not readable: {type(e).__name__}") from None
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise ModelFormatError(f"{where}: its .npy header is not numpy's (descr, fortran_order, shape)")
    shape, fortran, descr = header["shape"], header["fortran_order"], header["descr"]
    if (not isinstance(shape, tuple) or not all(type(d) is int and d >= 0 for d in shape)
            or not isinstance(fortran, bool) or not isinstance(descr, str)):
        raise ModelFormatError(f"{where}: its .npy header has a bad shape, order or dtype: {header!r:.200}")
    try:
        dtype = np.dtype(descr)
    except (TypeError, ValueError, OverflowError) as e:
        raise ModelFormatError(f"{where}: its .npy header's dtype {descr!r:.60} is not readable: {e}") from None
    return dtype, shape, fortran, len(_NPY_MAGIC) + 2 + len(raw) + length


def _kind_words(kinds: str) -> str:
    words = {"b": "booleans", "i": "integers", "u": "unsigned integers", "f": "floats", "U": "text"}
    return ", ".join(words[k] for k in kinds)
