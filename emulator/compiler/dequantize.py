"""A quantized model's float counterpart (compile_model(dequantized=True)): the model as its quantizer saw it, every
activation in float. What a "float run" of a deployed int8 model is when the float model it came from is not at
hand (a Vitis AI .xmodel, a Horizon .bin, a QDQ ONNX): ``accel shim --compare`` holds each output against it.

- A QuantizeLinear of a tensor computed at run time and the DequantizeLinear nodes reading it, directly or through
  ops that only move integers (Transpose, Reshape, ...), are bypassed; where the quantization's range starts at 0
  a Relu stands in its place (a quantizer folds a Relu into such a range: onnxruntime's does for asymmetric
  activations). The range's other ends are not kept: values the quantized model saturates show as its error. A
  graph output that was quantized is given in float, under its name.
- An integer graph input read only by DequantizeLinear nodes of one scale and zero point (through data movement or
  not) becomes a float input (the real value the integers stand for), under its name, its dims and their
  denotations kept.
- Constants stay as quantized: a DequantizeLinear of an int8 weight folds to the weight's real values (the float
  weights the quantizer started from are not in the file); so does a quantized constant's QuantizeLinear.
- The operator form (QLinearConv, MatMulInteger, com.microsoft QLinearAdd, ...) has no float op to stand for: a
  NoFloatCounterpartError names each such node. So does a quantized tensor that an op other than data movement
  reads, or that is dequantized with other parameters than it was quantized with (through data movement, or per
  axis): that part would stay quantized, which no float run may be.
"""
from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .errors import NoFloatCounterpartError
from . import qdq_graph
from .importer import DEFAULT_DOMAINS, subgraphs
from .lower import qinteger, qlinear, quantized

__all__ = ["OPERATOR_FORM", "float_counterpart", "is_quantized"]

Q, DQ = "QuantizeLinear", "DequantizeLinear"
#: The quantized ops that are not QuantizeLinear or DequantizeLinear (their lowerings' tables), by op type.
OPERATOR_FORM = frozenset(set(quantized.HANDLERS) | set(qlinear.HANDLERS) | set(qinteger.HANDLERS)) - {Q, DQ}
#: Ops that move integers without computing on them (beyond choosing among them): between a QuantizeLinear and its
#: DequantizeLinear they carry the float values as well.
MOVES = frozenset({"Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Slice", "Gather", "Split",
                   "DepthToSpace", "SpaceToDepth", "Tile", "Expand", "MaxPool"})
_LOWEST = {np.dtype(t): int(np.iinfo(t).min) for t in (np.int8, np.uint8, np.int16, np.uint16)}
_INTEGERS = {onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT16, onnx.TensorProto.UINT16,
             onnx.TensorProto.INT32, onnx.TensorProto.INT4, onnx.TensorProto.UINT4}


def is_quantized(model: onnx.ModelProto) -> bool:
    """Does the graph compute anything in integers (a QuantizeLinear, DequantizeLinear or an operator-form op)?"""
    return any(_is(n, Q) or _is(n, DQ) or n.op_type in OPERATOR_FORM for n in model.graph.node)


