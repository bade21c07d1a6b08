"""The compiler's intermediate graph: values (static shape, dtype, constant data) and runtime nodes.

Node ops are the FORMAT.md op names ("conv", "add", "copy", ...) plus the pseudo-op "batchnorm"
(y = x * scale + shift per channel, axis 1), which batchnorm.py folds into a conv or lowers to mul + add.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import CompileError


@dataclass(eq=False)
class Value:
    name: str
    dtype: np.dtype | None
    shape: tuple
    const: np.ndarray | None = None
    quant: Any = None  # quant.Quant of an int8/uint8 (or int32 bias) tensor, None for a plain one

    @property
    def is_const(self) -> bool:
        return self.const is not None


@dataclass(eq=False)
class Node:
    op: str
    inputs: list  # tensor names; None for an absent optional input
    outputs: list
    name: str = ""
    act: int = 0
    alpha: float = 0.0
    beta: float = 0.0
    # The op's parameters by name: an instance of its op_params class, None for an op without any.
    params: Any = None


class NameGen:
    """Unique tensor names: ONNX names are kept; generated ones avoid every name seen."""

    def __init__(self, taken=()):
        self._taken = set(taken)

    def reserve(self, name: str) -> None:
        self._taken.add(name)

    def new(self, hint: str) -> str:
        hint = hint or "t"
        if hint not in self._taken:
            self._taken.add(hint)
            return hint
        i = 1
        while f"{hint}_{i}" in self._taken:
            i += 1
        name = f"{hint}_{i}"
        self._taken.add(name)
        return name


class Graph:
    def __init__(self, names: NameGen):
        self.values: dict[str, Value] = {}
        self.nodes: list[Node] = []
        self.inputs: list[str] = []   # runtime graph inputs, in ONNX order
        self.outputs: list[str] = []  # ONNX graph outputs, in order (may repeat), then the extra outputs
        self.extra_outputs: frozenset = frozenset()  # those of the outputs a caller asked to see (extra_outputs.py)
        self.names = names

    # ---- values ----
    def value(self, name: str) -> Value:
        v = self.values.get(name)
        if v is None:
            raise CompileError(f"tensor '{name}' is used but never defined")
        return v

    def add_const(self, array: np.ndarray, hint: str) -> str:
        name = self.names.new(hint)
        arr = np.asarray(array)
        self.values[name] = Value(name, arr.dtype, tuple(arr.shape), arr)
        return name

    def add_value(self, hint: str, dtype, shape) -> str:
        name = self.names.new(hint)
        self.values[name] = Value(name, np.dtype(dtype) if dtype is not None else None, tuple(shape))
        return name

    def is_const(self, name) -> bool:
        return name is not None and self.values[name].is_const

    # ---- structure queries ----
    def producers(self) -> dict[str, Node]:
        return {o: n for n in self.nodes for o in n.outputs}

    def consumers(self) -> dict[str, list[Node]]:
        out: dict[str, list[Node]] = {}
        for n in self.nodes:
            for i in n.inputs:
                if i is not None:
                    out.setdefault(i, []).append(n)
        return out

    def replace_uses(self, old: str, new: str) -> None:
        for n in self.nodes:
            n.inputs = [new if i == old else i for i in n.inputs]

    def remove_dead(self) -> None:
        """Drops nodes none of whose outputs is needed for a graph output."""
        needed = set(self.outputs)
        keep = []
        for n in reversed(self.nodes):
            if any(o in needed for o in n.outputs):
                keep.append(n)
                needed.update(i for i in n.inputs if i is not None)
        keep.reverse()
        self.nodes = keep

    def toposort(self) -> None:
        """Stable topological sort of the nodes (Kahn); raises on a cycle."""
        prod = {}
        for idx, n in enumerate(self.nodes):
            for o in n.outputs:
                prod[o] = idx
        deps: list[set[int]] = [set() for _ in self.nodes]
        users: list[list[int]] = [[] for _ in self.nodes]
        for idx, n in enumerate(self.nodes):
            for i in n.inputs:
                p = prod.get(i)
                if p is not None and p != idx and p not in deps[idx]:
                    deps[idx].add(p)
                    users[p].append(idx)
        import heapq
        ready = [i for i, d in enumerate(deps) if not d]
        heapq.heapify(ready)
        order = []
        remaining = [len(d) for d in deps]
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for u in users[i]:
                remaining[u] -= 1
                if remaining[u] == 0:
                    heapq.heappush(ready, u)
        if len(order) != len(self.nodes):
            raise CompileError("the graph has a cycle")
        self.nodes = [self.nodes[i] for i in order]
