"""Reads a serialized XIR graph (a Vitis AI ``.xmodel``) into plain Python objects, checking what a reader must not
trust: the protobuf itself, names (present, unique, every argument an op of the graph), the graph acyclic, tensor
shapes and types, attribute kinds, the subgraph tree (every leaf op an op of the graph, in one leaf only) and sizes.
Every refusal is an XmodelError naming the op, tensor, subgraph or attribute.

    graph = read(data)          # bytes of a .xmodel
    graph.ops["conv1"].attrs["kernel"], graph.ops["conv1"].output.fix_point
    graph.root.children         # Subgraph tree; .device, .attrs, .ops (every op below it)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..errors import CompileError
from . import schema

__all__ = ["MAX_BYTES", "Graph", "Op", "Subgraph", "Tensor", "UnsupportedXmodelError", "XmodelError", "attr", "read"]

#: The largest file read (protobuf's own limit is 2 GiB).
MAX_BYTES = (2 << 30) - 1
_MAX_RANK = 8
_MAX_DEPTH = 16  # subgraph nesting: vai_c_xir writes root -> device subgraphs -> their layers
_MAX_ELEMENTS = 1 << 34


class XmodelError(CompileError):
    """A .xmodel the reader refuses (not XIR's serialized graph, or an inconsistent one), or one the front end cannot
    run; the message names the op, tensor, subgraph or attribute."""


class UnsupportedXmodelError(XmodelError):
    """A valid .xmodel the emulator cannot run as its device computes: an op type, an attribute value or a DPU family
    it does not take (named, with the subgraph)."""


@dataclass(frozen=True)
class Tensor:
    """An op's output tensor: name, shape (the dims as stored: NHWC for a DPU's feature maps), XIR data type
    ("XINT", "FLOAT", ...), bit width and attributes (fix_point, ddr_addr, reg_id, ...)."""

    name: str
    shape: Tuple[int, ...]
    data_type: str
    bit_width: int
    attrs: Dict[str, Any]

    @property
    def fix_point(self) -> Optional[int]:
        """The fix point of a fixed-point tensor (real = q * 2^-fix_point), None where it has none."""
        fp = self.attrs.get("fix_point")
        return fp if isinstance(fp, int) and not isinstance(fp, bool) else None

    @property
    def type_name(self) -> str:
        """As XIR prints it: "xint8", "float32", ..."""
        return f"{self.data_type.lower()}{self.bit_width}"


@dataclass(frozen=True)
class Op:
    """One op: name, type ("conv2d-fix", ...), attributes, its inputs by argument name (each a list of op names, in
    order) and its output tensor."""

    name: str
    type: str
    attrs: Dict[str, Any]
    inputs: Dict[str, List[str]]
    output: Tensor

    def input_ops(self) -> List[str]:
        """Every op this one reads, in argument order."""
        return [name for names in self.inputs.values() for name in names]


@dataclass
class Subgraph:
    """A node of the subgraph tree: name, attributes (device, dpu_name, reg_id_to_parameter_value, ...), its own ops
    (a leaf's) and its children."""

    name: str
    attrs: Dict[str, Any]
    leaf_ops: List[str]
    children: List[Subgraph] = field(default_factory=list)

    @property
    def device(self) -> str:
        """Its "device" attribute ("USER", "DPU", "CPU"), or "" where it has none."""
        d = self.attrs.get("device", "")
        return d if isinstance(d, str) else ""

    def ops(self) -> List[str]:
        """Every op below it (its own for a leaf), in the tree's order."""
        if not self.children:
            return list(self.leaf_ops)
        return [name for c in self.children for name in c.ops()]

    def walk(self) -> Iterator[Subgraph]:
        """This subgraph and every one below it, depth first."""
        yield self
        for c in self.children:
            yield from c.walk()


@dataclass
class Graph:
    """A whole .xmodel: its name, ops by name (in topological order), the subgraph tree's root, graph attributes."""

    name: str
    ops: Dict[str, Op]
    root: Subgraph
    attrs: Dict[str, Any]

    def subgraphs(self, device: str) -> List[Subgraph]:
        """The root's children on `device` ("DPU", "CPU", "USER"), in the file's order."""
        return [c for c in self.root.children if c.device == device]

    def consumers(self) -> Dict[str, List[str]]:
        """For each op, the ops that read its output (in topological order)."""
        out: Dict[str, List[str]] = {name: [] for name in self.ops}
        for op in self.ops.values():
            for src in dict.fromkeys(op.input_ops()):
                out[src].append(op.name)
        return out


_KIND_NAMES = {bool: "a bool", int: "an int", float: "a float", str: "a string", bytes: "bytes", list: "a list",
               dict: "a map"}


def attr(where: str, attrs: Dict[str, Any], key: str, kind: type, default: Any = None) -> Any:
    """attrs[key] if it is of `kind` (an int is not a bool; a float may be given as an int), `default` when absent;
    XmodelError naming `where` and the key otherwise."""
    if key not in attrs:
        return default
    v = attrs[key]
    if kind is float and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, kind) and not (kind is int and isinstance(v, bool)):
        return v
    raise XmodelError(f"{where}: attribute {key!r} is {_KIND_NAMES.get(type(v), type(v).__name__)}, not "
                      f"{_KIND_NAMES.get(kind, kind.__name__)}")