def float_counterpart(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of ``model`` with its activations' quantization removed (the module's docstring); the model itself when
    it has no QuantizeLinear or DequantizeLinear. NoFloatCounterpartError naming each node that has no float
    counterpart."""
    g = model.graph
    _refuse_operator_form(g)
    if not any(_is(n, Q) or _is(n, DQ) for n in g.node):
        return model
    out = onnx.ModelProto()
    out.CopyFrom(model)
    _strip(out.graph)
    return out


def _is(node: onnx.NodeProto, op: str) -> bool:
    return node.op_type == op and node.domain in DEFAULT_DOMAINS


def _refuse_operator_form(g: onnx.GraphProto) -> None:
    found = [f"{n.op_type} (node '{n.name or n.output[0]}')" for n in g.node if n.op_type in OPERATOR_FORM]
    inner = [f"'{n.name or n.output[0]}' ({n.op_type})" for n in g.node
             if any(_is(m, Q) or _is(m, DQ) or m.op_type in OPERATOR_FORM for sub in subgraphs(n) for m in sub.node)]
    if inner:
        raise NoFloatCounterpartError(f"the model has no float counterpart here: the subgraphs of {', '.join(inner)} "
                                      f"quantize, and their quantization is not taken out")
    if found:
        raise NoFloatCounterpartError(f"the model has no float counterpart: {', '.join(found[:8])}"
                           f"{f' and {len(found) - 8} more' if len(found) > 8 else ''} compute in integers with no "
                           f"float op to stand for (the operator form); a QDQ model has one (quantize_static's "
                           f"default, QuantFormat.QDQ)")


def _constants(g: onnx.GraphProto) -> set:
    """The names computed from constants alone (initializers, Constant nodes and what reads only them)."""
    known = {i.name for i in g.initializer} | {s.values.name for s in g.sparse_initializer}
    graph_inputs = {i.name for i in g.input} - known
    changed = True
    while changed:
        changed = False
        for n in g.node:
            ins = [i for i in n.input if i]
            if n.output[0] in known or (n.op_type != "Constant" and not ins):
                continue
            if all(i in known and i not in graph_inputs for i in ins):
                known.update(o for o in n.output if o)
                changed = True
    return known


def _strip(g: onnx.GraphProto) -> None:
    consts = _constants(g)
    readers: dict = {}
    for n in g.node:
        for i in n.input:
            if i:
                readers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}
    values = _ParamValues(g)
    alias: dict = {}        # a bypassed tensor -> the tensor that takes its place
    gone: set = set()       # id() of the nodes removed
    now_float: set = set()  # graph outputs that were integers
    retyped: set = set()    # tensors that were integers and are float now

    def bypass(start: str, params_of: onnx.NodeProto) -> bool:
        """Bypasses the DequantizeLinear nodes that the integers of ``start`` reach through data movement; False
        (nothing changed) when another op reads them, or one of those nodes reads them with other parameters."""
        reach = _reach(start, readers, consts, outputs)
        if reach is None:
            return False
        moves, dqs, ends = reach
        want = values.of(params_of)
        if any(values.of(dq) != want or (moves and not values.per_tensor(dq)) for dq in dqs):
            return False
        for dq in dqs:
            alias[dq.output[0]] = dq.input[0]
            gone.add(id(dq))
        now_float.update(ends)
        retyped.update(o for m in moves for o in m.output if o)
        retyped.add(start)
        return True

    in_place: dict = {}  # id() of a QuantizeLinear bypassed -> the node in its place
    for n in g.node:
        if _is(n, Q) and n.input[0] not in consts:
            low = values.lowest(n)
            if low is not None and bypass(n.output[0], n):
                in_place[id(n)] = _in_place_of(n, low == 0)
    for vi in g.input:
        if vi.name in consts or vi.type.tensor_type.elem_type not in _INTEGERS:
            continue
        users = [u for u in readers.get(vi.name, []) if _is(u, DQ)]
        if users and bypass(vi.name, users[0]):
            vi.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
            now_float.discard(vi.name)

    for n in g.node:
        if (_is(n, Q) or _is(n, DQ)) and id(n) not in gone and id(n) not in in_place and n.input[0] not in consts:
            raise NoFloatCounterpartError(
                f"the model has no float counterpart: {n.op_type} (node '{n.name or n.output[0]}') of "
                f"'{n.input[0]}' stays: its integers are read by an integer op, or dequantized with other "
                f"parameters than they were quantized with")

    def resolve(name: str) -> str:
        while name in alias:
            name = alias[name]
        return name

    kept = qdq_graph.replaced(g.node, in_place, gone)
    for n in kept:
        _rename_inputs(n, resolve)
    for o in g.output:
        source = resolve(o.name)
        if source != o.name:
            kept.append(helper.make_node("Identity", [source], [o.name], name=f"{o.name}_float"))
        if source != o.name or o.name in now_float:
            o.type.tensor_type.elem_type = onnx.TensorProto.FLOAT
    del g.node[:]
    g.node.extend(kept)
    retyped.update(alias)
    kept_info = [vi for vi in g.value_info if vi.name not in retyped]
    del g.value_info[:]
    g.value_info.extend(kept_info)


def _in_place_of(q: onnx.NodeProto, starts_at_zero: bool) -> onnx.NodeProto:
    """The node that stands for QuantizeLinear ``q`` (under its output name, in float): a Relu where the range its
    integers hold starts at 0, else the identity. A quantizer folds a Relu (or Relu6) into a quantization whose range
    starts at 0 (onnxruntime's does for asymmetric activations), and the model needs it back; the range's other
    ends are not kept, so that values the quantized model saturates show as its error."""
    return helper.make_node("Relu" if starts_at_zero else "Identity", [q.input[0]], [q.output[0]],
                            name=f"{q.name or q.output[0]}_float")


def _reach(start: str, readers: dict, consts: set, outputs: set):
    """(the data-movement nodes that carry ``start``'s integers on, the DequantizeLinear nodes they reach, the graph
    outputs among them) or None when another op reads them."""
    moves, dqs, ends = [], [], []
    stack = [start]
    while stack:
        t = stack.pop()
        if t in outputs:
            ends.append(t)
        for u in readers.get(t, []):
            if _is(u, DQ) and u.input[0] == t:
                dqs.append(u)
            elif (u.op_type in MOVES and u.domain in DEFAULT_DOMAINS and u.input[0] == t
                  and all(i in consts for i in u.input[1:] if i)):
                moves.append(u)
                stack.extend(o for o in u.output if o)
            else:
                return None
    return moves, dqs, ends


class _ParamValues:
    """A QuantizeLinear's or DequantizeLinear's parameters by value (scale, zero point, axis), from the graph's
    constants; a parameter computed at run time equals no other."""

    def __init__(self, g: onnx.GraphProto):
        self._arrays = {i.name: i for i in g.initializer}
        for n in g.node:
            if n.op_type == "Constant" and n.domain in DEFAULT_DOMAINS:
                for a in n.attribute:
                    if a.name == "value":
                        self._arrays[n.output[0]] = a.t

    def _array(self, name: str):
        t = self._arrays.get(name)
        return None if t is None else tuple(numpy_helper.to_array(t).reshape(-1).tolist())

    def of(self, n: onnx.NodeProto) -> tuple:
        axis = [helper.get_attribute_value(a) for a in n.attribute if a.name == "axis"]
        zero = self._array(n.input[2]) if len(n.input) > 2 and n.input[2] else (0,)
        scale = self._array(n.input[1])
        return (None, id(n)) if scale is None or zero is None else (scale, zero, tuple(axis))

    def lowest(self, n: onnx.NodeProto):
        """The lowest real value a per-tensor QuantizeLinear gives (its integers' lowest, dequantized); None when its
        parameters are not constants of one value or its integers not of 8 or 16 bits."""
        scale = self._array(n.input[1])
        zero_name = n.input[2] if len(n.input) > 2 and n.input[2] else ""
        zero = self._arrays.get(zero_name)
        if scale is None or len(scale) != 1 or (zero_name and zero is None):
            return None
        if zero is not None:
            kind, z = helper.tensor_dtype_to_np_dtype(zero.data_type), numpy_helper.to_array(zero).reshape(-1)
            if z.size != 1:
                return None
        else:
            out = [a.i for a in n.attribute if a.name == "output_dtype"]
            kind, z = (helper.tensor_dtype_to_np_dtype(out[0]) if out else np.dtype(np.uint8)), np.zeros(1)
        if np.dtype(kind) not in _LOWEST:
            return None
        return float(np.float32(_LOWEST[np.dtype(kind)] - int(z[0])) * np.float32(scale[0]))

    def per_tensor(self, n: onnx.NodeProto) -> bool:
        scale = self.of(n)[0]
        return scale is not None and len(scale) == 1


def _rename_inputs(node: onnx.NodeProto, resolve) -> None:
    """The node's inputs, and the outer names its subgraphs read, through ``resolve``."""
    for k, name in enumerate(node.input):
        if name:
            node.input[k] = resolve(name)
    for sub in subgraphs(node):
        for inner in sub.node:
            _rename_inputs(inner, resolve)
