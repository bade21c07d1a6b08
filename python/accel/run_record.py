"""A run saved to a file: the inputs a model was given, the outputs it gave (its own and any extra, intermediate
ones), their quantization, and which model and device, so that another run can be held against it later
(``accel run --save``, ``accel compare``; e.g. a run on a board, compared on a PC with the emulator's).

The file is a ``.npz`` (``numpy.load`` reads it, no pickles): one ``.npy`` entry per tensor, and one more,
``__accel_run__.npy``, a JSON string (format 2) saying which tensors are inputs and which outputs (in the
model's order), the entry holding each, and each quantized tensor's parameters. An entry is named after its
tensor (:func:`entry_name`), escaped so that no two names meet under ``numpy.load``'s keys: ``%``, NUL and
``\\`` as ``%25``, ``%00``, ``%5C``, the dot of a name ending in ``.npy`` as ``%2E`` (numpy takes key ``x.npy``
for the entry of ``x`` when there is one), and a tensor named ``__accel_run__`` as ``%5F_accel_run__``.
Format 1 records (accel 0.x before format 2: every entry ``NAME.npy``) load too, each entry by its exact name.

A plain ``.npz`` of arrays (``accel run --output``, ``numpy.savez``) loads too: every array an output, none an
input; its names are numpy's keys (the entry names less ``.npy``), unescaped where accel wrote it.

Reading is bounded (accel.array_files): sizes are checked against :data:`MAX_RECORD_BYTES` (``load``'s
``max_bytes``) and against the bytes the file holds before anything is allocated, and the JSON against a size,
a depth and its schema; every flaw is a ModelFormatError naming the file, the entry and the limit.
"""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

from . import array_files
from .errors import ModelFormatError
from .runtime.tensor_info import Quantization

__all__ = ["MAX_RECORD_BYTES", "METADATA_KEY", "RunRecord", "entry_name", "load", "save", "write_npz"]

#: The name of the array holding the record's JSON description (its entry: ``__accel_run__.npy``).
METADATA_KEY = "__accel_run__"
#: The most bytes of arrays :func:`load` reads from one file unless told otherwise.
MAX_RECORD_BYTES = array_files.MAX_ARRAY_BYTES
_FORMAT = 2
_ENTRY = f"{METADATA_KEY}.npy"
# Marks a .npz whose entry names accel escaped (the archive comment, which numpy.load ignores).
_ESCAPED_MARK = b"accel npz: entry names escaped (format 2)"
_MAX_JSON_BYTES = 64 << 20
_MAX_JSON_DEPTH = 8  # the record's JSON nests 4 deep: quant -> tensor -> scales
_MAX_INT_DIGITS = 20
_ESCAPED = {"%": "%25", "\0": "%00", "\\": "%5C"}
_ESCAPE = re.compile("[%\0\\\\]")
_UNESCAPE = re.compile("%([0-9A-F]{2})")
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


@dataclass
class RunRecord:
    """What one run of a model took and gave.

    Attributes:
        inputs: the inputs by name, in the model's order (empty for a plain ``.npz``).
        outputs: the outputs by name, in the model's order (its own outputs, then extra ones).
        quant: the quantization of each quantized tensor (inputs and outputs) by name.
        model: the model file's name, as given to ``accel run`` ("" if unknown).
        device: the device's URI and name, e.g. ``"bpu:0 (...)"`` ("" if unknown).
    """

    inputs: Dict[str, np.ndarray] = field(default_factory=dict)
    outputs: Dict[str, np.ndarray] = field(default_factory=dict)
    quant: Dict[str, Quantization] = field(default_factory=dict)
    model: str = ""
    device: str = ""


