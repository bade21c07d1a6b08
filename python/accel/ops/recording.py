"""The graph ops build: one op's nodes (an eager call) or a fusion scope's, as plain records, and from it
the ONNX model of the tensors wanted and its signature (the model cache's key).

Names are given in order of appearance (inputs ``x0..``, constants ``c0..``, node outputs ``t0..``), so
the same sequence of calls on tensors of the same shapes gives the same signature.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, NamedTuple, Sequence, Tuple

import numpy as np

from .._lazy_import import import_or_undo
from .args import FLOAT32, Shape
from .plan import Arg, Const, Plan, Prev, Ref

OPSET = 20  # Gelu's approximate attribute is from opset 20
IR_VERSION = 9


@dataclass(frozen=True)
class Operand:
    """A resolved tensor argument.

    kind ``"input"``: ``source`` is a DeviceTensor or NumPy array fed to the model when it runs;
    ``"value"``: ``source`` names a tensor computed earlier in the same recording (a fusion scope's);
    ``"const"``: ``source`` is a NumPy array, a constant of the model (a number given as ``other``).
    """

    shape: Shape
    kind: str
    source: Any


class NodeRecord(NamedTuple):
    op_type: str
    inputs: Tuple[str, ...]  # "" for an absent optional input
    output: str
    attrs: Tuple[Tuple[str, Any], ...]


def _freeze(value: Any) -> Any:
    """An attribute value as a hashable, comparable key part."""
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, (bool, int, np.integer)):
        return int(value)
    return value


def content_key(array: np.ndarray) -> Tuple[Any, ...]:
    """A constant's identity: its shape, dtype and a SHA-256 of every one of its bytes.

    Constants are merged, and a cached model reused, by this key alone, so it covers all the data: a sample
    would merge two weights that differ only where it does not look. SHA-256 is hashlib's fastest full hash
    where the CPU has SHA instructions (about 1.4 GB/s: 3 ms for a 4 MB weight) and the compile cache's."""
    a = np.ascontiguousarray(array)
    return a.shape, a.dtype.str, hashlib.sha256(a.data).digest()


@dataclass(frozen=True)
class Graph:
    """The part of a recording that computes ``outputs``: what one model is built from."""

    inputs: Tuple[Tuple[str, Shape, Any], ...]  # (name, shape, source)
    constants: Tuple[Tuple[str, np.ndarray, Tuple[Any, ...]], ...]  # (name, array, key)
    nodes: Tuple[NodeRecord, ...]
    outputs: Tuple[Tuple[str, Shape], ...]

    def signature(self) -> Tuple[Any, ...]:
        return (tuple((n, s, FLOAT32.str) for n, s, _ in self.inputs), tuple((n, k) for n, _, k in self.constants),
                self.nodes, self.outputs)

    def onnx(self) -> bytes:
        """The graph as a serialized ONNX model."""
        with import_or_undo():
            from onnx import TensorProto, helper, numpy_helper

        attrs: List[Dict[str, Any]] = [{k: list(v) if isinstance(v, tuple) else v for k, v in n.attrs}
                                       for n in self.nodes]
        nodes = [helper.make_node(n.op_type, list(n.inputs), [n.output], name=f"{n.output}_{n.op_type}", **a)
                 for n, a in zip(self.nodes, attrs)]
        graph = helper.make_graph(
            nodes, "accel_ops",
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s, _ in self.inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in self.outputs],
            [numpy_helper.from_array(a, n) for n, a, _ in self.constants])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="accel.ops")
        model.ir_version = IR_VERSION
        data: bytes = model.SerializeToString()
        return data


class Recording:
    """Nodes added op by op. ``snapshot``: copy constants when added (a fusion scope builds its model later,
    and the caller may change a weight array in between)."""

    def __init__(self, snapshot: bool = False) -> None:
        self._snapshot = snapshot
        self._inputs: List[Tuple[str, Shape, Any]] = []
        self._input_by_id: Dict[int, str] = {}
        self._constants: List[Tuple[str, np.ndarray, Tuple[Any, ...]]] = []
        self._constant_by_key: Dict[Tuple[Any, ...], str] = {}
        self._nodes: List[NodeRecord] = []
        self._shapes: Dict[str, Shape] = {}

    def __len__(self) -> int:
        return len(self._nodes)

    def emit(self, p: Plan, operands: Mapping[str, Operand]) -> str:
        """Adds ``p``'s nodes; returns the name of its output."""
        outs: List[str] = []
        for n in p.nodes:
            ins = [self._ref(r, operands, outs) for r in n.inputs]
            while ins and not ins[-1]:
                ins.pop()
            out = f"t{len(self._nodes)}"
            self._nodes.append(NodeRecord(n.op_type, tuple(ins), out,
                                          tuple(sorted((k, _freeze(v)) for k, v in n.attrs.items()))))
            outs.append(out)
        self._shapes[outs[-1]] = p.shape
        return outs[-1]

    def _ref(self, r: Ref, operands: Mapping[str, Operand], outs: Sequence[str]) -> str:
        if r is None:
            return ""
        if isinstance(r, Prev):
            return outs[r.index]
        if isinstance(r, Const):
            return self._constant(r.array)
        assert isinstance(r, Arg)
        o = operands[r.name]
        if o.kind == "value":
            return str(o.source)
        if o.kind == "const":
            return self._constant(o.source)
        name = self._input_by_id.get(id(o.source))
        if name is None:
            name = f"x{len(self._inputs)}"
            self._inputs.append((name, o.shape, o.source))  # kept: its id stays its own
            self._input_by_id[id(o.source)] = name
        return name

    def _constant(self, array: np.ndarray) -> str:
        kept = np.array(array) if self._snapshot else array
        key = content_key(kept)
        name = self._constant_by_key.get(key)
        if name is None:
            name = f"c{len(self._constants)}"
            self._constants.append((name, kept, key))
            self._constant_by_key[key] = name
        return name

    def graph(self, outputs: Sequence[str]) -> Graph:
        """The nodes, inputs and constants ``outputs`` need (nodes nobody needs are dropped)."""
        needed = set(outputs)
        kept: List[NodeRecord] = []
        for n in reversed(self._nodes):
            if n.output in needed:
                kept.append(n)
                needed.update(n.inputs)
        return Graph(tuple(i for i in self._inputs if i[0] in needed),
                     tuple(c for c in self._constants if c[0] in needed),
                     tuple(reversed(kept)), tuple((o, self._shapes[o]) for o in outputs))
