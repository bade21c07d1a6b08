"""Vitis AI 3.5's ``xir`` module as scripts use it to read a compiled model (its pybind11 binding,
src/vai_runtime/xir/src/python/wrapper/wrapper.cpp), over accel's own .xmodel reader (accel.compiler.xir):

    g = xir.Graph.deserialize("model.xmodel")
    root = g.get_root_subgraph()
    dpus = [s for s in root.toposort_child_subgraph() if s.has_attr("device") and s.get_attr("device") == "DPU"]
    t = next(iter(dpus[0].get_input_tensors())); t.name, t.dims, t.dtype, t.get_attr("fix_point")

Read only: the methods that build or edit a graph raise UnsupportedError (_uncovered.py). As in the binding, an
object got from a graph (subgraph, op, tensor) keeps the graph alive, sets come back where XIR returns std::set
(get_ops, get_children, a subgraph's input and output tensors) and lists where it returns a vector; objects compare
equal when they stand for the same node of the same graph.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, Union

from ...compiler import xir as _x
from ...errors import InvalidArgumentError, ModelFormatError
from ._attrs import AttrsMixin
from ._uncovered import uncovered

__all__ = ["Graph", "Op", "Subgraph", "Tensor"]


class _Content:
    """One deserialized file: the reader's graph, where it came from, and the indexes the wrappers walk (no wrapper
    objects, so that a Graph is freed as soon as the script holds nothing of it: vart.py's runners check that)."""

    def __init__(self, path: str, data: bytes, graph: _x.Graph) -> None:
        self.path, self.data, self.graph = path, data, graph
        self.parent: Dict[int, _x.Subgraph] = {}
        self.leaf: Dict[str, _x.Subgraph] = {}
        for s in graph.root.walk():
            for c in s.children:
                self.parent[id(c)] = s
            if not s.children:
                for name in s.leaf_ops:
                    self.leaf[name] = s
        self.producer = {op.output.name: name for name, op in graph.ops.items()}
        self.consumers = graph.consumers()


class _Node(AttrsMixin):
    """What every wrapper shares: its graph (kept alive, as the binding's reference_internal does) and a key saying
    which node of which graph it stands for (None: a runner's own tensor, equal only to itself)."""

    _graph: Optional[Graph]
    _key: Optional[Tuple[Any, ...]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(f"xir.{type(self).__name__} objects come from a graph (xir.Graph.deserialize) or a runner; "
                        f"they are not made directly")

    def __eq__(self, other: object) -> bool:
        if self._key is None or not isinstance(other, _Node):
            return self is other
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key) if self._key is not None else id(self)

    def _content(self) -> _Content:
        assert self._graph is not None
        return self._graph._c


class Tensor(_Node):
    """An op's output tensor: ``name``, ``dims`` (a list), ``ndim``, ``dtype`` ("xint8", "float32"), ``producer``,
    get_element_num(), get_data_size() (bytes), attributes (``get_attr("fix_point")``)."""

    _t: _x.Tensor
    _producer: Optional[str]

    @classmethod
    def _make(cls, t: _x.Tensor, graph: Optional[Graph], producer: Optional[str]) -> Tensor:
        self = object.__new__(cls)
        self._t, self._graph, self._producer = t, graph, producer
        self._key = None if graph is None else (id(graph._c), "tensor", t.name)
        return self

    @property
    def name(self) -> str:
        return self._t.name

    @property
    def ndim(self) -> int:
        return len(self._t.shape)

    @property
    def dims(self) -> List[int]:
        return list(self._t.shape)

    @property
    def dtype(self) -> str:
        return self._t.type_name

    @property
    def producer(self) -> Optional[Op]:
        """The op writing it; None for a runner's tensor (the runner made it, as VART's DPU runner does)."""
        if self._graph is None or self._producer is None:
            return None
        return Op._make(self._graph, self._producer)

    def get_element_num(self) -> int:
        n = 1
        for d in self._t.shape:
            n *= d
        return n

    def get_data_size(self) -> int:
        return (self.get_element_num() * self._t.bit_width + 7) // 8

    def _attrs(self) -> Mapping[str, Any]:
        return self._t.attrs

    def _what(self) -> str:
        return f"tensor {self.name!r}"

    def __repr__(self) -> str:
        return f"<xir.Tensor named '{self.name}'>"

    def __str__(self) -> str:
        return f"{{name: '{self.name}', shape: {self.dims}, type: '{self.dtype}', attrs: {self.get_attrs()}}}"

    __getattr__ = uncovered("Tensor", frozenset({"clone", "set_attr", "set_attrs"}))


