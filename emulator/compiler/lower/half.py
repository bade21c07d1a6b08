"""float16 computed in float32, as onnxruntime's CPU provider runs an op that has no float16 kernel (its
InsertCastTransformer): each float16 input is cast up, the op runs in float32, and each output whose ONNX type
is a float16 input's is cast back to float16. So each op's result is its float32 result rounded once to float16
(the reference, computing in float16 within the op, may round more often). The ops that only move or select data
(data.py, reshape.py, Where, DepthToSpace, SpaceToDepth, the gathers and scatters without a reduction) take
float16 as it is, without casts."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, defs, helper

from ..importer import DEFAULT_DOMAINS, OnnxNode
from . import data, reshape

HALF = np.dtype(np.float16)
# Ops whose handlers take float16 tensors themselves: they move data and never compute on it.
NATIVE = frozenset(data.HANDLERS) | frozenset(reshape.HANDLERS) | {
    "Where", "DepthToSpace", "SpaceToDepth", "GatherND", "TensorScatter", "ReverseSequence", "MaxUnpool", "Compress"}
# Scatters that move data unless their reduction computes.
_SCATTERS = frozenset({"ScatterND", "ScatterElements", "Scatter"})


def needs_float32(g, node: OnnxNode) -> bool:
    """`node` computes on a float16 tensor that the graph has at run time or as a constant."""
    if node.domain not in DEFAULT_DOMAINS or node.op in NATIVE or not defs.has(node.op, ""):
        return False  # an op ONNX does not define (another domain's, named without it) is its handler's to refuse
    if node.op in _SCATTERS and node.attr("reduction", "none") == "none":
        return False
    return any(i and i in g.values and g.values[i].dtype == HALF for i in node.inputs)


def _formal(params, k: int):
    """The schema's formal parameter of input or output `k` (the last one is variadic when k passes it)."""
    return params[min(k, len(params) - 1)] if params else None


def _half_type_params(node: OnnxNode, values, opset: int) -> set:
    """The schema's type parameters (T, T1, ...) that a float16 input of `node` binds."""
    schema = defs.get_schema(node.op, opset, "")
    bound = set()
    for k, i in enumerate(node.inputs):
        formal = _formal(schema.inputs, k)
        if i and formal is not None and values[i].dtype == HALF:
            bound.add(formal.type_str)
    return bound


def in_float32(ctx, node: OnnxNode) -> list:
    """`node` computed in float32: Cast nodes for its float16 inputs, the node on their float32 copies, and Cast
    nodes back to float16 for the outputs typed like a float16 input. New tensor names are the graph's."""
    g = ctx.g
    half_params = _half_type_params(node, g.values, ctx.opset)
    schema = defs.get_schema(node.op, ctx.opset, "")
    casts = []
    call = onnx.NodeProto()
    call.CopyFrom(node.proto)
    for k, i in enumerate(node.inputs):
        if i and g.values[i].dtype == HALF:
            up = g.names.new(f"{i}_float32")
            casts.append(helper.make_node("Cast", [i], [up], to=TensorProto.FLOAT, name=f"{node.name}/to_float32_{k}"))
            call.input[k] = up
    back = []
    for k, o in enumerate(node.outputs):
        formal = _formal(schema.outputs, k)
        if o and formal is not None and formal.type_str in half_params:
            wide = g.names.new(f"{o}_float32")
            call.output[k] = wide
            back.append(helper.make_node("Cast", [wide], [o], to=TensorProto.FLOAT16,
                                         name=f"{node.name}/to_float16_{k}"))
    nodes = [OnnxNode(p, k) for k, p in enumerate(casts)] + [OnnxNode(call, 0)]
    nodes += [OnnxNode(p, k) for k, p in enumerate(back)]
    return ctx.queued(nodes)
