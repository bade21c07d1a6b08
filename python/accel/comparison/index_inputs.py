"""The integer inputs of a model whose values are positions: indices into a table (a token id into its
embedding) or lengths of a sequence. Random inputs for them (accel.comparison.inputs) are drawn where every
value is valid, so that a run on them is neither refused (the emulator fails a run on an index past its
table, as onnxruntime does) nor meaningless.

An input is such an input when its values reach, unchanged, a position operand: directly, or through ops
that only move or convert values (Cast, Reshape, Squeeze, Unsqueeze, Transpose, Slice, Concat, ...). The
operands: the indices of Gather, GatherElements, GatherND, ScatterElements and ScatterND (the emulator's
gather), OneHot's indices (its onehot), and RNN, GRU and LSTM's sequence_lens (its rnn). Read from the model
file: an ONNX model's graph or an .accm's; a vendor's compiled model says nothing, and its inputs keep the
default range.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from .._lazy_import import import_or_undo

__all__ = ["index_limits"]

Dims = Tuple[Optional[int], ...]

# ONNX ops whose outputs hold values of these inputs, unchanged but for their type (None: every input).
_ONNX_MOVES: Dict[str, Optional[Tuple[int, ...]]] = {
    "Cast": (0,), "CastLike": (0,), "Identity": (0,), "Reshape": (0,), "Squeeze": (0,), "Unsqueeze": (0,),
    "Flatten": (0,), "Transpose": (0,), "Expand": (0,), "Tile": (0,), "Slice": (0,), "Split": (0,),
    "Gather": (0,), "GatherElements": (0,), "GatherND": (0,), "Concat": None,
}
# The emulator's ops (an .accm's) that do the same.
_ACCM_MOVES: Dict[str, Optional[Tuple[int, ...]]] = {
    "copy": (0,), "cast": (0,), "transpose": (0,), "slice": (0,), "expand": (0,), "gather": (0,), "concat": None,
}


@dataclass
class _Flow:
    """A graph reduced to what matters here: its integer inputs, which tensors carry a tensor's values on,
    and the count of valid values of each tensor used as a position (values 0 .. count-1)."""

    inputs: List[str] = field(default_factory=list)
    moves: Dict[str, List[str]] = field(default_factory=dict)
    counts: Dict[str, int] = field(default_factory=dict)

    def move(self, source: str, target: str) -> None:
        if source and target:
            self.moves.setdefault(source, []).append(target)

    def position(self, tensor: str, count: Optional[int]) -> None:
        if tensor and count is not None and count >= 1:
            self.counts[tensor] = min(self.counts.get(tensor, count), count)

    def limits(self) -> Dict[str, int]:
        """{input: the fewest valid values of any position its values reach}."""
        out: Dict[str, int] = {}
        for name in self.inputs:
            seen, todo = {name}, [name]
            while todo:
                tensor = todo.pop()
                if tensor in self.counts:
                    out[name] = min(out.get(name, self.counts[tensor]), self.counts[tensor])
                for nxt in self.moves.get(tensor, []):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
        return out


def index_limits(paths: Iterable[Union[str, Path]]) -> Dict[str, int]:
    """``{input name: n}`` for the integer inputs of the models at ``paths`` whose values are positions
    (see the module's docstring): every value in ``0 .. n-1`` is valid for each model (the smallest table or
    sequence any of them indexes). Models other than ONNX and .accm add nothing."""
    limits: Dict[str, int] = {}
    for path in paths:
        for name, n in _flow(Path(path)).limits().items():
            limits[name] = min(limits.get(name, n), n)
    return limits


def _flow(path: Path) -> _Flow:
    suffix = path.suffix.lower()
    try:
        if suffix == ".onnx":
            return _onnx_flow(path)
        if suffix == ".accm":
            return _accm_flow(path)
    except Exception:  # a file its reader cannot parse adds nothing: loading the model says what is wrong with it
        pass
    return _Flow()


# ---- ONNX


def _onnx_flow(path: Path) -> _Flow:
    with import_or_undo():
        import onnx

    model = onnx.load(str(path), load_external_data=False)
    graph = model.graph
    shapes = _OnnxShapes(model)
    flow = _Flow()
    initializers = {t.name for t in graph.initializer}
    integer = {onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT16, onnx.TensorProto.UINT16,
               onnx.TensorProto.INT32, onnx.TensorProto.UINT32, onnx.TensorProto.INT64, onnx.TensorProto.UINT64}
    flow.inputs = [i.name for i in graph.input
                   if i.name not in initializers and i.type.tensor_type.elem_type in integer]
    for node in graph.node:
        ins, op = list(node.input), node.op_type
        if node.domain not in ("", "ai.onnx"):
            continue
        carried = _ONNX_MOVES.get(op, ())
        for k, name in enumerate(ins):
            if carried is None or k in carried:
                for out in node.output:
                    flow.move(name, out)
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        if op in ("Gather", "GatherElements", "ScatterElements", "Scatter") and len(ins) > 1:
            flow.position(ins[1], _axis_size(shapes.dims(ins[0]), int(attrs.get("axis", 0))))
        elif op in ("GatherND", "ScatterND") and len(ins) > 1:
            flow.position(ins[1], _nd_count(shapes.dims(ins[0]), shapes.dims(ins[1]), int(attrs.get("batch_dims", 0))))
        elif op == "OneHot" and len(ins) > 1:
            depth = shapes.value(ins[1])
            flow.position(ins[0], int(depth.reshape(-1)[0]) if depth is not None and depth.size == 1 else None)
        elif op in ("RNN", "GRU", "LSTM") and len(ins) > 4:
            steps = _axis_size(shapes.dims(ins[0]), 1 if attrs.get("layout", 0) else 0)
            flow.position(ins[4], None if steps is None else steps + 1)  # lengths 0 .. steps
    return flow


class _OnnxShapes:
    """Static dims and constant values of an ONNX graph's tensors: what the graph declares, then (once, if a
    tensor is not declared) what onnx's shape inference finds."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._inferred = False
        self._dims: Dict[str, Dims] = {}
        self._values: Dict[str, Any] = {}
        graph = model.graph
        for t in graph.initializer:
            self._dims[t.name] = tuple(int(d) for d in t.dims)
            self._values[t.name] = t
        for node in graph.node:
            if node.op_type == "Constant" and node.output:
                for a in node.attribute:
                    if a.name == "value":
                        self._dims[node.output[0]] = tuple(int(d) for d in a.t.dims)
                        self._values[node.output[0]] = a.t
        self._declare([*graph.input, *graph.value_info, *graph.output])

    def _declare(self, infos: Sequence[Any]) -> None:
        for vi in infos:
            if vi.name in self._dims or not vi.type.tensor_type.HasField("shape"):
                continue
            self._dims[vi.name] = tuple(d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
                                        for d in vi.type.tensor_type.shape.dim)

    def dims(self, name: str) -> Optional[Dims]:
        if name not in self._dims and not self._inferred:
            self._inferred = True
            with import_or_undo():
                import onnx

            try:
                inferred = onnx.shape_inference.infer_shapes(self._model)
            except Exception:  # a graph onnx cannot infer: its undeclared tensors stay unknown
                return None
            self._declare(list(inferred.graph.value_info))
        return self._dims.get(name)

    def value(self, name: str) -> Optional[np.ndarray]:
        with import_or_undo():
            from onnx import numpy_helper

        t = self._values.get(name)
        if t is None:
            return None
        try:
            return np.asarray(numpy_helper.to_array(t))
        except Exception:  # data stored outside the file (not loaded): unknown
            return None