class Op(_Node):
    """An op of the graph: name, type ("conv2d-fix", ...), inputs by argument name, fanout, output tensor,
    attributes."""

    _name: str

    @classmethod
    def _make(cls, graph: Graph, name: str) -> Op:
        self = object.__new__(cls)
        self._graph, self._name, self._key = graph, name, (id(graph._c), "op", name)
        return self

    def _op(self) -> _x.Op:
        return self._content().graph.ops[self._name]

    def _wrap(self, names: List[str]) -> List[Op]:
        assert self._graph is not None
        return [Op._make(self._graph, n) for n in names]

    def get_name(self) -> str:
        return self._name

    def get_type(self) -> str:
        return self._op().type

    def get_input_num(self, name: Optional[str] = None) -> int:
        """Every input op's count, or those of argument `name` (0 for an argument it has not)."""
        if name is None:
            return len(self._op().input_ops())
        return len(self._op().inputs.get(name, []))

    def get_input_ops(self) -> Dict[str, List[Op]]:
        return {arg: self._wrap(names) for arg, names in self._op().inputs.items()}

    def get_input_ops_by_name(self, name: str) -> List[Op]:
        return self._wrap(self._op().inputs.get(name, []))

    def get_input_op(self, name: str, idx: int = 0) -> Optional[Op]:
        ops = self.get_input_ops_by_name(name)
        return ops[idx] if 0 <= idx < len(ops) else None

    def get_fanout_num(self) -> int:
        return len(self._content().consumers[self._name])

    def get_fanout_ops(self) -> List[Op]:
        return self._wrap(self._content().consumers[self._name])

    def get_input_tensors(self) -> List[Tensor]:
        return [op.get_output_tensor() for op in self._wrap(self._op().input_ops())]

    def get_input_tensors_by_name(self, name: str) -> List[Tensor]:
        return [op.get_output_tensor() for op in self.get_input_ops_by_name(name)]

    def get_input_tensor(self, name: str, idx: int = 0) -> Optional[Tensor]:
        op = self.get_input_op(name, idx)
        return None if op is None else op.get_output_tensor()

    def get_output_tensor(self) -> Tensor:
        return Tensor._make(self._op().output, self._graph, self._name)

    def get_graph(self) -> Graph:
        assert self._graph is not None
        return self._graph

    def _attrs(self) -> Mapping[str, Any]:
        return self._op().attrs

    def _what(self) -> str:
        return f"op {self._name!r}"

    def __repr__(self) -> str:
        return f"<xir.Op named '{self._name}'>"

    def __str__(self) -> str:
        return f"{{name: '{self._name}', type: '{self.get_type()}', attrs: {self.get_attrs()}}}"

    __getattr__ = uncovered("Op", frozenset({"set_input_ops", "replace_input_ops", "infer_shape", "set_attr",
                                             "set_attrs"}))


