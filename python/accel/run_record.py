"""A run saved to a file: the inputs a model was given, the outputs it gave (its own and any extra, intermediate
ones), their quantization, and which model and device, so that another run can be held against it later
(``accel run --save``, ``accel compare``; e.g. a run on a board, compared on a PC with the emulator's).

The file is a ``.npz`` (``numpy.load`` reads it, no pickles): one array per tensor, under the tensor's name, and
one more, ``__accel_run__``, a JSON string saying which arrays are inputs and which outputs (in the model's order)
and each quantized tensor's parameters. A plain ``.npz`` of arrays (``accel run --output``, ``numpy.savez``) loads
too: every array an output, none an input.
"""
from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from .tensor_info import Quantization

__all__ = ["METADATA_KEY", "RunRecord", "load", "save", "write_npz"]

#: The name of the array holding the record's JSON description.
METADATA_KEY = "__accel_run__"
_FORMAT = 1


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


def write_npz(path: Union[str, Path], arrays: Mapping[str, np.ndarray]) -> None:
    """The arrays by name in a ``.npz`` file (np.load reads it), whatever the names: ``np.savez(f, **arrays)``
    would take an output named ``file`` or ``allow_pickle`` as its own argument. Written to ``path`` as
    given (np.savez would add ``.npz`` to another suffix)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
        for name, array in arrays.items():
            with z.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asarray(array), allow_pickle=False)


def save(path: Union[str, Path], record: RunRecord) -> None:
    """Writes ``record`` to ``path`` (a ``.npz``; see the module's docstring)."""
    clash = (set(record.inputs) & set(record.outputs)) | ({METADATA_KEY} & (set(record.inputs) | set(record.outputs)))
    if clash:
        raise ValueError(f"tensor names {sorted(clash)} are both inputs and outputs (or the record's own key)")
    meta = {"format": _FORMAT, "model": record.model, "device": record.device,
            "inputs": list(record.inputs), "outputs": list(record.outputs),
            "quant": {name: _quant_json(q) for name, q in record.quant.items()}}
    arrays: Dict[str, np.ndarray] = {**record.inputs, **record.outputs}
    arrays[METADATA_KEY] = np.array(json.dumps(meta))
    write_npz(path, arrays)


def load(path: Union[str, Path]) -> RunRecord:
    """The record in ``path``: one written by :func:`save`, or a plain ``.npz`` of outputs. ValueError for a
    file that is neither."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in z.files}
    except (ValueError, zipfile.BadZipFile, OSError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ValueError(f"{str(path)!r} is not a .npz file of arrays: {e}") from None
    if not isinstance(arrays, dict):  # np.load of a .npy gives an array
        raise ValueError(f"{str(path)!r} is a .npy array, not a .npz file of named tensors")
    meta_array = arrays.pop(METADATA_KEY, None)
    if meta_array is None:
        return RunRecord(outputs=arrays)
    try:
        meta = json.loads(str(meta_array))
        if int(meta.get("format", 0)) > _FORMAT:
            raise ValueError(f"format {meta['format']} is newer than this accel reads ({_FORMAT})")
        inputs = {n: arrays[n] for n in meta["inputs"]}
        outputs = {n: arrays[n] for n in meta["outputs"]}
        quant = {n: _quant_from_json(q) for n, q in meta.get("quant", {}).items()}
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise ValueError(f"{str(path)!r}: its {METADATA_KEY} record is damaged or unknown: {e!r}") from None
    return RunRecord(inputs=inputs, outputs=outputs, quant=quant, model=str(meta.get("model", "")),
                     device=str(meta.get("device", "")))


def _quant_json(q: Quantization) -> Dict[str, Any]:
    return {"type": q.type, "axis": q.axis, "scales": list(q.scales),
            "zero_points": None if q.zero_points is None else list(q.zero_points),
            "shifts": None if q.shifts is None else list(q.shifts)}


def _quant_from_json(d: Mapping[str, Any]) -> Quantization:
    def ints(v: Optional[Any]) -> Optional[Tuple[int, ...]]:
        return None if v is None else tuple(int(x) for x in v)

    return Quantization(type=str(d["type"]), axis=None if d.get("axis") is None else int(d["axis"]),
                        scales=tuple(float(s) for s in d.get("scales", ())), zero_points=ints(d.get("zero_points")),
                        shifts=ints(d.get("shifts")))
