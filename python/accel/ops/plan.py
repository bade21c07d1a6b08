"""What an op rule returns: a plan, i.e. the op's output shape and the ONNX node(s) computing it, as data.

A rule (rules_*.py) checks a call and answers a :class:`Plan`; it never touches a device or a graph, so a
call rejected by its rule leaves no trace (not even inside a fusion scope). The recording
(recording.py) then adds the plan's nodes to its graph.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from .args import Shape


@dataclass(frozen=True)
class Arg:
    """A tensor argument of the call, by name (``"input"``, ``"other"``, ``"tensors[1]"``)."""

    name: str


@dataclass(frozen=True, eq=False)
class Const:
    """A constant of the op's model (a weight, a bias, a shape, a scalar operand)."""

    array: np.ndarray


@dataclass(frozen=True)
class Prev:
    """The output of an earlier node of the same plan."""

    index: int


#: A node input: a tensor argument, a constant, an earlier node's output, or None for an absent
#: optional input (ONNX's empty name).
Ref = Union[Arg, Const, Prev, None]


@dataclass(frozen=True)
class Node:
    """One ONNX node: its op type, inputs and attributes (ints, floats, strings or lists of them)."""

    op_type: str
    inputs: Tuple[Ref, ...]
    attrs: Mapping[str, Any] = field(default_factory=dict)


def node(op_type: str, *inputs: Ref, **attrs: Any) -> Node:
    return Node(op_type, inputs, attrs)


@dataclass(frozen=True)
class Plan:
    """The op's output shape (float32) and the nodes computing it; the last node's output is the op's."""

    shape: Shape
    nodes: Tuple[Node, ...]


def plan(shape: Shape, *nodes: Node) -> Plan:
    return Plan(tuple(shape), nodes)


@dataclass(frozen=True)
class Call:
    """An op call as its rule sees it: the shapes of its tensor arguments and its other arguments."""

    op: str
    shapes: Dict[str, Shape]
    args: Dict[str, Any]

    def shape(self, name: str = "input") -> Shape:
        return self.shapes[name]

    def get(self, name: str, default: Optional[Any] = None) -> Any:
        return self.args.get(name, default)


def const(values: Any, dtype: Any = np.float32) -> Const:
    return Const(np.asarray(values, dtype=dtype))
