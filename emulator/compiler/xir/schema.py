"""XIR's serialized graph (a Vitis AI ``.xmodel``) as protobuf messages, declared here from the facts of the published
schema (Xilinx/Vitis-AI, src/vai_runtime/xir/src/xir/proto/graph_proto_v2.proto, package ``serial_v2``): message and
field names, numbers and types. The messages are built at import through protobuf's descriptor API, so that the one
declaration below gives both the parser (reader.py) and the serializer (writer.py) and no generated code is kept.

The file is one ``Graph`` message, with no header or magic. What each message holds:
- Graph: graph_name, op_node (every op, in topological order), subg_root (the subgraph tree), graph_attr;
- OPNode: op_name, op_type, op_attr, args (OpArg: arg_name and the names of the ops it reads), output_tensor;
- Tensor: tensor_name, tensor_dim, data_type (DATA_TYPES), tensor_bit_width, tensor_attr;
- SubGraph: subgraph_name, op_name (its ops, for a leaf), subg_attr, subg_child;
- AttrValue: one of the scalars, strings, bytes, their vectors and string-keyed maps (ATTR_KINDS).
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["ATTR_KINDS", "DATA_TYPES", "AttrValue", "Graph", "OPNode", "SubGraph", "Tensor"]

_F: Any = descriptor_pb2.FieldDescriptorProto
_SCALAR = {"bool": _F.TYPE_BOOL, "int32": _F.TYPE_INT32, "uint32": _F.TYPE_UINT32, "int64": _F.TYPE_INT64,
           "uint64": _F.TYPE_UINT64, "float": _F.TYPE_FLOAT, "double": _F.TYPE_DOUBLE, "string": _F.TYPE_STRING,
           "bytes": _F.TYPE_BYTES}

#: xir::DataType::Type, the Tensor's data_type.
DATA_TYPES = {0: "INT", 1: "UINT", 2: "XINT", 3: "XUINT", 4: "FLOAT", 5: "BFLOAT"}

# The value kinds of AttrValue's oneof, by field number: (field name, what it holds). A vector is a message with
# one repeated field `value`; a map one with a map field `value`, string keys.
_VECTORS = [("bool", "BoolVec"), ("int32", "Int32Vec"), ("uint32", "Uint32Vec"), ("int64", "Int64Vec"),
            ("uint64", "Uint64Vec"), ("float", "FloatVec"), ("double", "DoubleVec"), ("string", "StringVec"),
            ("bytes", "BytesVec")]
_MAPS = [("int32", "MapString2Int32"), ("uint32", "MapString2Uint32"), ("int64", "MapString2Int64"),
         ("uint64", "MapString2Uint64"), ("string", "MapString2String"), ("bytes", "MapString2Bytes"),
         ("int32_vec", "MapString2Int32Vec"), ("uint32_vec", "MapString2Uint32Vec"),
         ("int64_vec", "MapString2Int64Vec"), ("uint64_vec", "MapString2Uint64Vec"),
         ("string_vec", "MapString2StringVec")]

#: AttrValue's oneof: field number -> (field name, kind), kind one of "bool", "int32", ..., "bytes" (a scalar),
#: "<scalar>_vec" (a list) or "map_<scalar>" / "map_<scalar>_vec" (a dict with str keys).
ATTR_KINDS: Dict[int, Tuple[str, str]] = {}


def _field(name: str, number: int, kind: Any, repeated: bool = False, type_name: str = "",
           oneof: int = -1) -> Any:
    f = _F(name=name, number=number, label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        f.type = _F.TYPE_MESSAGE
        f.type_name = f".serial_v2.{type_name}"
    else:
        f.type = kind
    if oneof >= 0:
        f.oneof_index = oneof
    return f


def _message(file: descriptor_pb2.FileDescriptorProto, name: str, fields: List[Any]) -> descriptor_pb2.DescriptorProto:
    m = file.message_type.add(name=name)
    m.field.extend(fields)
    return m


def _map_field(m: descriptor_pb2.DescriptorProto, name: str, number: int, value: Any) -> None:
    """A map<string, value> field of message `m`: protobuf's entry message (key 1, value 2) nested in it."""
    entry_name = "".join(p.capitalize() for p in name.split("_")) + "Entry"
    entry = m.nested_type.add(name=entry_name)
    entry.options.map_entry = True
    entry.field.extend([_field("key", 1, _F.TYPE_STRING), value])
    f = _F(name=name, number=number, label=_F.LABEL_REPEATED, type=_F.TYPE_MESSAGE)
    f.type_name = f".serial_v2.{m.name}.{entry_name}"
    m.field.append(f)