def _attr_value(v: Any, where: str) -> Any:
    """The Python value of an AttrValue: int, float, bool, str, bytes, a list of them, or a dict of str to them."""
    which = v.WhichOneof("value")
    if which is None:
        raise XmodelError(f"{where} has no value")
    x = getattr(v, which)
    if which == "bytes_value":
        return bytes(x.value)
    if which.startswith("map_string_2_"):
        if which.endswith("_vec_value"):
            return {key: list(item.value) for key, item in x.value.items()}
        if which == "map_string_2_bytes_value":
            return {key: bytes(item.value) for key, item in x.value.items()}
        return dict(x.value)
    if which == "bytes_vec_value":
        return [bytes(b.value) for b in x.value]
    if which.endswith("_vec_value"):
        return list(x.value)
    return x


def _attrs(m: Any, where: str) -> Dict[str, Any]:
    return {key: _attr_value(value, f"{where}: attribute {key!r}") for key, value in m.items()}


def _tensor(t: Any, op: str) -> Tensor:
    name = t.tensor_name
    where = f"op {op!r}: output tensor {name!r}"
    if not name:
        raise XmodelError(f"op {op!r}: its output tensor has no name")
    if t.data_type not in schema.DATA_TYPES:
        raise XmodelError(f"{where}: data type {t.data_type} is none of XIR's "
                          f"({', '.join(schema.DATA_TYPES.values())})")
    if t.tensor_bit_width not in (1, 2, 4, 8, 16, 32, 64):
        raise XmodelError(f"{where}: bit width {t.tensor_bit_width}")
    dims = tuple(int(d) for d in t.tensor_dim)
    if not 0 < len(dims) <= _MAX_RANK or any(d <= 0 for d in dims):
        raise XmodelError(f"{where}: shape {list(dims)} (XIR's tensors have 1 to {_MAX_RANK} dims, each > 0)")
    n = 1
    for d in dims:
        n *= d
    if n > _MAX_ELEMENTS:
        raise XmodelError(f"{where}: shape {list(dims)} has {n} elements, more than a model can hold")
    attrs = _attrs(t.tensor_attr, where)
    fp = attrs.get("fix_point")
    if fp is not None and (isinstance(fp, bool) or not isinstance(fp, int)):
        raise XmodelError(f"{where}: attribute 'fix_point' is a {type(fp).__name__}, not an int")
    return Tensor(name, dims, schema.DATA_TYPES[t.data_type], t.tensor_bit_width, attrs)


def _op(node: Any) -> Op:
    name = node.op_name
    if not name:
        raise XmodelError(f"an op of type {node.op_type!r} has no name")
    if not node.op_type:
        raise XmodelError(f"op {name!r} has no type")
    if not node.HasField("output_tensor"):
        raise XmodelError(f"op {name!r} ({node.op_type}) has no output tensor")
    inputs: Dict[str, List[str]] = {}
    for arg in node.args:
        if arg.arg_name in inputs:
            raise XmodelError(f"op {name!r} ({node.op_type}): argument {arg.arg_name!r} given twice")
        inputs[arg.arg_name] = list(arg.arg_ops)
    return Op(name, node.op_type, _attrs(node.op_attr, f"op {name!r}"), inputs, _tensor(node.output_tensor, name))


