"""The container of a Horizon RDK ``.bin`` (hb_mapper's output for the X3/X5 BPU): one protobuf message, read and
written here. Horizon publishes no schema; the facts below are those of decoded files (shared/vendor-apis.md):

- field 1 and field 2: versions (their meaning is not public: shown as they are);
- field 5, repeated: a graph, numbered as ONNX's GraphProto (nodes, initializers, inputs, outputs, value_info), so
  ``onnx.GraphProto`` parses it; a node of op_type ``BPU`` per compiled part, whose code and weights are the string
  initializer ``PACKED_HBM_MODEL`` (the hbm, opaque: only Horizon's runtime executes it), CPU nodes after it;
- field 6, repeated: metadata pairs {1 key, 2 value}, hb_mapper's settings (MARCH, the versions of the tools, the
  inputs' runtime and training types, layouts, normalization...).

Declared through protobuf's descriptor API, as ``xir/schema.py`` declares XIR's messages: one declaration gives the
parser and the serializer. A field whose wire type differs from the declaration lands in the message's unknown
fields (protobuf's rule), from which ``read`` still reports it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

import onnx
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, unknown_fields
from google.protobuf.message import DecodeError

from ..errors import CompileError

__all__ = ["BinFormatError", "Container", "PACKED_HBM_MODEL", "MAGICS", "read", "write"]

#: The initializer that holds a BPU node's compiled part.
PACKED_HBM_MODEL = "PACKED_HBM_MODEL"

#: The hbm's first bytes -> (hb_mapper's MARCH, the chip it runs on).
MAGICS = {b"#X2Ahbm": ("bernoulli2", "RDK X3"), b"#B25hbm": ("bayes", "J5"), b"#B2Ehbm": ("bayes-e", "RDK X5")}


class BinFormatError(CompileError):
    """Bytes that are not a Horizon .bin container, or one whose parts do not fit together."""


def _messages() -> Tuple[Any, Any]:
    f = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="accel_horizon_bin.proto", package="accel_horizon_bin",
                                               syntax="proto2")
    meta = proto.message_type.add(name="Metadata")
    meta.field.add(name="key", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    meta.field.add(name="value", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    top = proto.message_type.add(name="Container")
    top.field.add(name="version_1", number=1, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    top.field.add(name="version_2", number=2, type=f.TYPE_STRING, label=f.LABEL_OPTIONAL)
    top.field.add(name="graph", number=5, type=f.TYPE_BYTES, label=f.LABEL_REPEATED)
    top.field.add(name="metadata", number=6, type=f.TYPE_MESSAGE, label=f.LABEL_REPEATED,
                  type_name=".accel_horizon_bin.Metadata")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return (message_factory.GetMessageClass(pool.FindMessageTypeByName("accel_horizon_bin.Container")),
            message_factory.GetMessageClass(pool.FindMessageTypeByName("accel_horizon_bin.Metadata")))


_CONTAINER, _METADATA = _messages()


@dataclass
class Container:
    """A .bin's contents: its versions (fields 1 and 2, as text; a number where the file holds one), its graphs
    (one per model) and its metadata, in file order (a key written twice keeps its last value, as a map would)."""

    graphs: List[onnx.GraphProto]
    metadata: Dict[str, str] = field(default_factory=dict)
    versions: Tuple[str, str] = ("", "")


def read(data: bytes) -> Container:
    """The container in ``data``; BinFormatError when it is not one."""
    message = _CONTAINER()
    try:
        message.ParseFromString(bytes(data))
    except (DecodeError, RuntimeError, ValueError) as e:
        raise BinFormatError(f"not a Horizon .bin (not a protobuf message: {e})") from None
    versions = [message.version_1, message.version_2]
    for u in unknown_fields.UnknownFieldSet(message):
        if u.field_number in (1, 2) and u.wire_type == 0:
            versions[u.field_number - 1] = str(u.data)
    if not message.graph:
        raise BinFormatError("not a Horizon .bin: it holds no graph (field 5)")
    graphs = []
    for i, raw in enumerate(message.graph):
        try:
            graphs.append(onnx.GraphProto.FromString(raw))
        except DecodeError as e:
            raise BinFormatError(f"graph {i}: not an ONNX-numbered graph: {e}") from None
    return Container(graphs, {m.key: m.value for m in message.metadata}, (versions[0], versions[1]))


def write(container: Container) -> bytes:
    """The .bin bytes of ``container`` (what the stand-in's packer writes: Horizon's container, its own hbm)."""
    message = _CONTAINER(version_1=container.versions[0], version_2=container.versions[1])
    message.graph.extend(g.SerializeToString() for g in container.graphs)
    message.metadata.extend(_METADATA(key=k, value=v) for k, v in container.metadata.items())
    return bytes(message.SerializeToString())