def entry_name(name: str) -> str:
    """The ``.npz`` entry of tensor ``name`` (see the module's docstring): ``name + ".npy"``, escaped so that
    no two tensor names give one numpy.load key. ValueError for a name that is not valid Unicode."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"tensor name {name!r} is not valid Unicode: it cannot name a .npz entry") from None
    escaped = _ESCAPE.sub(lambda m: _ESCAPED[m.group()], name)
    if escaped.endswith(".npy"):
        escaped = escaped[:-4] + "%2Enpy"
    if escaped == METADATA_KEY:
        escaped = "%5F" + escaped[1:]
    return escaped + ".npy"


def write_npz(path: Union[str, Path], arrays: Mapping[str, np.ndarray]) -> None:
    """The arrays by name in a ``.npz`` file (np.load reads it), whatever the names: each under
    :func:`entry_name` (``np.savez(f, **arrays)`` would take an output named ``file`` or ``allow_pickle`` as
    its own argument, and numpy.load would read ``x.npy`` as ``x``). Written to ``path`` as given (np.savez
    would add ``.npz`` to another suffix)."""
    array_files.write_npz(path, ((entry_name(n), a) for n, a in arrays.items()), _ESCAPED_MARK)


def save(path: Union[str, Path], record: RunRecord) -> None:
    """Writes ``record`` to ``path`` (a ``.npz``; see the module's docstring)."""
    clash = set(record.inputs) & set(record.outputs)
    if clash:
        raise ValueError(f"tensor names {sorted(clash)} are both inputs and outputs")
    arrays: Dict[str, np.ndarray] = {**record.inputs, **record.outputs}
    entries = {name: entry_name(name) for name in arrays}
    meta = {"format": _FORMAT, "model": record.model, "device": record.device,
            "inputs": list(record.inputs), "outputs": list(record.outputs), "entries": entries,
            "quant": {name: _quant_json(q) for name, q in record.quant.items()}}
    written = [(_ENTRY, np.array(json.dumps(meta))), *((entries[n], a) for n, a in arrays.items())]
    array_files.write_npz(path, written, _ESCAPED_MARK)


def load(path: Union[str, Path], max_bytes: int = MAX_RECORD_BYTES) -> RunRecord:
    """The record in ``path``: one written by :func:`save` (format 1 or 2), or a plain ``.npz`` of outputs.

    Raises:
        ModelFormatError: (a ValueError) a file that is neither, a damaged one, one whose arrays declare more
            than ``max_bytes`` in all, or whose JSON is not a record's; the message names the file and entry.
        FileNotFoundError, and the other OSErrors of reading the file.
    """
    what = f"run record {str(path)!r}"
    with array_files.Npz(path, what) as z:
        if _ENTRY in z:
            meta = _read_meta(z, what)
            inputs, outputs = _record_entries(meta, z, what)
        else:
            meta, inputs, outputs = {}, [], _plain_entries(z, what)
        _check_total(z, [e for _, e in inputs + outputs], what, max_bytes)
        read = {name: z.read(entry, max_bytes) for name, entry in inputs + outputs}
    return RunRecord(inputs={n: read[n] for n, _ in inputs}, outputs={n: read[n] for n, _ in outputs},
                     quant=meta.get("quant", {}), model=meta.get("model", ""), device=meta.get("device", ""))


Entries = List[Tuple[str, str]]  # (tensor name, entry name)


def _plain_entries(z: array_files.Npz, what: str) -> Entries:
    """A plain .npz's arrays, all outputs: named as numpy.load keys them, unescaped if accel wrote it."""
    escaped = z.comment == _ESCAPED_MARK
    found: Entries = []
    for entry in z.names:
        if not entry.endswith(".npy"):
            raise ModelFormatError(f"{what} holds entry {entry!r}, not a .npy array")
        name = entry[:-4]
        if escaped:
            name = _UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), name)
            if entry_name(name) != entry:
                raise ModelFormatError(f"{what}: entry {entry!r} is not a name accel escaped")
        found.append((name, entry))
    return found


def _check_total(z: array_files.Npz, entries: List[str], what: str, max_bytes: int) -> None:
    """Refuses a file whose entries declare more than ``max_bytes`` together, before any is read."""
    sizes = {e: z.declared_size(e) for e in entries}
    total = sum(sizes.values())
    if total <= max_bytes:
        return
    largest = max(sizes, key=sizes.__getitem__)
    limit = f"more than the limit of {array_files.size_words(max_bytes)}"
    if len(sizes) == 1:
        raise ModelFormatError(f"{what}, entry {largest!r}: declares {array_files.size_words(total)}, {limit}")
    raise ModelFormatError(f"{what}: its {len(sizes)} arrays declare {array_files.size_words(total)} in all (entry "
                           f"{largest!r}: {array_files.size_words(sizes[largest])}), {limit}")


def _read_meta(z: array_files.Npz, what: str) -> Dict[str, Any]:
    """The record's JSON description, read and checked: its size, its depth, then its schema."""
    where = f"{what}, entry {_ENTRY!r}"
    text_array = z.read(_ENTRY, _MAX_JSON_BYTES, kinds="U")
    if text_array.shape != ():
        raise ModelFormatError(f"{where}: holds an array of shape {text_array.shape}, not one JSON string")
    text = str(text_array[()])
    depth = _json_depth(text)
    if depth > _MAX_JSON_DEPTH:
        raise ModelFormatError(f"{where}: its JSON nests {depth} deep, more than a record's limit of "
                               f"{_MAX_JSON_DEPTH}")
    try:
        meta = json.loads(text, parse_int=_small_int)
    except ValueError as e:  # json.JSONDecodeError included
        raise ModelFormatError(f"{where}: not a record's JSON: {e}") from None
    return _checked_meta(meta, where)


def _json_depth(text: str) -> int:
    """How deep brackets nest in JSON ``text`` (its strings left out), counted without parsing it: Python's
    parser recurses once per level."""
    bare = _JSON_STRING.sub('""', text).encode("ascii", "replace")
    codes = np.frombuffer(bare, np.uint8)
    steps = (np.isin(codes, (ord("["), ord("{"))).astype(np.int64)
             - np.isin(codes, (ord("]"), ord("}"))).astype(np.int64))
    return int(np.cumsum(steps).max()) if steps.size else 0


