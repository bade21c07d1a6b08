"""Ops that ONNX defines by a function body and no handler lowers (RMSNormalization, Attention,
RotaryEmbedding, SwiGLU, the losses, the window functions, ...): the node is replaced by its body, built for
its attributes and its inputs' types, as onnxruntime runs such an op when it has no kernel of its own. The body
is onnx's own (the schema's function, or the one its builder makes for this node), inlined by onnx's inliner
with its ops converted to the model's opset, so that every handler reads its nodes at the opset it reads the
model's. What the body uses is then lowered, folded or refused like any node: a refusal names the body's node
under the op's node ('Attention_0/...')."""

from __future__ import annotations

import onnx
from onnx import defs, helper, inliner

from ..errors import CompileError
from ..importer import OnnxNode, subgraphs
from . import control

_LOCAL = "accel.function"  # the domain the body is inlined from
# Bodies with no deterministic meaning here (Bernoulli draws random numbers) or of types accel has not
# (SequenceMap: sequences).
_NOT_EXPANDED = frozenset({"Bernoulli", "SequenceMap"})


def _ops_with_bodies() -> frozenset:
    schemas = defs.get_all_schemas_with_history()
    # has_function and has_context_dependent_function are properties the onnx stubs do not declare.
    return frozenset(s.name for s in schemas if s.domain == "" and (s.has_function  # type: ignore[attr-defined]
                                                                    or s.has_context_dependent_function)  # type: ignore[attr-defined]
                     ) - _NOT_EXPANDED


def expanded_ops(handled) -> frozenset:
    """The ops replaced by their function body: those with one that no handler in `handled` lowers."""
    return _ops_with_bodies() - frozenset(handled) - control.INLINED


def _type(value) -> onnx.TypeProto:
    elem = helper.np_dtype_to_tensor_dtype(value.dtype)
    return helper.make_tensor_type_proto(elem, list(value.shape))


def _with_defaults(node: OnnxNode, schema) -> onnx.NodeProto:
    """node's proto with the schema's default for each attribute it leaves out: a body reads its attributes
    by reference, and an unset reference drops the attribute where the op means its default."""
    call = onnx.NodeProto()
    call.CopyFrom(node.proto)
    given = {a.name for a in call.attribute}
    for name, formal in schema.attributes.items():
        if name not in given and formal.default_value.type != onnx.AttributeProto.UNDEFINED:
            call.attribute.append(formal.default_value)
    return call


def _function(call: onnx.NodeProto, node: OnnxNode, schema, opset: int, values) -> onnx.FunctionProto:
    """The body onnx defines for the node `call` at `opset`, for its attributes and its inputs' types."""
    proto = onnx.FunctionProto()
    versions = [v for v in schema.function_opset_versions if v <= opset]
    if versions:
        proto.ParseFromString(schema.get_function_with_opset_version(max(versions)))
        return proto
    versions = [v for v in schema.context_dependent_function_opset_versions if v <= opset]
    if not versions:
        raise CompileError(f"{node.label}: onnx defines no function body for {node.op} at opset {opset}")
    types = [(_type(values[i]) if i else onnx.TypeProto()).SerializeToString() for i in node.inputs]
    try:
        data = schema.get_context_dependent_function_with_opset_version(max(versions), call.SerializeToString(), types)
    except Exception as e:  # noqa: BLE001 - onnx's builder refuses what its op does not define
        raise CompileError(f"{node.label}: onnx cannot build its function body: {e}") from None
    proto.ParseFromString(data)
    if not proto.node:
        raise CompileError(f"{node.label}: onnx builds no function body for these attributes and input types")
    return proto


def body(ctx, node: OnnxNode) -> list:
    """The ONNX nodes that compute `node`'s outputs: its function body, inlined, each tensor the body makes
    renamed apart from the graph's. Their inputs are added to what the model uses."""
    g = ctx.g
    try:
        schema = defs.get_schema(node.op, ctx.opset, "")
    except defs.SchemaError as e:
        raise CompileError(f"{node.label}: no ONNX definition at opset {ctx.opset}: {e}") from None
    call = _with_defaults(node, schema)
    fn = _function(call, node, schema, ctx.opset, g.values)
    fn.domain, fn.name = _LOCAL, node.op
    call.domain = _LOCAL
    call.name = node.name
    present = [i for i in node.inputs if i]
    outputs = [o for o in node.outputs if o]
    graph = helper.make_graph([call], "body", [helper.make_value_info(i, _type(g.values[i])) for i in present],
                              [helper.make_value_info(o, onnx.TypeProto()) for o in outputs])
    imports = [helper.make_opsetid("", ctx.opset), helper.make_opsetid(_LOCAL, 1)]
    model = helper.make_model(graph, opset_imports=imports, functions=[fn])
    try:
        model = inliner.inline_local_functions(model, convert_version=True)
    except Exception as e:  # noqa: BLE001 - the inliner's own errors (a body it cannot convert)
        raise CompileError(f"{node.label}: cannot inline its ONNX function body: {e}") from None
    rename = {name: name for name in present}
    nodes = []
    for k, p in enumerate(model.graph.node):
        q = onnx.NodeProto()
        q.CopyFrom(p)
        if q.domain == _LOCAL:
            raise CompileError(f"{node.label}: its function body calls itself")
        for j, i in enumerate(q.input):
            if i:
                q.input[j] = rename.get(i, i)
        for sub in subgraphs(q):
            control.rename_reads(sub, rename)
        for j, o in enumerate(q.output):
            if o:
                rename[o] = q.output[j] = o if o in outputs else g.names.new(f"{node.name}/{o}")
        q.name = f"{node.name}/{p.name or f'{p.op_type}_{k}'}"
        nodes.append(OnnxNode(q, k))
    return ctx.queued(nodes)