def _axis_size(dims: Optional[Dims], axis: int) -> Optional[int]:
    if dims is None or not -len(dims) <= axis < len(dims):
        return None
    return dims[axis]


def _nd_count(data: Optional[Dims], indices: Optional[Dims], batch_dims: int) -> Optional[int]:
    """The fewest entries along the data axes a GatherND/ScatterND index tuple addresses."""
    if data is None:
        return None
    depth = indices[-1] if indices else None
    axes = data[batch_dims:batch_dims + depth] if depth else data[batch_dims:]
    known = [d for d in axes if d is not None]
    return min(known) if known else None


# ---- .accm (the emulator's graph: gather, onehot and rnn read positions)


def _accm_flow(path: Path) -> _Flow:
    with import_or_undo():
        from ..compiler import accm

    tables = accm.read(path)
    tensors = tables["tensors"]
    flow = _Flow()
    name = [t["name"] for t in tensors]
    flow.inputs = [name[i] for i in tables["inputs"]
                   if np.dtype(accm.DTYPES.get(tensors[i]["dtype"], "f4")).kind in "iu"]
    for node in tables["nodes"]:
        ins = [name[i] if i is not None else "" for i in node["inputs"]]
        op, params = node["op_name"], node["params"]
        carried = _ACCM_MOVES.get(op, ())
        for k, tensor in enumerate(ins):
            if carried is None or k in carried:
                for out in node["outputs"]:
                    flow.move(tensor, name[out])
        if op == "gather":
            flow.position(ins[1], tensors[node["inputs"][0]]["dims"][params.axis])
        elif op == "onehot":
            flow.position(ins[0], params.depth)
        elif op == "rnn" and len(ins) > 4 and ins[4]:
            flow.position(ins[4], tensors[node["inputs"][0]]["dims"][1 if params.layout else 0] + 1)
    return flow
