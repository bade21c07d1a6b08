"""Constant folding: Constant nodes, Shape/Size of statically shaped tensors, and any node whose
inputs are all constants (evaluated with onnx's reference evaluator on a one-node model)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .errors import CompileError

# Ops that must never be evaluated at compile time (their result is not a function of their inputs).
NONDETERMINISTIC_OPS = frozenset({
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
    "Bernoulli",
})

_evaluator_cls = None


def _evaluator():
    global _evaluator_cls
    if _evaluator_cls is None:
        from onnx.reference import ReferenceEvaluator
        _evaluator_cls = ReferenceEvaluator
    return _evaluator_cls


def constant_node(node) -> np.ndarray:
    """The value of a Constant node."""
    a = node.attrs
    if "value" in a:
        return numpy_helper.to_array(a["value"])
    if "value_float" in a:
        return np.array(a["value_float"], dtype=np.float32)
    if "value_floats" in a:
        return np.array(a["value_floats"], dtype=np.float32)
    if "value_int" in a:
        return np.array(a["value_int"], dtype=np.int64)
    if "value_ints" in a:
        return np.array(a["value_ints"], dtype=np.int64)
    if "value_string" in a:
        return np.array(a["value_string"], dtype=object)
    if "value_strings" in a:
        return np.array([s.decode("utf-8") if isinstance(s, bytes) else s
                         for s in a["value_strings"]], dtype=object)
    return None  # sparse_value and the like: the evaluator handles them


def shape_of(node, shape: tuple, opset: int) -> np.ndarray:
    """Shape(x) for a statically shaped x, with opset 15's start/end."""
    rank = len(shape)
    start, end = 0, rank
    if opset >= 15:
        start = int(node.attr("start", 0))
        end = int(node.attr("end", rank))
        start = min(max(start + rank if start < 0 else start, 0), rank)
        end = min(max(end + rank if end < 0 else end, 0), rank)
    return np.array(shape[start:end], dtype=np.int64)


def size_of(shape: tuple) -> np.ndarray:
    return np.array(int(np.prod(shape, dtype=np.int64)), dtype=np.int64)


def _value_info(name: str, arr: np.ndarray) -> onnx.ValueInfoProto:
    if arr.dtype == object or arr.dtype.kind in "US":
        elem = onnx.TensorProto.STRING
    else:
        elem = helper.np_dtype_to_tensor_dtype(arr.dtype)
    return helper.make_tensor_value_info(name, elem, list(arr.shape))


# The largest tensor folding may make: folding computes in NumPy on the host, and a model whose constants
# would be larger than this (a few GB) is refused rather than left to exhaust the host's memory.
FOLD_LIMIT_ELEMENTS = 1 << 28


def _check_fold_size(node, model: onnx.ModelProto) -> None:
    """Refuses to fold a node whose output would be too large, or that ONNX's own shape inference finds
    invalid when it cannot tell the output's shape (negative pads and the like), before computing it."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - inference is only a guard: the evaluator reports real errors
        return
    for vi in inferred.graph.output:
        dims = vi.type.tensor_type.shape.dim
        if not (vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims)):
            try:
                onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
            except Exception as e:  # noqa: BLE001
                raise CompileError(f"{node.label} is not valid ONNX: {e}") from e
            continue
        count = 1
        for d in dims:
            count *= max(int(d.dim_value), 0)
        if count > FOLD_LIMIT_ELEMENTS:
            raise CompileError(f"unsupported constant of {count} elements: folding {node.label} would "
                               f"make '{vi.name}' larger than {FOLD_LIMIT_ELEMENTS} elements")


def evaluate(node, arrays: list, opset_imports: list) -> list:
    """Runs one node on constant inputs (None for absent optional ones). Returns one array per
    node output (None for an absent output)."""
    if node.op == "Constant":
        v = constant_node(node)
        if v is not None:
            return [v]
    if node.op == "Identity":
        return [arrays[0]]
    feeds = {}
    infos = []
    for name, arr in zip(node.inputs, arrays):
        if name and name not in feeds:
            feeds[name] = arr
            infos.append(_value_info(name, arr))
    outs = [helper.make_empty_tensor_value_info(o) for o in node.outputs if o]
    graph = helper.make_graph([node.proto], "fold", infos, outs)
    model = helper.make_model(graph, opset_imports=opset_imports)
    _check_fold_size(node, model)
    try:
        results = _evaluator()(model).run(None, feeds)
    except Exception as e:
        raise CompileError(f"constant folding failed at {node.label}: {type(e).__name__}: {e}") from e
    it = iter(results)
    out: list[np.ndarray | None] = []
    for o in node.outputs:
        if not o:
            out.append(None)
            continue
        r = next(it)
        out.append(None if r is None else np.asarray(r))
    return out