def _value_field(kind: str) -> Any:
    """The `value` (number 2) of a map entry holding `kind`: a scalar, or a vector message."""
    if kind.endswith("_vec"):
        return _field("value", 2, None, type_name=dict(_VECTORS)[kind[:-4]])
    if kind == "bytes":
        return _field("value", 2, None, type_name="Bytes")
    return _field("value", 2, _SCALAR[kind])


def _declare() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(name="accel_xir_graph_v2.proto", package="serial_v2", syntax="proto3")
    _message(file, "Bytes", [_field("value", 1, _F.TYPE_BYTES)])
    for scalar, name in _VECTORS:
        if scalar == "bytes":
            _message(file, name, [_field("value", 1, None, repeated=True, type_name="Bytes")])
        else:
            _message(file, name, [_field("value", 1, _SCALAR[scalar], repeated=True)])
    for kind, name in _MAPS:
        _map_field(_message(file, name, []), "value", 1, _value_field(kind))

    attr = _message(file, "AttrValue", [])
    attr.oneof_decl.add(name="value")
    number = 4
    for scalar in ("bool", "int32", "uint32", "int64", "uint64", "float", "double", "string"):
        attr.field.append(_field(f"{scalar}_value", number, _SCALAR[scalar], oneof=0))
        ATTR_KINDS[number] = (f"{scalar}_value", scalar)
        number += 1
    attr.field.append(_field("bytes_value", 12, None, type_name="Bytes", oneof=0))
    ATTR_KINDS[12] = ("bytes_value", "bytes")
    number = 13
    for scalar, name in _VECTORS:
        attr.field.append(_field(f"{scalar}_vec_value", number, None, type_name=name, oneof=0))
        ATTR_KINDS[number] = (f"{scalar}_vec_value", f"{scalar}_vec")
        number += 1
    for kind, name in _MAPS:
        attr.field.append(_field(f"map_string_2_{kind}_value", number, None, type_name=name, oneof=0))
        ATTR_KINDS[number] = (f"map_string_2_{kind}_value", f"map_{kind}")
        number += 1

    _message(file, "OpArg", [_field("arg_name", 1, _F.TYPE_STRING),
                             _field("arg_ops", 2, _F.TYPE_STRING, repeated=True)])
    tensor = _message(file, "Tensor", [_field("tensor_name", 1, _F.TYPE_STRING),
                                       _field("tensor_dim", 2, _F.TYPE_UINT32, repeated=True),
                                       _field("data_type", 5, _F.TYPE_INT32),
                                       _field("tensor_bit_width", 6, _F.TYPE_INT32)])
    _map_field(tensor, "tensor_attr", 10, _field("value", 2, None, type_name="AttrValue"))
    op = _message(file, "OPNode", [_field("op_name", 1, _F.TYPE_STRING), _field("op_type", 2, _F.TYPE_STRING)])
    _map_field(op, "op_attr", 3, _field("value", 2, None, type_name="AttrValue"))
    op.field.extend([_field("args", 4, None, repeated=True, type_name="OpArg"),
                     _field("output_tensor", 5, None, type_name="Tensor")])
    sub = _message(file, "SubGraph", [_field("subgraph_name", 1, _F.TYPE_STRING),
                                      _field("op_name", 3, _F.TYPE_STRING, repeated=True)])
    _map_field(sub, "subg_attr", 5, _field("value", 2, None, type_name="AttrValue"))
    sub.field.append(_field("subg_child", 10, None, repeated=True, type_name="SubGraph"))
    graph = _message(file, "Graph", [_field("graph_name", 1, _F.TYPE_STRING),
                                     _field("op_node", 5, None, repeated=True, type_name="OPNode"),
                                     _field("subg_root", 10, None, type_name="SubGraph")])
    _map_field(graph, "graph_attr", 11, _field("value", 2, None, type_name="AttrValue"))
    # op_defs (101), the ops' definitions, is not declared: the reader knows the ops it takes, and protobuf keeps
    # the field as an unknown one.
    return file


def _classes() -> Dict[str, Any]:
    pool = descriptor_pool.DescriptorPool()  # a pool of its own: nothing else's serial_v2 can clash with it
    pool.Add(_declare())
    get = getattr(message_factory, "GetMessageClass", None)
    if get is None:  # protobuf < 4.21
        factory = message_factory.MessageFactory(pool)
        return {n: factory.GetPrototype(pool.FindMessageTypeByName(f"serial_v2.{n}"))
                for n in ("Graph", "OPNode", "Tensor", "SubGraph", "AttrValue")}
    return {n: get(pool.FindMessageTypeByName(f"serial_v2.{n}"))
            for n in ("Graph", "OPNode", "Tensor", "SubGraph", "AttrValue")}


_C = _classes()
Graph = _C["Graph"]
OPNode = _C["OPNode"]
Tensor = _C["Tensor"]
SubGraph = _C["SubGraph"]
AttrValue = _C["AttrValue"]
