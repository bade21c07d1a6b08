"""ONNX in: load the model, inline local functions, fix the graph inputs' static shapes, read the
initializers as constants and put the nodes in topological order."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, inliner, numpy_helper

from . import extra_outputs
from .accm import MAX_ELEMENTS, MAX_TENSOR_BYTES
from .errors import CompileError, InputShapeError
from .ir import Graph, NameGen, Value

DEFAULT_DOMAINS = ("", "ai.onnx")


class OnnxNode:
    """An ONNX node with its attributes decoded (strings as str)."""

    def __init__(self, proto: onnx.NodeProto, index: int):
        self.proto = proto
        self.op = proto.op_type
        self.domain = proto.domain
        self.name = proto.name or f"{proto.op_type}_{index}"
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self.attrs = {}
        for a in proto.attribute:
            v = helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode("utf-8", errors="replace")
            elif isinstance(v, list) and v and isinstance(v[0], bytes):  # STRINGS (RNN's activations...)
                v = [s.decode("utf-8", errors="replace") for s in v]
            self.attrs[a.name] = v
        # The outer-scope tensors its subgraphs (If's branches, Loop's body) read: inputs too, for the order of
        # the nodes, what is live and what folds.
        self.outer_inputs = sorted(set().union(*(_outer_names(g) for g in subgraphs(proto))) - {""})

    @property
    def all_inputs(self) -> list:
        """Its inputs and the outer-scope tensors its subgraphs read."""
        return self.inputs + [i for i in self.outer_inputs if i not in self.inputs]

    @property
    def label(self) -> str:
        return f"node '{self.name}' ({self.op})"

    def attr(self, name, default=None):
        """The attribute's value, `default` when the node has none; an attribute of no value (its type
        undefined, which ONNX's checker leaves to each domain's schema) is a CompileError."""
        if name in self.attrs and self.attrs[name] is None:
            raise CompileError(f"{self.label}: attribute '{name}' has no value (its type is undefined)")
        return self.attrs.get(name, default)


def subgraphs(proto: onnx.NodeProto) -> list:
    out = []
    for a in proto.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            out.append(a.g)
        elif a.type == onnx.AttributeProto.GRAPHS:
            out.extend(a.graphs)
    return out


def _outer_names(graph: onnx.GraphProto) -> set:
    """The names `graph` (with its own subgraphs) reads but does not define."""
    defined = {x.name for x in graph.input} | {x.name for x in graph.initializer}
    defined |= {sp.values.name for sp in graph.sparse_initializer}
    read = set()
    for n in graph.node:
        read.update(n.input)
        for sub in subgraphs(n):
            read |= _outer_names(sub)
        defined.update(n.output)
    read.update(o.name for o in graph.output)
    return read - defined


@dataclass
class Imported:
    graph: Graph
    nodes: list            # OnnxNode, topological order
    opset: int             # default-domain opset version
    opset_imports: list    # the model's OperatorSetIdProto list (for the folding evaluator)
    used: set              # every tensor name some node reads, plus the graph outputs
    extra: extra_outputs.Request  # the intermediate tensors asked for, kept as outputs after the model's own


def load(model) -> onnx.ModelProto:
    """A path, bytes or ModelProto -> ModelProto."""
    if isinstance(model, onnx.ModelProto):
        _check_text(model.graph)
        return model
    try:
        if isinstance(model, (bytes, bytearray, memoryview)):
            proto = onnx.load_from_string(bytes(model))
        elif isinstance(model, (str, os.PathLike)):
            path = os.fspath(model)
            if not os.path.exists(path):
                raise FileNotFoundError(f"no such model file: '{path}'")
            proto = onnx.load(path)
        else:
            proto = None
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except Exception as e:  # protobuf DecodeError and friends
        raise CompileError(f"cannot parse the ONNX model: {e}") from e
    if proto is None:
        raise TypeError(f"model must be a path, bytes or onnx.ModelProto, not {type(model).__name__}")
    _check_text(proto.graph)
    return proto


def _check_text(graph: onnx.GraphProto) -> None:
    # ONNX's protobuf is proto2: a string field holding invalid UTF-8 parses, and reads back as bytes.
    def bad(value) -> bool:
        return not isinstance(value, str)

    for n in graph.node:
        if bad(n.name) or bad(n.op_type) or bad(n.domain) or any(bad(x) for x in list(n.input) + list(n.output)):
            raise CompileError(f"node {n.name!r}: a name, op type or tensor name is not valid UTF-8")
        if any(bad(a.name) for a in n.attribute):
            raise CompileError(f"node {n.name!r}: an attribute name is not valid UTF-8")
    for coll in (graph.input, graph.output, graph.value_info, graph.initializer):
        for x in coll:
            if bad(x.name):
                raise CompileError(f"tensor name {x.name!r} is not valid UTF-8")


def _np_dtype(elem_type: int, what: str) -> np.dtype:
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(elem_type))
    except Exception as e:
        raise CompileError(f"{what} has an unsupported element type {elem_type}") from e


def sparse_to_dense(sp: onnx.SparseTensorProto) -> np.ndarray:
    name = sp.values.name
    try:
        values = numpy_helper.to_array(sp.values).reshape(-1)
        idx = numpy_helper.to_array(sp.indices).astype(np.int64)
    except Exception as e:
        raise CompileError(f"cannot read sparse initializer '{name}': {e}") from e
    dims = tuple(int(d) for d in sp.dims)
    count = math.prod(dims)
    if any(d < 0 for d in dims) or count * values.dtype.itemsize > MAX_TENSOR_BYTES:
        raise CompileError(f"sparse initializer '{name}': dims {dims} are negative or too large")
    if idx.ndim == 1 and idx.size == values.size:
        flat = idx
    elif idx.ndim == 2 and idx.shape == (values.size, len(dims)):
        if ((idx < 0) | (idx >= np.array(dims, dtype=np.int64))).any():
            raise CompileError(f"sparse initializer '{name}': an index is outside dims {dims}")
        flat = np.ravel_multi_index(tuple(idx.T), dims) if values.size else idx.reshape(-1)
    else:
        raise CompileError(f"sparse initializer '{name}': indices of shape {idx.shape} do not fit "
                           f"{values.size} values of a rank-{len(dims)} tensor")
    if ((flat < 0) | (flat >= count)).any():
        raise CompileError(f"sparse initializer '{name}': an index is outside dims {dims}")
    dense = np.zeros(count, dtype=values.dtype)
    dense[flat] = values
    return dense.reshape(dims)


def _type_code(declared) -> int:
    """A schema attribute's AttributeProto type code (onnx's stub does not say that its pybind11 enum
    converts to int)."""
    return int(declared.type)


def _input_shape(vi: onnx.ValueInfoProto, given) -> tuple:
    name = vi.name
    tt = vi.type.tensor_type
    model_dims = list(tt.shape.dim) if tt.HasField("shape") else None
    if given is not None:
        try:
            shape = tuple(int(d) for d in given)
        except (TypeError, ValueError) as e:
            raise CompileError(f"input_shapes['{name}'] must be a sequence of ints, got {given!r}") from e
        if any(d < 1 for d in shape):
            raise CompileError(f"input_shapes['{name}'] = {shape}: every dim must be >= 1")
        if model_dims is not None and len(model_dims) != len(shape):
            raise CompileError(f"input_shapes['{name}'] = {shape} has rank {len(shape)}, but the "
                               f"model's input '{name}' has rank {len(model_dims)}")
        return shape
    if model_dims is None:
        raise InputShapeError(name, None, f"input '{name}' has no shape in the model")
    dims = []
    for i, d in enumerate(model_dims):
        if d.HasField("dim_value") and d.dim_value >= 1:
            dims.append(int(d.dim_value))
            continue
        if d.HasField("dim_value") and d.dim_value == 0:
            raise CompileError(f"unsupported empty input '{name}' (dim {i} is 0): the format has no "
                               f"zero-size tensors")
        if d.HasField("dim_param") and d.dim_param:
            what = f"is symbolic ('{d.dim_param}')"
        elif d.HasField("dim_value"):
            what = f"is {d.dim_value}"
        else:
            what = "is unknown"
        given_dims = [int(x.dim_value) if x.HasField("dim_value") and x.dim_value >= 1 else (x.dim_param or None)
                      for x in model_dims]
        raise InputShapeError(name, given_dims, f"input '{name}' dim {i} {what}")
    return tuple(dims)


def _toposort(nodes: list, available: set) -> list:
    """Orders ONNX nodes so each runs after the producers of its inputs (stable)."""
    avail = set(available) | {""}
    producers = {}
    for i, n in enumerate(nodes):
        for o in n.outputs:
            if o:
                if o in producers or o in available:
                    raise CompileError(f"tensor '{o}' is produced twice ({n.label})")
                producers[o] = i
    for n in nodes:
        for i in n.all_inputs:
            if i not in avail and i not in producers:
                raise CompileError(f"{n.label}: input '{i}' is not produced by any node, "
                                   f"initializer or graph input")
    pending = list(range(len(nodes)))
    order = []
    while pending:
        rest = []
        for i in pending:
            n = nodes[i]
            if all(x in avail for x in n.all_inputs):
                order.append(n)
                avail.update(o for o in n.outputs if o)
            else:
                rest.append(i)
        if len(rest) == len(pending):
            raise CompileError(f"the graph has a cycle (at {nodes[rest[0]].label})")
        pending = rest
    return order


def _inlined(model: onnx.ModelProto) -> onnx.ModelProto:
    if not model.functions:
        return model
    try:
        return inliner.inline_local_functions(model)
    except Exception as e:
        raise CompileError(f"cannot inline the model's local functions: {e}") from e


def onnx_nodes(model: onnx.ModelProto) -> tuple:
    """The model's nodes (its local functions inlined) in topological order, and the names of its
    initializers; no shapes are needed."""
    model = _inlined(model)
    g = model.graph
    constants = {x.name for x in g.initializer} | {sp.values.name for sp in g.sparse_initializer}
    nodes = [OnnxNode(p, i) for i, p in enumerate(g.node)]
    return _toposort(nodes, constants | {vi.name for vi in g.input}), constants


def live_nodes(nodes: list, outputs) -> list:
    """The nodes a graph output depends on, in their order (an unsupported op in a dead branch is fine)."""
    needed = {o if isinstance(o, str) else o.name for o in outputs}
    live = []
    for n in reversed(nodes):
        if any(o in needed for o in n.outputs if o):
            live.append(n)
            needed.update(i for i in n.all_inputs if i)
    return live[::-1]


def import_model(model: onnx.ModelProto, input_shapes=None, extra=None) -> Imported:
    """The model's graph with static input shapes, its constants and its live nodes in order. `extra` (None, "all"
    or tensor names) asks for intermediate tensors as outputs after the model's own (extra_outputs.py)."""
    model = _inlined(model)
    g_proto = model.graph
    opset = None
    for imp in model.opset_import:
        if imp.domain in DEFAULT_DOMAINS:
            opset = int(imp.version)
    if opset is None:
        opset = onnx.defs.onnx_opset_version()
    if not 1 <= opset <= onnx.defs.onnx_opset_version():
        raise CompileError(f"unsupported opset version {opset} (this compiler knows 1 to "
                           f"{onnx.defs.onnx_opset_version()})")

    input_shapes = dict(input_shapes or {})
    all_names = set()
    for n in g_proto.node:
        all_names.update(n.input)
        all_names.update(n.output)
    for coll in (g_proto.input, g_proto.output, g_proto.initializer):
        all_names.update(x.name for x in coll)
    all_names.discard("")
    g = Graph(NameGen(all_names))

    # Initializers (and sparse initializers) are constants, even when also listed as graph inputs.
    for init in g_proto.initializer:
        try:
            arr = numpy_helper.to_array(init)
        except Exception as e:
            raise CompileError(f"cannot read initializer '{init.name}': {e}") from e
        g.values[init.name] = Value(init.name, arr.dtype, tuple(arr.shape), arr)
    for sp in g_proto.sparse_initializer:
        arr = sparse_to_dense(sp)
        name = sp.values.name
        g.values[name] = Value(name, arr.dtype, tuple(arr.shape), arr)

    graph_input_names = [vi.name for vi in g_proto.input]
    for key in input_shapes:
        if key not in graph_input_names:
            raise CompileError(f"input_shapes names '{key}', which is not a graph input "
                               f"(inputs: {', '.join(repr(n) for n in graph_input_names)})")
        if key in g.values:
            raise CompileError(f"input_shapes names '{key}', which is a constant initializer")

    for vi in g_proto.input:
        if vi.name in g.values:
            continue
        if not vi.type.HasField("tensor_type"):
            raise CompileError(f"unsupported input type of '{vi.name}': only tensors (not sequences, "
                               f"maps or optionals)")
        dtype = _np_dtype(vi.type.tensor_type.elem_type, f"input '{vi.name}'")
        shape = _input_shape(vi, input_shapes.get(vi.name))
        if math.prod(shape) > MAX_ELEMENTS:
            raise CompileError(f"unsupported tensor size: input '{vi.name}' {shape} has more than "
                               f"{MAX_ELEMENTS} elements")
        g.values[vi.name] = Value(vi.name, dtype, shape)
        g.inputs.append(vi.name)

    g.outputs = [vi.name for vi in g_proto.output]
    if not g.outputs:
        raise CompileError("the model has no outputs")

    nodes = [OnnxNode(p, i) for i, p in enumerate(g_proto.node)]
    nodes = _toposort(nodes, set(g.values))
    produced = set(g.values) | {o for n in nodes for o in n.outputs if o}
    for o in g.outputs:
        if o not in produced:
            raise CompileError(f"graph output '{o}' is not produced by any node")
    request = extra_outputs.resolve(extra, nodes, live_nodes(nodes, g.outputs), g)
    g.outputs += request.names
    g.extra_outputs = frozenset(request.names)
    nodes = live_nodes(nodes, g.outputs)
    used = {i for n in nodes for i in n.all_inputs if i} | set(g.outputs)
    return Imported(g, nodes, opset, list(model.opset_import), used, request)


