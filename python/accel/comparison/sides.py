"""The two sides of a comparison: what kind of file each is, the devices the models run on, and the tensors
each side gives for one input set (its inputs as fed, its outputs, and for an ONNX model on the emulator every
intermediate tensor), in graph order.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..runtime.capabilities import describe_or_unknown
from ..compile_cache import INT8_RULES
from .. import front_ends
from ..device import Device
from ..front_ends.front_end import FrontEnd
from ..runtime.device_uri import parse_uri
from ..runtime.model import Model
from ..run_record import RunRecord
from ..runtime.tensor_info import Quantization, TensorInfo
from .inputs import Feeds, fit
from .matching import GraphKeys, graph_keys
from .metrics import Tensor

__all__ = ["COMPILED_SUFFIXES", "Devices", "Side", "file_kind", "record_side", "run_side", "side_graph",
           "uri_with_int8"]

#: Compiled models' file suffixes: the emulator's, Horizon's (BPU) and Vitis AI's (VART).
COMPILED_SUFFIXES = (".accm", ".bin", ".hbm", ".xmodel")


def file_kind(path: Path, what: str, record_ok: bool) -> str:
    """``"onnx"``, ``"compiled"`` or ``"record"`` (a ``.npz``, where ``record_ok``); ValueError otherwise."""
    suffix = path.suffix.lower()
    if suffix == ".onnx":
        return "onnx"
    if suffix in COMPILED_SUFFIXES:
        return "compiled"
    if suffix == ".npz" and record_ok:
        return "record"
    known = ".onnx, " + ", ".join(COMPILED_SUFFIXES) + (", or a run record .npz" if record_ok else "")
    raise ValueError(f"{what} {str(path)!r}: unsupported file type {suffix or '(none)'!r}; expected {known}")


def uri_with_int8(uri: str, rules: Optional[str]) -> str:
    """``uri`` with its ``int8`` option set to ``rules`` (None: ``uri`` unchanged); ValueError if ``uri`` is
    not the emulator's or ``rules`` is not one of INT8_RULES."""
    if rules is None:
        return uri
    if rules not in INT8_RULES:
        raise ValueError(f"int8 must be one of {', '.join(INT8_RULES)}, not {rules!r}")
    parsed = parse_uri(uri)
    if not describe_or_unknown(parsed.scheme).int8_option:
        raise ValueError(f"int8={rules!r} runs ONNX models on the emulator with those rules; device {uri!r} "
                         f"is not the emulator")
    return str(parsed.without("int8").with_option("int8", rules))


class Devices(contextlib.AbstractContextManager):  # type: ignore[type-arg]
    """The devices of a comparison, each URI opened once, all closed on exit."""

    def __init__(self) -> None:
        self._open: Dict[str, Device] = {}

    def get(self, uri: str) -> Device:
        if uri not in self._open:
            self._open[uri] = Device(uri)
        return self._open[uri]

    def __exit__(self, *exc: object) -> None:
        for dev in self._open.values():
            dev.close()
        self._open.clear()


@dataclass
class Side:
    """One side: a label for messages (``"A (model.onnx)"``), its tensors in graph order, and its graph's
    keys (None for a compiled model or a run record)."""

    label: str
    tensors: List[Tensor]
    graph: Optional[GraphKeys]


def _front_end(dev: Device, path: Path) -> Optional[FrontEnd]:
    """The front end that turns the file at ``path`` into what ``dev`` loads; None where it loads the file as it is."""
    return front_ends.for_file(dev.capabilities.model_format, path)


def load_model(dev: Device, path: Path, kind: str, shapes: Optional[Mapping[str, Sequence[int]]]) -> Model:
    """The model at ``path`` on ``dev``, with every intermediate tensor as an extra output where its front end
    gives them (ONNX, a .xmodel on the emulator); ``Device.load`` refuses ``input_shapes`` for a compiled one."""
    front = _front_end(dev, path)
    extra = "all" if front is not None and "extra_outputs" in front.options else None
    return dev.load(path, input_shapes=shapes, extra_outputs=extra)


def side_graph(path: Path, kind: str, dev: Optional[Device] = None) -> Optional[GraphKeys]:
    """The keys of the model's tensors (read once per comparison): an ONNX graph's, or the graph order its front end
    on ``dev`` gives (each tensor its own key); None for a model run as it is."""
    if kind == "onnx":
        return graph_keys(path)
    front = _front_end(dev, path) if dev is not None and kind == "compiled" else None
    if front is None or front.tensor_order is None:
        return None
    order = front.tensor_order(path.read_bytes(), None)
    return GraphKeys({}, {name: (i, 0) for i, name in enumerate(order)})


def run_side(label: str, model: Model, graph: Optional[GraphKeys], feeds: Feeds,
             feed_quant: Mapping[str, Quantization]) -> Side:
    """Runs ``model`` on one input set (fitted to its inputs) and gathers its tensors, in ``graph``'s order."""
    fitted = fit(feeds, feed_quant, model.inputs, label)
    results = model.run(fitted)
    infos: Dict[str, TensorInfo] = {i.name: i for i in [*model.inputs, *model.outputs]}
    # Copies: the next run may write the model's output buffers.
    named = [(name, np.array(a)) for name, a in [*fitted.items(), *zip((o.name for o in model.outputs), results)]]
    tensors = [Tensor(name, [a], _integer_quant(infos[name].quant, a)) for name, a in named]
    if graph is not None:
        tensors = _in_graph_order(tensors, graph)
    return Side(label, tensors, graph)


def record_side(label: str, record: RunRecord) -> Side:
    """A run record's tensors (its inputs, then its outputs), as one input set."""
    named: Dict[str, np.ndarray] = {**record.inputs, **record.outputs}
    tensors = [Tensor(name, [np.asarray(a)], _integer_quant(record.quant.get(name), np.asarray(a)))
               for name, a in named.items()]
    return Side(label, tensors, None)


def _integer_quant(q: Optional[Quantization], array: np.ndarray) -> Optional[Quantization]:
    """The quantization of an integer tensor (a float one's values are real already)."""
    return q if q is not None and array.dtype.kind in "iu" else None


def _in_graph_order(tensors: List[Tensor], graph: GraphKeys) -> List[Tensor]:
    end: Tuple[int, int] = (1 << 62, 0)
    return sorted(tensors, key=lambda t: graph.positions.get(t.name, end))  # stable: unknown ones keep order