def _small_int(digits: str) -> int:
    if len(digits.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(digits)} digits")
    return int(digits)


def _checked_meta(meta: Any, where: str) -> Dict[str, Any]:
    """The JSON description as :func:`load` uses it (format, model, device, inputs, outputs, entries, quant
    as Quantization), every field's type checked; ModelFormatError naming the field otherwise."""
    if not isinstance(meta, dict):
        raise ModelFormatError(f"{where}: its JSON is a {type(meta).__name__}, not an object")
    fmt = meta.get("format")
    if type(fmt) is not int or fmt < 1:
        raise ModelFormatError(f"{where}: format {fmt!r:.40} is not a format number (1, 2, ...)")
    if fmt > _FORMAT:
        raise ModelFormatError(f"{where}: format {fmt} is newer than this accel reads ({_FORMAT}): update accel")
    checked: Dict[str, Any] = {"format": fmt}
    for key in ("model", "device"):
        checked[key] = meta.get(key, "")
        if not isinstance(checked[key], str):
            raise ModelFormatError(f"{where}: {key} is not a string")
    for key in ("inputs", "outputs"):
        names = meta.get(key)
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ModelFormatError(f"{where}: {key} is not a list of tensor names")
        checked[key] = names
    if fmt >= 2:
        entries = meta.get("entries")
        if not isinstance(entries, dict) or not all(isinstance(e, str) for e in entries.values()):
            raise ModelFormatError(f"{where}: entries is not an object of entry names")
        checked["entries"] = entries
    quant = meta.get("quant", {})
    if not isinstance(quant, dict):
        raise ModelFormatError(f"{where}: quant is not an object")
    checked["quant"] = {name: _quant_from_json(q, f"{where}: quant of {name!r}") for name, q in quant.items()}
    return checked


def _record_entries(meta: Dict[str, Any], z: array_files.Npz, what: str) -> Tuple[Entries, Entries]:
    """``(inputs, outputs)`` as (tensor name, entry name), each name once and each entry in the file."""
    where = f"{what}, entry {_ENTRY!r}"
    names = meta["inputs"] + meta["outputs"]
    twice = [n for n, k in Counter(names).items() if k > 1]
    if twice:
        raise ModelFormatError(f"{where}: tensor {twice[0]!r} is listed twice")
    # Format 1 wrote each tensor as NAME.npy, never escaped: read back by that exact name.
    entries = meta["entries"] if meta["format"] >= 2 else {n: f"{n}.npy" for n in names}
    missing = [n for n in names if n not in entries]
    if missing:
        raise ModelFormatError(f"{where}: tensor {missing[0]!r} has no entry")
    used = [entries[n] for n in names]
    if len(set(used)) != len(used) or _ENTRY in used:
        raise ModelFormatError(f"{where}: two tensors (or a tensor and the record) share an entry")
    absent = [e for e in used if e not in z]
    if absent:
        raise ModelFormatError(f"{what} has no entry {absent[0]!r}, which its record lists")
    pairs = [(n, entries[n]) for n in names]
    return pairs[:len(meta["inputs"])], pairs[len(meta["inputs"]):]


def _quant_json(q: Quantization) -> Dict[str, Any]:
    return {"type": q.type, "axis": q.axis, "scales": list(q.scales),
            "zero_points": None if q.zero_points is None else list(q.zero_points),
            "shifts": None if q.shifts is None else list(q.shifts)}


# Bounds of a record's quantization integers: zero points of up to 32-bit tensors, power-of-two shifts, axes.
_INT_RANGES = {"zero_points": (-(1 << 31), (1 << 32) - 1), "shifts": (-64, 64), "axis": (0, 63)}


def _quant_from_json(d: Any, where: str) -> Quantization:
    if not isinstance(d, dict) or not isinstance(d.get("type"), str):
        raise ModelFormatError(f"{where}: not an object with a type")

    def ints(key: str) -> Optional[Tuple[int, ...]]:
        v = d.get(key)
        if v is None:
            return None
        lo, hi = _INT_RANGES[key]
        if not isinstance(v, list) or not all(type(x) is int and lo <= x <= hi for x in v):
            raise ModelFormatError(f"{where}: {key} is not a list of integers in [{lo}, {hi}]")
        return tuple(v)

    scales = d.get("scales", [])
    if not isinstance(scales, list) or not all(type(s) in (int, float) and math.isfinite(s) for s in scales):
        raise ModelFormatError(f"{where}: scales is not a list of finite numbers")
    axis = d.get("axis")
    if axis is not None and not (type(axis) is int and 0 <= axis <= _INT_RANGES["axis"][1]):
        raise ModelFormatError(f"{where}: axis {axis!r:.40} is not an axis (0 to {_INT_RANGES['axis'][1]})")
    return Quantization(type=d["type"], axis=axis, scales=tuple(float(s) for s in scales),
                        zero_points=ints("zero_points"), shifts=ints("shifts"))
