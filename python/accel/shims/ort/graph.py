"""What an onnxruntime session reports about its model before running it, read from the ONNX file itself (accel's
compiled model has no symbolic dims and no metadata): NodeArg (name, shape with symbolic dims, type string),
ModelMetadata, the overridable initializers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from . import errors

__all__ = ["Dim", "NodeArg", "ModelMetadata", "Signature", "read", "type_name", "dtype_type_name"]

#: A dim as onnxruntime gives it: an int, the symbol's name, or None where the model says nothing.
Dim = Union[int, str, None]

# ONNX element types that NumPy has, as onnxruntime's Python API converts them.
_NUMPY = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
          8: np.object_, 9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
          14: np.complex64, 15: np.complex128}


class NodeArg:
    """onnxruntime.NodeArg: one input or output of the model, as the model declares it."""

    def __init__(self, name: str, type: str, shape: Optional[List[Dim]]) -> None:
        self.name, self.type, self.shape = name, type, shape

    def __str__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"

    __repr__ = __str__


class ModelMetadata:
    """onnxruntime.ModelMetadata: the model's own description (its ModelProto fields and metadata_props)."""

    def __init__(self, producer_name: str, graph_name: str, domain: str, description: str, graph_description: str,
                 version: int, custom_metadata_map: Dict[str, str]) -> None:
        self.producer_name, self.graph_name, self.domain = producer_name, graph_name, domain
        self.description, self.graph_description, self.version = description, graph_description, version
        self.custom_metadata_map = custom_metadata_map


@dataclass
class Signature:
    inputs: List[NodeArg]                        # the graph inputs that are not initializers, in order
    outputs: List[NodeArg]
    overridable: List[NodeArg]                   # graph inputs with an initializer (a default value)
    meta: ModelMetadata
    dtypes: Dict[str, Optional[np.dtype]]        # each input's NumPy dtype (None: not a tensor NumPy has)
    dims: Dict[str, Optional[List[Dim]]]         # each input's dims (None: the model gives no shape, any rank)
    denotations: Dict[str, List[str]]            # each input's dims' denotations ("" where none)


def type_name(t: Any) -> str:
    """onnxruntime's spelling of an ONNX TypeProto: "tensor(float)", "seq(tensor(int64))", "map(int64,...)"."""
    from onnx import TensorProto

    kind = t.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        elem = getattr(t, kind).elem_type
        name = TensorProto.DataType.Name(elem).lower() if elem in TensorProto.DataType.values() else str(elem)
        return f"{'tensor' if kind == 'tensor_type' else 'sparse_tensor'}({name})"
    if kind == "sequence_type":
        return f"seq({type_name(t.sequence_type.elem_type)})"
    if kind == "optional_type":
        return f"optional({type_name(t.optional_type.elem_type)})"
    if kind == "map_type":
        key = TensorProto.DataType.Name(t.map_type.key_type).lower()
        return f"map({key},{type_name(t.map_type.value_type)})"
    return "unknown"


def dtype_type_name(dtype: np.dtype) -> str:
    """The type name onnxruntime gives an array of ``dtype`` in its messages: float64 is "tensor(double)"."""
    from onnx import TensorProto

    for elem, np_type in _NUMPY.items():
        if np.dtype(np_type) == dtype and dtype != np.object_:
            return f"tensor({TensorProto.DataType.Name(elem).lower()})"
    return "tensor(string)" if dtype.kind in "OUS" else f"tensor({dtype})"


def _dims(t: Any) -> Optional[List[Dim]]:
    kind = t.WhichOneof("value")
    if kind not in ("tensor_type", "sparse_tensor_type") or not getattr(t, kind).HasField("shape"):
        return None
    out: List[Dim] = []
    for d in getattr(t, kind).shape.dim:
        out.append(int(d.dim_value) if d.HasField("dim_value") else (d.dim_param if d.HasField("dim_param") else None))
    return out


def _arg(v: Any) -> NodeArg:
    shape = _dims(v.type)
    return NodeArg(v.name, type_name(v.type), shape if shape is not None else [])


def read(model_bytes: Optional[bytes], path: Optional[str]) -> Signature:
    """The signature of the ONNX model in ``model_bytes``, or in the file ``path`` (its external weights left
    where they are). Raises NoSuchFile, InvalidProtobuf (not an ONNX model), InvalidGraph (no graph)."""
    import onnx

    try:
        if path is not None:
            model = onnx.load(path, load_external_data=False)
        else:
            model = onnx.load_model_from_string(model_bytes or b"")
    except FileNotFoundError:
        raise errors.NoSuchFile(f"Load model from {path} failed:Load model {path} failed. File doesn't exist") from None
    except Exception as e:  # noqa: BLE001 (protobuf's DecodeError and what onnx wraps it in)
        raise errors.InvalidProtobuf("Failed to load model because protobuf parsing failed."
                                     f" ({type(e).__name__}: {e})") from e
    if model.ir_version == 0 or not model.HasField("graph"):
        raise errors.InvalidProtobuf("Failed to load model because protobuf parsing failed. (no ONNX graph in it)")
    g = model.graph
    initialized = {t.name for t in g.initializer} | {s.values.name for s in g.sparse_initializer}
    inputs = [v for v in g.input if v.name not in initialized]
    outputs = [_arg(v) for v in g.output]
    if any(not v.HasField("type") or _dims(v.type) is None for v in g.output):
        outputs = _inferred_outputs(model, outputs)
    return Signature(
        inputs=[_arg(v) for v in inputs], outputs=outputs,
        overridable=[_arg(v) for v in g.input if v.name in initialized],
        meta=ModelMetadata(model.producer_name, g.name, model.domain, model.doc_string, g.doc_string,
                           int(model.model_version), {p.key: p.value for p in model.metadata_props}),
        dtypes={v.name: _numpy_dtype(v.type) for v in inputs}, dims={v.name: _dims(v.type) for v in inputs},
        denotations={v.name: _denotations(v.type) for v in inputs})


def _inferred_outputs(model: Any, declared: Sequence[NodeArg]) -> List[NodeArg]:
    """Outputs the model declares without a type or shape, as ONNX's shape inference gives them (onnxruntime
    reports the shapes its own inference finds); left as declared where inference fails."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 (inference is a nicety: the declared outputs stand)
        return list(declared)
    by_name = {v.name: _arg(v) for v in inferred.graph.output}
    for arg in by_name.values():   # the names ONNX's inference makes up for unknown dims are None to onnxruntime
        arg.shape = [None if isinstance(d, str) and d.startswith("unk__") else d for d in arg.shape or []]
    return [by_name.get(a.name, a) if not a.shape or a.type == "unknown" else a for a in declared]


def _numpy_dtype(t: Any) -> Optional[np.dtype]:
    if t.WhichOneof("value") != "tensor_type":
        return None
    np_type = _NUMPY.get(t.tensor_type.elem_type)
    return np.dtype(np_type) if np_type is not None else None


def _denotations(t: Any) -> List[str]:
    if t.WhichOneof("value") != "tensor_type":
        return []
    return [d.denotation for d in t.tensor_type.shape.dim]
