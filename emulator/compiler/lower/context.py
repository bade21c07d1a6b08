"""The lowering context every op handler gets, and the helpers the op families share: inputs, outputs and
the nodes a handler emits, axis and broadcast rules, and the refusal of what is not supported."""

from __future__ import annotations

import math

import numpy as np

from ..accm import MAX_TENSOR_BYTES
from ..errors import CompileError
from ..importer import DEFAULT_DOMAINS, Imported
from ..ir import Graph, Node, Value
from ..quant import QUANT_DTYPES

F32 = np.dtype(np.float32)
# The integer dtypes the runtime computes on (add .. max, compare, the index ops).
INT_DTYPES = frozenset(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                             np.int64, np.uint64))


def unsupported(node, what=None) -> CompileError:
    dom = f" (domain '{node.domain}')" if node.domain not in DEFAULT_DOMAINS else ""
    if what is None:
        return CompileError(f"unsupported op '{node.op}'{dom} (node '{node.name}')")
    return CompileError(f"unsupported {what} in op '{node.op}' (node '{node.name}')")


class Ctx:
    def __init__(self, imp: Imported, int8: str = "ort"):
        self.g: Graph = imp.graph
        self.imp = imp
        self.opset = imp.opset
        self.used = imp.used
        self.int8 = int8  # the integer rules (compile_model's int8), which the quantized ops are checked against

    def queued(self, nodes: list) -> list:
        """`nodes`, ONNX nodes a step puts in place of a node (a branch, a body, casts), with their inputs added to
        what the model uses."""
        for n in nodes:
            self.used.update(i for i in n.all_inputs if i)
        return nodes

    # ---- inputs ----
    def input(self, node, i) -> Value:
        if i >= len(node.inputs) or not node.inputs[i]:
            raise CompileError(f"{node.label}: input {i} is required")
        return self.g.value(node.inputs[i])

    def input_opt(self, node, i):
        if i >= len(node.inputs) or not node.inputs[i]:
            return None
        return self.g.value(node.inputs[i])

    def const_input(self, node, i, what):
        v = self.input_opt(node, i)
        if v is None:
            return None
        if not v.is_const:
            raise CompileError(f"{node.label}: {what} ('{v.name}') must be a constant "
                               f"(after constant folding)")
        return v.const

    def output(self, node, i=0) -> str:
        if i >= len(node.outputs) or not node.outputs[i]:
            raise CompileError(f"{node.label}: output {i} is required")
        return node.outputs[i]

    def forbid_outputs_from(self, node, first, why):
        for o in node.outputs[first:]:
            if o and o in self.used:
                raise unsupported(node, f"output '{o}' ({why})")

    # ---- building ----
    def define(self, name, dtype, shape, quant=None) -> str:
        shape = _within_format(name, dtype, shape)
        self.g.values[name] = Value(name, np.dtype(dtype) if dtype is not None else None, shape, quant=quant)
        return name

    def temp(self, hint, dtype, shape, quant=None) -> str:
        name = self.g.add_value(hint, dtype, _within_format(hint, dtype, shape))
        self.g.values[name].quant = quant
        return name

    def const(self, array, hint) -> str:
        return self.g.add_const(np.asarray(array, order="C"), hint)

    def emit(self, op, inputs, outputs, name, **kw) -> Node:
        n = Node(op, list(inputs), list(outputs), name, **kw)
        self.g.nodes.append(n)
        return n

    def copy_to(self, src: str, dst_name: str, shape, name) -> str:
        """A copy node from src into a new value dst_name shaped `shape` (a reshape)."""
        v = self.g.value(src)
        shape = tuple(int(d) for d in shape)
        if int(np.prod(shape, dtype=np.int64)) != int(np.prod(v.shape, dtype=np.int64)):
            raise CompileError(f"node '{name}': cannot reshape '{src}' {v.shape} to {shape}")
        self.define(dst_name, v.dtype, shape, quant=v.quant if v.quant is not None and v.quant.per_tensor else None)
        self.emit("copy", [src], [dst_name], name)
        return dst_name

    def reshape_temp(self, src: str, shape, name, hint) -> str:
        return self.copy_to(src, self.g.names.new(hint), shape, name)

    # ---- quantized tensors ----
    def quantized(self, name: str, q, node) -> str:
        """The runtime tensor `name` (int8 or uint8) read with quantization q: itself when it has q or no
        quantization yet (it takes q), else a copy that reinterprets its integers with q (ONNX keeps scales
        on the Q/DQ nodes, so one tensor may be read with different ones)."""
        v = self.g.value(name)
        if v.dtype not in QUANT_DTYPES:
            raise CompileError(f"{node.label}: input '{name}' is {v.dtype}, not int8 or uint8")
        if v.is_const:
            return self.quantized_const(name, q)
        if v.quant is None:
            v.quant = q
            return name
        if v.quant.same(q):
            return name
        out = self.temp(f"{name}_requant", v.dtype, v.shape, quant=q)
        self.emit("copy", [name], [out], node.name)
        return out

    def quantized_const(self, name: str, q) -> str:
        """The constant `name` with quantization q: itself if it has q or none yet, else a new constant."""
        v = self.g.value(name)
        if v.quant is None or v.quant.same(q):
            v.quant = q
            return name
        out = self.const(v.const, f"{name}_q")
        self.g.values[out].quant = q
        return out


def normalize_axis(node, axis, rank, what="axis", allow_end=False):
    """axis in [-rank, rank) (or [-rank, rank] with allow_end) -> a non-negative axis."""
    axis = int(axis)
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < (rank + 1 if allow_end else rank):
        raise CompileError(f"{node.label}: {what} {axis} is out of range for rank {rank}")
    return a


def _within_format(name, dtype, shape) -> tuple:
    """`shape` as plain ints, refused (CompileError) when the tensor would pass the format's size limit:
    so no later step computes its size in int64 and overflows (huge Tile repeats, say)."""
    shape = tuple(int(d) for d in shape)
    nbytes = math.prod(max(d, 0) for d in shape) * (np.dtype(dtype).itemsize if dtype is not None else 1)
    if nbytes > MAX_TENSOR_BYTES:
        raise CompileError(f"tensor '{name}' of shape {list(shape)} would take {nbytes} bytes, past the "
                           f"format's limit of {MAX_TENSOR_BYTES}")
    return shape


def element_count(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def broadcast_shape(node, *shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise CompileError(f"{node.label}: shapes {' and '.join(str(tuple(s)) for s in shapes)} "
                           f"do not broadcast") from None


def same_dtype(node, values) -> None:
    """Raises CompileError naming the first two of `values` (Values) whose dtypes differ."""
    for v in values[1:]:
        if v.dtype != values[0].dtype:
            raise CompileError(f"{node.label}: inputs '{values[0].name}' ({values[0].dtype}) and '{v.name}' "
                               f"({v.dtype}) differ in dtype")


def float_input(ctx, node, i) -> Value:
    """Input i, which must be present and float32."""
    v = ctx.input(node, i)
    if v.dtype != F32:
        raise unsupported(node, f"dtype {v.dtype} of input '{v.name}' (float32 only)")
    return v


class NodeView:
    """A node seen as another op with other inputs (the same name, outputs and attributes, but those given in
    `attrs`): how a handler lowers part of a node through another op's handler."""

    def __init__(self, node, op, inputs, **attrs):
        self._node, self.op, self.inputs, self._attrs = node, op, inputs, attrs
        self.name, self.outputs, self.domain = node.name, node.outputs, ""

    @property
    def label(self):
        return self._node.label

    def attr(self, name, default=None):
        return self._attrs[name] if name in self._attrs else self._node.attr(name, default)