_ATTR_TYPES = frozenset(onnx.AttributeProto.AttributeType.values())
# Window geometry of conv, pooling and the like: no real model comes near the limit, and folding such a
# node on constants would try to allocate what the sizes say before any check could see the result.
_GEOMETRY_ATTRIBUTES = frozenset({"pads", "strides", "dilations", "kernel_shape", "output_padding"})
MAX_GEOMETRY = 1 << 20


def _type_str(dtype) -> str:
    try:
        return f"tensor({onnx.TensorProto.DataType.Name(helper.np_dtype_to_tensor_dtype(dtype)).lower()})"
    except Exception:  # noqa: BLE001 - a dtype onnx has no name for: nothing to compare
        return ""


def check_schema(node, opset: int, dtype_of=None) -> None:
    """Refuses a node that does not fit its ONNX schema (a required input or attribute missing, too many
    inputs, an attribute or an input of the wrong type...), so that no handler ever sees a malformed
    node. dtype_of(name) gives a tensor's numpy dtype (or None if unknown). Ops without a schema pass:
    they are refused as unsupported later."""
    try:
        schema = onnx.defs.get_schema(node.op, opset, "")
    except Exception:  # onnx.defs.SchemaError: no such op, or not yet at this opset
        if onnx.defs.has(node.op, ""):
            first = min(x.since_version for x in onnx.defs.get_all_schemas_with_history()
                        if x.name == node.op and x.domain == "")
            raise CompileError(f"unsupported op '{node.op}' at opset {opset} (node '{node.name}'): it "
                               f"exists from opset {first} on") from None
        return
    single = onnx.defs.OpSchema.FormalParameterOption.Single
    n_in = len(node.inputs)
    if n_in > schema.max_input:
        raise CompileError(f"{node.label}: {n_in} inputs, but {node.op} takes at most {schema.max_input}")
    for i, formal in enumerate(schema.inputs):
        if formal.option == single and (i >= n_in or not node.inputs[i]):
            raise CompileError(f"{node.label}: required input {i} ('{formal.name}') is missing")
    if sum(1 for x in node.inputs if x) < schema.min_input:
        raise CompileError(f"{node.label}: {n_in} inputs, but {node.op} needs at least {schema.min_input}")
    if dtype_of is not None and schema.inputs:
        allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
        bound: dict = {}  # type parameter -> (input index, type): inputs sharing a parameter share a type
        for i, name in enumerate(node.inputs):
            dtype = dtype_of(name) if name else None
            formal = schema.inputs[min(i, len(schema.inputs) - 1)]
            want = allowed.get(formal.type_str, {formal.type_str})
            got = _type_str(dtype) if dtype is not None else ""
            if not got:
                continue
            if got not in want:
                raise CompileError(f"{node.label}: input {i} ('{name}') is a {got}, but {node.op} takes "
                                   f"{', '.join(sorted(want))} there")
            variadic = formal.option == onnx.defs.OpSchema.FormalParameterOption.Variadic
            if variadic and not formal.is_homogeneous:
                continue  # each of its inputs may have a type of its own
            first = bound.setdefault(formal.type_str, (i, got))
            if first[1] != got:
                raise CompileError(f"{node.label}: input {i} ('{name}') is a {got}, but input {first[0]} is a "
                                   f"{first[1]}: {node.op} takes one type for both")
    for a in node.proto.attribute:
        declared = schema.attributes.get(a.name)
        if declared is not None and int(a.type) != _type_code(declared):
            raise CompileError(f"{node.label}: attribute '{a.name}' is of type "
                               f"{onnx.AttributeProto.AttributeType.Name(a.type) if a.type in _ATTR_TYPES else a.type}"
                               f", but {node.op} takes {onnx.AttributeProto.AttributeType.Name(_type_code(declared))}")
        if a.name in _GEOMETRY_ATTRIBUTES and any(abs(int(v)) > MAX_GEOMETRY for v in a.ints):
            raise CompileError(f"{node.label}: unsupported {a.name} {list(a.ints)}: window geometry is "
                               f"limited to {MAX_GEOMETRY} (a larger one only makes tensors no memory holds)")
    for name, declared in schema.attributes.items():
        if declared.required and name not in node.attrs:
            raise CompileError(f"{node.label}: required attribute '{name}' is missing")
    n_out = len(node.outputs)
    if n_out > schema.max_output:
        raise CompileError(f"{node.label}: {n_out} outputs, but {node.op} has at most {schema.max_output}")
    optional = onnx.defs.OpSchema.FormalParameterOption.Optional
    optional_first = bool(schema.outputs) and schema.outputs[0].option == optional
    if n_out < 1 or (not node.outputs[0] and not optional_first):  # LSTM's Y, say, may be left out
        raise CompileError(f"{node.label}: output 0 is missing")
