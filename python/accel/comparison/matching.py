"""Which tensor of one model stands for which of another: every tensor gets a *key*, the name of the float
ONNX tensor it stands for, and tensors of two models with one key are compared.

In an ONNX graph, a QuantizeLinear or DequantizeLinear passes the same value on (quantized or back to float),
so its input and output share a key: ``conv1_out``, ``conv1_out_QuantizeLinear_Output`` (the int8 tensor) and
``conv1_out_DequantizeLinear_Output`` all stand for ``conv1_out``. Such a chain is keyed by the tensor no
QuantizeLinear or DequantizeLinear made (the float original), except where the chain holds a graph output:
then by the output's name, which quantizers keep (onnxruntime's renames the float original
``probabilities_QuantizeLinear_Input`` and ends the chain with a DequantizeLinear named ``probabilities``).
Tensors no graph describes (a compiled model's, a run record's) are keyed by their names, through the other
model's graph where there is one; a name that graph does not know either, in onnxruntime's quantizer's
spelling (``conv1_out_QuantizeLinear_Output``, ``..._DequantizeLinear_Output``), by the name it was made from
(a run of a QDQ model saved with its intermediate tensors, held against the float model).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

from .._lazy_import import import_or_undo
from .metrics import Tensor

__all__ = ["GraphKeys", "best_per_key", "graph_keys"]

# Ops that pass their first input's value on, quantized or dequantized.
_QDQ_OPS = {"QuantizeLinear", "DequantizeLinear"}
_QDQ_DOMAINS = {"", "ai.onnx", "com.microsoft"}
# The suffixes onnxruntime's quantizer gives the tensors its QuantizeLinear and DequantizeLinear nodes make.
_QUANTIZER_SUFFIXES = ("_QuantizeLinear_Output", "_DequantizeLinear_Output")


@dataclass
class GraphKeys:
    """The key and the graph position (for ordering rows) of each tensor of a graph."""

    keys: Dict[str, str] = field(default_factory=dict)
    positions: Dict[str, Tuple[int, int]] = field(default_factory=dict)

    def key(self, name: str) -> str:
        if name in self.keys:
            return self.keys[name]
        for suffix in _QUANTIZER_SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                return name[:-len(suffix)]
        return name


def graph_keys(path: Path) -> GraphKeys:
    """The keys and positions of the tensors of the ONNX model at ``path`` (its main graph)."""
    with import_or_undo():
        import onnx

    graph = onnx.load(str(path), load_external_data=False).graph
    positions: Dict[str, Tuple[int, int]] = {}
    for i, inp in enumerate(graph.input):
        positions.setdefault(inp.name, (-1, i))
    parent: Dict[str, str] = {}  # union-find over QuantizeLinear/DequantizeLinear edges
    made_by_qdq = set()
    for n, node in enumerate(graph.node):
        for j, out in enumerate(node.output):
            if out:
                positions.setdefault(out, (n, j))
        if node.op_type in _QDQ_OPS and node.domain in _QDQ_DOMAINS and node.input and node.output[0]:
            _union(parent, node.input[0], node.output[0])
            made_by_qdq.add(node.output[0])
    outputs = {o.name for o in graph.output}
    chains: Dict[str, List[str]] = {}
    for name in parent:
        chains.setdefault(_find(parent, name), []).append(name)
    keys: Dict[str, str] = {}
    for members in chains.values():
        members.sort(key=lambda m: positions.get(m, (len(graph.node), 0)))
        named = [m for m in members if m in outputs]
        originals = [m for m in members if m not in made_by_qdq]
        key = (named or originals or members)[0]
        keys.update((m, key) for m in members)
    return GraphKeys(keys, positions)


def _find(parent: Dict[str, str], x: str) -> str:
    parent.setdefault(x, x)
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


def _union(parent: Dict[str, str], a: str, b: str) -> None:
    ra, rb = _find(parent, a), _find(parent, b)
    if ra != rb:
        parent[rb] = ra


def best_per_key(tensors: Iterable[Tensor], graph: GraphKeys) -> Dict[str, Tensor]:
    """One tensor per key, in the order given: the quantized one if any (it carries the quantization), else
    the one named as the key (the float original), else the first."""
    chosen: Dict[str, Tensor] = {}
    for t in tensors:
        key = graph.key(t.name)
        old = chosen.get(key)
        if old is None or _rank(t, key) < _rank(old, key):
            chosen[key] = t
    return chosen


def _rank(t: Tensor, key: str) -> int:
    return 0 if t.quant is not None else 1 if t.name == key else 2
