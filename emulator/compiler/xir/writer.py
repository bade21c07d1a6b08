"""Writes a Graph (reader.py's objects) as a serialized XIR graph, the bytes of a Vitis AI ``.xmodel``: what the VART
stand-in's packer and the tests make real-format files with. Attribute kinds are XIR's for the values given (as
vai_c_xir writes them): bool, int32 (int64 or uint64 past its range; uint64 for workloads and the DPU fingerprint),
float, string, bytes, their lists, and string-keyed dicts of strings, bytes, int32 or int32 lists."""
from __future__ import annotations

from typing import Any, Dict

from . import schema
from .reader import Graph, Op, Subgraph, Tensor

__all__ = ["write"]

_UINT64_KEYS = frozenset({"workload", "workload_on_arch", "dpu_fingerprint"})
_CODES = {name: code for code, name in schema.DATA_TYPES.items()}
_I32 = (-(1 << 31), (1 << 31) - 1)


def _int_kind(key: str, values) -> str:
    if key in _UINT64_KEYS:
        return "uint64"
    if all(_I32[0] <= v <= _I32[1] for v in values):
        return "int32"
    return "uint64" if all(v >= 0 for v in values) else "int64"


def _set(target: Any, key: str, value: Any) -> None:
    """Sets AttrValue `target` to `value`, of the kind its Python type (and `key`) gives."""
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, int):
        setattr(target, f"{_int_kind(key, [value])}_value", value)
    elif isinstance(value, float):
        target.float_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, (bytes, bytearray)):
        target.bytes_value.value = bytes(value)
    elif isinstance(value, (list, tuple)):
        items = list(value)
        if all(isinstance(v, bool) for v in items) and items:
            target.bool_vec_value.value.extend(items)
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            getattr(target, f"{_int_kind(key, items)}_vec_value").value.extend(items)
        elif all(isinstance(v, float) for v in items):
            target.float_vec_value.value.extend(items)
        elif all(isinstance(v, str) for v in items):
            target.string_vec_value.value.extend(items)
        elif all(isinstance(v, (bytes, bytearray)) for v in items):
            for v in items:
                target.bytes_vec_value.value.add().value = bytes(v)
        else:
            raise TypeError(f"attribute {key!r}: a list of mixed or unsupported items")
    elif isinstance(value, dict):
        items = list(value.values())
        if all(isinstance(v, str) for v in items):
            target.map_string_2_string_value.value.update(value)
        elif all(isinstance(v, (bytes, bytearray)) for v in items):
            m = target.map_string_2_bytes_value.value
            for k, v in value.items():
                m[k].value = bytes(v)
        elif all(isinstance(v, int) and not isinstance(v, bool) for v in items):
            target.map_string_2_int32_value.value.update(value)
        elif all(isinstance(v, list) for v in items):
            m = target.map_string_2_int32_vec_value.value
            for k, v in value.items():
                m[k].value.extend(v)
        else:
            raise TypeError(f"attribute {key!r}: a dict of mixed or unsupported values")
    else:
        raise TypeError(f"attribute {key!r}: {type(value).__name__} values are not XIR attributes")


def _attrs(target: Any, attrs: Dict[str, Any]) -> None:
    for key, value in attrs.items():
        _set(target[key], key, value)


def _tensor(target: Any, t: Tensor) -> None:
    target.tensor_name = t.name
    target.tensor_dim.extend(t.shape)
    target.data_type = _CODES[t.data_type]
    target.tensor_bit_width = t.bit_width
    _attrs(target.tensor_attr, t.attrs)


def _op(target: Any, op: Op) -> None:
    target.op_name = op.name
    target.op_type = op.type
    _attrs(target.op_attr, op.attrs)
    for arg, names in op.inputs.items():
        a = target.args.add()
        a.arg_name = arg
        a.arg_ops.extend(names)
    _tensor(target.output_tensor, op.output)


def _subgraph(target: Any, s: Subgraph) -> None:
    target.subgraph_name = s.name
    target.op_name.extend(s.leaf_ops)
    _attrs(target.subg_attr, s.attrs)
    for c in s.children:
        _subgraph(target.subg_child.add(), c)


def write(graph: Graph) -> bytes:
    """The bytes of `graph` as a .xmodel (ops in the graph's order, which reader.read keeps)."""
    message = schema.Graph()
    message.graph_name = graph.name
    for op in graph.ops.values():
        _op(message.op_node.add(), op)
    _subgraph(message.subg_root, graph.root)
    _attrs(message.graph_attr, graph.attrs)
    return message.SerializeToString()