def _topological(ops: Dict[str, Op]) -> Dict[str, Op]:
    """The ops in an order where each follows the ops it reads (the file's order where it is one); a cycle raises."""
    order: Dict[str, Op] = {}
    state: Dict[str, int] = {}  # 1: being visited, 2: done
    for start in ops:
        if state.get(start) == 2:
            continue
        stack: List[Tuple[str, Iterator[str]]] = [(start, iter(ops[start].input_ops()))]
        state[start] = 1
        while stack:
            name, pending = stack[-1]
            nxt = next(pending, None)
            if nxt is None:
                stack.pop()
                state[name] = 2
                order[name] = ops[name]
            elif state.get(nxt) == 1:
                raise XmodelError(f"the graph has a cycle through ops {nxt!r} and {name!r}")
            elif state.get(nxt) is None:
                state[nxt] = 1
                stack.append((nxt, iter(ops[nxt].input_ops())))
    return order


def _subgraph(s: Any, ops: Dict[str, Op], owner: Dict[str, str], depth: int) -> Subgraph:
    name = s.subgraph_name
    if depth > _MAX_DEPTH:
        raise XmodelError(f"subgraph {name!r} is nested {depth} deep (at most {_MAX_DEPTH})")
    sub = Subgraph(name, _attrs(s.subg_attr, f"subgraph {name!r}"), list(s.op_name))
    device = sub.attrs.get("device")
    if device is not None and not isinstance(device, str):
        raise XmodelError(f"subgraph {name!r}: attribute 'device' is a {type(device).__name__}, not a string")
    if s.subg_child and s.op_name:
        raise XmodelError(f"subgraph {name!r} has both children and ops of its own")
    for op in s.op_name:
        if op not in ops:
            raise XmodelError(f"subgraph {name!r} lists op {op!r}, which the graph does not have")
        if op in owner:
            raise XmodelError(f"op {op!r} is in two subgraphs: {owner[op]!r} and {name!r}")
        owner[op] = name
    sub.children = [_subgraph(c, ops, owner, depth + 1) for c in s.subg_child]
    names = [c.name for c in sub.children]
    if len(set(names)) != len(names):
        raise XmodelError(f"subgraph {name!r} has two children of one name")
    return sub


def read(data: bytes) -> Graph:
    """The graph of a .xmodel's bytes; XmodelError for anything else (with protobuf's own reason for a file that is
    not one)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"read() takes the bytes of a .xmodel, not {type(data).__name__}")
    if len(data) > MAX_BYTES:
        raise XmodelError(f"the file is {len(data)} bytes, more than a serialized XIR graph can be")
    message = schema.Graph()
    try:
        message.ParseFromString(bytes(data))
    except Exception as e:  # protobuf's DecodeError, and what its C++ parser raises for deep nesting
        raise XmodelError(f"not a serialized XIR graph (a Vitis AI .xmodel): {e}") from None
    if not message.op_node:
        raise XmodelError("not a serialized XIR graph (a Vitis AI .xmodel): it has no ops")
    ops: Dict[str, Op] = {}
    tensors: Dict[str, str] = {}
    for node in message.op_node:
        op = _op(node)
        if op.name in ops:
            raise XmodelError(f"two ops are named {op.name!r}")
        if op.output.name in tensors:
            raise XmodelError(f"ops {tensors[op.output.name]!r} and {op.name!r} both write tensor {op.output.name!r}")
        ops[op.name] = op
        tensors[op.output.name] = op.name
    for op in ops.values():
        for arg, names in op.inputs.items():
            for src in names:
                if src not in ops:
                    raise XmodelError(f"op {op.name!r} ({op.type}): argument {arg!r} reads op {src!r}, which the graph "
                                      f"does not have")
    ops = _topological(ops)
    if not message.HasField("subg_root"):
        raise XmodelError(f"graph {message.graph_name!r} has no subgraph tree (an XIR graph has at least its root)")
    root = _subgraph(message.subg_root, ops, {}, 0)
    return Graph(message.graph_name, ops, root, _attrs(message.graph_attr, "the graph"))