class Subgraph(_Node):
    """A node of the subgraph tree: the root, the device subgraphs under it ("device": "USER", "DPU", "CPU") and
    their leaves. ``is_root``, ``is_leaf``, ``root`` and ``depth`` are properties, as in the binding."""

    _s: _x.Subgraph

    @classmethod
    def _make(cls, graph: Graph, s: _x.Subgraph) -> Subgraph:
        self = object.__new__(cls)
        self._graph, self._s, self._key = graph, s, (id(graph._c), "subgraph", id(s))
        return self

    def _wrap(self, s: _x.Subgraph) -> Subgraph:
        assert self._graph is not None
        return Subgraph._make(self._graph, s)

    def _op_names(self) -> Set[str]:
        return set(self._s.ops())

    def get_name(self) -> str:
        return self._s.name

    def get_op_num(self) -> int:
        return len(self._s.ops())

    def get_ops(self) -> Set[Op]:
        assert self._graph is not None
        return {Op._make(self._graph, n) for n in self._s.ops()}

    def toposort(self) -> List[Op]:
        """Its ops in the graph's topological order."""
        inside = self._op_names()
        assert self._graph is not None
        return [Op._make(self._graph, n) for n in self._content().graph.ops if n in inside]

    def has_op(self, op: Union[str, Op]) -> bool:
        return (op.get_name() if isinstance(op, Op) else op) in self._op_names()

    def get_tensor_producer(self, tensor: Tensor) -> Optional[Op]:
        producer = tensor.producer
        return producer if producer is not None and producer.get_name() in self._op_names() else None

    def get_input_tensors(self) -> Set[Tensor]:
        """The tensors its ops read from outside it (XIR: a set)."""
        return {Op._make(self._graph_(), op.name).get_output_tensor() for op in self._boundary()[0]}

    def get_output_tensors(self) -> Set[Tensor]:
        """The tensors its ops write that are read outside it or by nothing (XIR: a set)."""
        return {Op._make(self._graph_(), op.name).get_output_tensor() for op in self._boundary()[1]}

    def _boundary(self) -> Tuple[List[_x.Op], List[_x.Op]]:
        return _x.boundary(self._content().graph, self._s)

    def _graph_(self) -> Graph:
        assert self._graph is not None
        return self._graph

    def find_child_subgraph_by_op(self, op: Union[Op, str]) -> Optional[Subgraph]:
        """The child holding `op` (an Op or its name), None if none does."""
        name = op.get_name() if isinstance(op, Op) else op
        child = next((c for c in self._s.children if name in c.ops()), None)
        return None if child is None else self._wrap(child)

    def find_child_subgraph_by_op_name(self, name: str) -> Optional[Subgraph]:
        return self.find_child_subgraph_by_op(name)

    @property
    def is_root(self) -> bool:
        return self._s is self._content().graph.root

    @property
    def is_leaf(self) -> bool:
        return not self._s.children

    @property
    def root(self) -> Subgraph:
        return self._wrap(self._content().graph.root)

    @property
    def depth(self) -> int:
        n, s = 0, self._s
        while id(s) in self._content().parent:
            s, n = self._content().parent[id(s)], n + 1
        return n

    def get_parent(self) -> Optional[Subgraph]:
        parent = self._content().parent.get(id(self._s))
        return None if parent is None else self._wrap(parent)

    def get_children_num(self) -> int:
        return len(self._s.children)

    def get_children(self) -> Set[Subgraph]:
        return {self._wrap(c) for c in self._s.children}

    def is_child(self, op: Subgraph) -> bool:
        """Whether `op` (a Subgraph: the binding's argument is named so) is one of its children."""
        return isinstance(op, Subgraph) and any(op._s is c for c in self._s.children)

    def toposort_child_subgraph(self) -> List[Subgraph]:
        """Its children, each after those whose ops it reads (the file's order between independent ones)."""
        children = self._s.children
        at = {name: i for i, c in enumerate(children) for name in c.ops()}
        graph = self._content().graph
        needs = [{at[src] for name in c.ops() for src in graph.ops[name].input_ops() if at.get(src, i) != i}
                 for i, c in enumerate(children)]
        order: List[int] = []
        while len(order) < len(children):
            ready = next((i for i in range(len(children)) if i not in order and needs[i] <= set(order)), None)
            if ready is None:
                raise ModelFormatError(f"the children of subgraph {self.get_name()!r} depend on each other in a cycle")
            order.append(ready)
        return [self._wrap(children[i]) for i in order]

    def get_graph(self) -> Graph:
        return self._graph_()

    def _attrs(self) -> Mapping[str, Any]:
        return self._s.attrs

    def _what(self) -> str:
        return f"subgraph {self.get_name()!r}"

    def __repr__(self) -> str:
        return f"<xir.Subgraph named '{self.get_name()}'>"

    def __str__(self) -> str:
        return f"{{name: '{self.get_name()}', op_num: {self.get_op_num()}, attrs: {self.get_attrs()}}}"

    __getattr__ = uncovered("Subgraph", frozenset({"set_name", "create_child_subgraph", "merge_children",
                                                   "set_attr", "set_attrs", "save_as_dot"}))


