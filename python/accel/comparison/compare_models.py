"""``accel.compare``: two models run on the same inputs, compared tensor by tensor in graph order."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from .. import run_record
from ..errors import InvalidArgumentError
from ..runtime.tensor_info import Quantization
from .index_inputs import index_limits
from .inputs import Feeds, given_sets, random_sets
from .matching import GraphKeys, best_per_key
from .metrics import Metrics, Tally, Tensor
from .report import Comparison, Row
from .sides import Devices, Side, file_kind, load_model, record_side, run_side, side_graph, uri_with_int8

__all__ = ["compare"]

PathLike = Union[str, "os.PathLike[str]"]
_FEW = 8  # names listed in an error


def compare(a: PathLike, b: PathLike, inputs: Any = None, *, random: Optional[int] = None, seed: int = 0,
            device: str = "emu", device_b: Optional[str] = None, int8: Optional[str] = None,
            input_shapes: Optional[Mapping[str, Sequence[int]]] = None, threshold: float = 0.99) -> Comparison:
    """Runs models ``a`` and ``b`` on the same inputs and compares them tensor by tensor.

    Args:
        a: a model: ONNX (run on an emulator device with every intermediate tensor as an output) or a compiled
            model (``.accm``, ``.bin``, ``.hbm``, ``.xmodel``: its own outputs only).
        b: a model as ``a``, or a run record ``.npz`` (``accel run --save``; nothing is run for it, and its
            saved inputs are ``a``'s when ``inputs`` is not given).
        inputs: a dict ``{name: array}`` or a list of arrays in ``a``'s input order.
        random: run ``random`` random input sets instead (seeded by ``seed``, an integer >= 0; see
            accel.comparison.inputs: token ids and other positions valid for both models), the metrics taken over
            all of them, each set made, run and counted in turn (memory of one set, whatever the count). Default
            when neither is given and ``b`` is a model: 1.
        device: the device URI ``a`` runs on (and ``b``, unless ``device_b``).
        int8: ``"ort"``, ``"dpu"`` or ``"bpu"``: run the ONNX models on the emulator with those int8 rules
            (the URI's ``int8`` option; an error with a device other than the emulator).
        input_shapes: ``{input name: shape}`` for the ONNX models (as ``Device.load``).
        threshold: rows whose cosine is below it (a number in [-1, 1]) are flagged; the first is
            ``Comparison.first_below``.

    Raises:
        ValueError: an unsupported file, an unknown or missing input name, no tensor in common, bad options
            (InvalidArgumentError for ``random``, ``seed`` and ``threshold`` out of range; ModelFormatError
            for a run record that is damaged or declares more than ``run_record.MAX_RECORD_BYTES``).
        FileNotFoundError, and accel's errors for a model that fails to load or run.
    """
    check_options(random, seed, threshold)
    path_a, path_b = Path(a), Path(b)
    kind_a = file_kind(path_a, "model A", record_ok=False)
    kind_b = file_kind(path_b, "model B", record_ok=True)
    for p in (path_a, path_b):
        if not p.is_file():
            raise FileNotFoundError(f"no such file: {str(p)!r}")
    if inputs is not None and random is not None:
        raise ValueError("give inputs or random, not both")
    uri_a = uri_with_int8(device, int8) if kind_a == "onnx" else device
    uri_b = device_b if device_b is not None else device
    uri_b = uri_with_int8(uri_b, int8) if kind_b == "onnx" else uri_b
    label_a, label_b = f"model A ({path_a.name})", f"{'record' if kind_b == 'record' else 'model'} B ({path_b.name})"
    record = run_record.load(path_b) if kind_b == "record" else None

    with Devices() as devices:
        model_a = load_model(devices.get(uri_a), path_a, kind_a, input_shapes)
        feed_quant: Dict[str, Quantization] = {i.name: i.quant for i in model_a.inputs if i.quant is not None}
        sets: Iterable[Feeds]
        if inputs is not None:
            sets = given_sets(inputs, model_a.inputs, label_a)
        elif record is not None:
            if random is not None:
                raise ValueError(f"{label_b} holds one run's outputs: random inputs cannot be held against them")
            if not record.inputs:
                raise ValueError(f"{label_b} holds no inputs (a plain .npz of outputs): give the inputs it was "
                                 f"run on")
            sets, feed_quant = [dict(record.inputs)], dict(record.quant)
        else:
            limits = index_limits([path_a, path_b])
            sets = random_sets(model_a.inputs, 1 if random is None else random, seed, limits)
        side_b = record_side(label_b, record) if record is not None else None
        model_b = load_model(devices.get(uri_b), path_b, kind_b, input_shapes) if record is None else None
        graph_a = side_graph(path_a, kind_a, devices.get(uri_a))
        graph_b = side_graph(path_b, kind_b, devices.get(uri_b)) if record is None else None
        tallies = RowTallies()
        for feeds in sets:  # one set at a time: a set's tensors are counted, then dropped
            side_a = run_side(label_a, model_a, graph_a, feeds, feed_quant)
            if model_b is not None:
                side_b = run_side(label_b, model_b, graph_b, feeds, feed_quant)
            assert side_b is not None
            tallies.add(side_a, side_b)
    return Comparison(tallies.rows(threshold), path_a.name, path_b.name, threshold)


def check_options(random: Any, seed: Any, threshold: Any) -> None:
    """InvalidArgumentError naming the argument for a ``random`` count below 1, a negative ``seed`` or a
    ``threshold`` that is not a number in [-1, 1] (a cosine's range; NaN would flag nothing)."""
    if random is not None and (not _is_int(random) or random < 1):
        raise InvalidArgumentError(f"random must be an integer >= 1 (input sets), got {random!r}")
    if not _is_int(seed) or seed < 0:
        raise InvalidArgumentError(f"seed must be an integer >= 0, got {seed!r}")
    real = isinstance(threshold, (int, float, np.integer, np.floating)) and not isinstance(threshold, bool)
    if not real or not -1.0 <= float(threshold) <= 1.0:
        raise InvalidArgumentError(f"threshold must be a number in [-1, 1] (a cosine), got {threshold!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class RowTallies:
    """The rows of a comparison, added to set after set: the tensors paired once (by the first set's sides;
    every set of a model has the same tensors) and each pair's metrics tallied."""

    def __init__(self) -> None:
        self._heads: List[Dict[str, Any]] = []  # each row's names, shapes and dtypes
        self._tallies: List[Tally] = []

    def add(self, side_a: Side, side_b: Side) -> None:
        pairs = pair_tensors(side_a, side_b)
        if not self._tallies:
            self._heads = [row_head(key, a, b) for key, a, b in pairs]
            self._tallies = [Tally() for _ in pairs]
        for tally, (_, a, b) in zip(self._tallies, pairs):
            tally.add(a, b)

    def rows(self, threshold: float) -> List[Row]:
        return [make_row(head, tally.metrics(), threshold) for head, tally in zip(self._heads, self._tallies)]


def pair_tensors(side_a: Side, side_b: Side) -> List[Tuple[str, Tensor, Tensor]]:
    """``(key, A's tensor, B's tensor)`` for each key both sides have, in A's order. A side without a graph is
    keyed through the other's."""
    graph_a = side_a.graph or side_b.graph or GraphKeys()
    graph_b = side_b.graph or side_a.graph or GraphKeys()
    chosen_a = best_per_key(side_a.tensors, graph_a)
    chosen_b = best_per_key(side_b.tensors, graph_b)
    common = [k for k in chosen_a if k in chosen_b]
    if not common:
        raise ValueError(f"{side_a.label} and {side_b.label} have no tensor in common: A has "
                         f"{_few(t.name for t in side_a.tensors)}; B has {_few(t.name for t in side_b.tensors)}")
    return [(key, chosen_a[key], chosen_b[key]) for key in common]


def pair_rows(side_a: Side, side_b: Side, threshold: float) -> List[Row]:
    """One row per key both sides have, in A's order (:func:`pair_tensors`), over every set the sides hold."""
    tallies = RowTallies()
    tallies.add(side_a, side_b)
    return tallies.rows(threshold)


def row_head(key: str, a: Tensor, b: Tensor) -> Dict[str, Any]:
    """A row's fields that name its tensors (names, shapes, dtypes), as :class:`Row` takes them."""
    return {"tensor": a.name, "tensor_b": b.name, "key": key, "shape": a.shape, "shape_b": b.shape,
            "dtype_a": str(a.dtype), "dtype_b": str(b.dtype)}


def make_row(head: Dict[str, Any], m: Metrics, threshold: float) -> Row:
    below = m.cosine is not None and not m.cosine >= threshold  # NaN counts as below
    return Row(**head, cosine=m.cosine, max_abs_error=m.max_abs_error, mean_abs_error=m.mean_abs_error,
               differing=m.differing, max_lsb=m.max_lsb, below_threshold=below, note=m.note)


def _few(names: Any) -> str:
    listed = list(names)
    more = f" ... ({len(listed)} in all)" if len(listed) > _FEW else ""
    return ", ".join(listed[:_FEW]) + more if listed else "none"