class Graph(AttrsMixin):
    """A deserialized .xmodel. ``xir.Graph.deserialize(path)``; a new graph (``xir.Graph(name)``) cannot be built."""

    _c: _Content

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise InvalidArgumentError("xir.Graph(name) builds a new graph, which accel's Vitis AI shim does not cover; "
                                   "read a compiled model with xir.Graph.deserialize(path)")

    @staticmethod
    def deserialize(fname: Union[str, os.PathLike[str]]) -> Graph:
        """The graph of the .xmodel at `fname`: FileNotFoundError if there is none, ModelFormatError (saying what is
        wrong) for a file that is not one; XIR aborts the process for both."""
        if not isinstance(fname, (str, os.PathLike)):
            raise TypeError(f"deserialize() takes a file name (str), not {type(fname).__name__}")
        path = os.path.abspath(os.fspath(fname))
        with open(path, "rb") as f:
            data = f.read()
        try:
            graph = _x.read(data)
        except _x.XmodelError as e:
            raise ModelFormatError(f"cannot read {path}: {e}") from None
        self = object.__new__(Graph)
        self._c = _Content(path, data, graph)
        return self

    def get_name(self) -> str:
        return self._c.graph.name

    def get_op(self, name: str) -> Optional[Op]:
        return Op._make(self, name) if name in self._c.graph.ops else None

    def get_ops(self) -> Set[Op]:
        return {Op._make(self, n) for n in self._c.graph.ops}

    def get_op_num(self) -> int:
        return len(self._c.graph.ops)

    def get_tensors(self) -> Set[Tensor]:
        return {Op._make(self, n).get_output_tensor() for n in self._c.graph.ops}

    def get_tensor(self, name: str) -> Optional[Tensor]:
        producer = self._c.producer.get(name)
        return None if producer is None else Op._make(self, producer).get_output_tensor()

    def get_head_ops(self) -> Set[Op]:
        return {Op._make(self, n) for n, op in self._c.graph.ops.items() if not op.input_ops()}

    def get_tail_ops(self) -> Set[Op]:
        return {Op._make(self, n) for n, users in self._c.consumers.items() if not users}

    def get_tensor_producer(self, tensor: Tensor) -> Optional[Op]:
        return self.get_op(self._c.producer.get(tensor.name, "")) if isinstance(tensor, Tensor) else None

    def toposort(self) -> List[Op]:
        return [Op._make(self, n) for n in self._c.graph.ops]

    def get_root_subgraph(self) -> Subgraph:
        return Subgraph._make(self, self._c.graph.root)

    def get_leaf_subgraph(self, op: Op) -> Optional[Subgraph]:
        leaf = self._c.leaf.get(op.get_name()) if isinstance(op, Op) else None
        return None if leaf is None else Subgraph._make(self, leaf)

    def serialize(self, fname: Union[str, os.PathLike[str]]) -> None:
        """Writes the graph to `fname`: the bytes read (the shim changes no graph)."""
        with open(os.fspath(fname), "wb") as f:
            f.write(self._c.data)

    def _attrs(self) -> Mapping[str, Any]:
        return self._c.graph.attrs

    def _what(self) -> str:
        return f"graph {self.get_name()!r}"

    def __repr__(self) -> str:
        return f"<xir.Graph named '{self.get_name()}'>"

    def __str__(self) -> str:
        return f"{{name: '{self.get_name()}', op_num: {self.get_op_num()}, attrs: {self.get_attrs()}}}"

    __getattr__ = uncovered("Graph", frozenset({"create_op", "create_const_op", "remove_op", "infer_shape",
                                                "save_as_dot", "save_as_image", "set_attr", "set_attrs"}))

