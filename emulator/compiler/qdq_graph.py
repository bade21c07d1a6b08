"""The view of an imported ONNX node list that the QDQ passes (qdq_cleanup.py, qdq.py) work on: producers,
consumers, constants, and the questions they ask of DequantizeLinear and QuantizeLinear nodes."""
from __future__ import annotations

import numpy as np
from onnx import helper

from .importer import DEFAULT_DOMAINS, Imported, OnnxNode
from .quant import QUANT_DTYPES

MS = "com.microsoft"
ACCEL = "ai.accel"  # the domain of accel's own internal ops (QLinearActivation)
DQ, Q = "DequantizeLinear", "QuantizeLinear"


class QdqGraph:
    """The node list with its producer and consumer maps, and what is constant."""

    def __init__(self, imp: Imported):
        self.imp = imp
        self.values = imp.graph.values
        # Requested extra outputs do not hold fusion back (extra_outputs.py): looking must not change the integers.
        self.outputs = set(imp.graph.outputs) - imp.graph.extra_outputs
        self.producer = {o: n for n in imp.nodes for o in n.outputs if o}
        self.consumers: dict = {}
        for n in imp.nodes:
            for i in n.inputs:
                if i:
                    self.consumers.setdefault(i, []).append(n)

    def is_const(self, name: str) -> bool:
        return not name or (name in self.values and self.values[name].is_const)

    def const(self, name: str):
        return self.values[name].const if name and name in self.values else None

    def params_ok(self, n, integers=QUANT_DTYPES) -> bool:
        """Does Q or DQ node n have what the passes read: a constant float32 scale, a constant zero point of
        one of `integers` (or none) of the scale's size, no blocks? (Anything else is left to the lowering,
        which refuses it with a message.)"""
        if len(n.inputs) < 2 or not n.inputs[1] or int(n.attr("block_size", 0)):
            return False
        if not all(self.is_const(i) for i in n.inputs[1:3]):
            return False
        s, z = self.const(n.inputs[1]), self.zero(n)
        if s.dtype != np.float32 or s.size < 1:
            return False
        return z is None or (z.dtype in integers and z.size == s.size)

    def dq(self, name: str, bias: bool = False):
        """The DequantizeLinear producing `name` with constant scale and zero point and 8-bit integers (int32
        ones for a bias), or None."""
        n = self.producer.get(name)
        if n is None or n.op != DQ or n.domain not in DEFAULT_DOMAINS or not n.inputs:
            return None
        integers = (np.dtype(np.int32),) if bias else QUANT_DTYPES
        v = self.values.get(n.inputs[0])
        if v is not None and v.dtype not in integers:
            return None
        return n if self.params_ok(n, integers) else None

    def only_user(self, name: str, op: str):
        """The node of type `op` that alone reads `name` (not a graph output), else None."""
        if not name or name in self.outputs:
            return None
        users = self.consumers.get(name, [])
        if len(users) != 1 or users[0].op != op or users[0].domain not in DEFAULT_DOMAINS:
            return None
        return users[0]

    def only_q(self, node):
        """The QuantizeLinear with constant per-tensor-or-axis parameters that alone consumes node's single
        output, else None."""
        outs = [o for o in node.outputs if o]
        q = self.only_user(outs[0], Q) if len(outs) == 1 else None
        return q if q is not None and self.params_ok(q) else None

    def per_tensor(self, *nodes) -> bool:
        """Does each Q or DQ node carry one scale (and zero point)?"""
        return all(self.scale(n).size == 1 for n in nodes)

    def scale(self, n) -> np.ndarray:
        return np.asarray(self.values[n.inputs[1]].const)

    def zero(self, n):
        """A Q or DQ node's zero point array, None when absent."""
        return np.asarray(self.const(n.inputs[2])) if len(n.inputs) > 2 and n.inputs[2] else None

    def int_type(self, n):
        """The integer dtype of a Q or DQ node's quantized side (the zero point's, else a Q's output_dtype, the
        DQ input's or its producing Q's, or uint8)."""
        z = self.zero(n)
        if z is not None and z.dtype != object:  # object: a zero point computed at run time
            return z.dtype
        if n.op == Q and n.attr("output_dtype"):
            try:
                return np.dtype(helper.tensor_dtype_to_np_dtype(int(n.attr("output_dtype"))))
            except Exception:  # not a dtype numpy has: the lowering refuses it, naming it
                return np.dtype(object)
        if n.op == DQ and n.inputs[0] in self.values and self.values[n.inputs[0]].dtype is not None:
            return self.values[n.inputs[0]].dtype
        q = self.producer.get(n.inputs[0]) if n.op == DQ else None
        if q is not None and q.op == Q and q.domain in DEFAULT_DOMAINS:  # a tensor the import has no type for yet
            return self.int_type(q)
        return np.dtype(np.uint8)

    def same_params(self, a, b) -> bool:
        """Do two Q/DQ nodes carry the same constant per-tensor scale and zero point (and integer type)?"""
        sa, sb = self.scale(a), self.scale(b)
        if sa.size != 1 or sb.size != 1 or sa.reshape(()) != sb.reshape(()):
            return False
        za, zb = self.zero(a), self.zero(b)
        if any(z is not None and z.size != 1 for z in (za, zb)):
            return False
        za = 0 if za is None else int(za.reshape(()))
        zb = 0 if zb is None else int(zb.reshape(()))
        return za == zb and self.int_type(a) == self.int_type(b)


def scale_zero(n) -> list:
    """A Q or DQ node's scale and zero point inputs ("" for an absent zero point)."""
    return [n.inputs[1], n.inputs[2] if len(n.inputs) > 2 else ""]


def make_node(op, domain, inputs, outputs, like, **attrs) -> OnnxNode:
    """A node of type op in `domain` (None: ONNX's) named as `like`, with like's attributes and `attrs`."""
    proto = helper.make_node(op, inputs, outputs, name=like.name, domain="" if domain is None else domain)
    for a in like.proto.attribute:
        if a.name not in attrs:
            proto.attribute.append(a)
    for k, v in attrs.items():
        proto.attribute.append(helper.make_attribute(k, v))
    return OnnxNode(proto, 0)


def replaced(nodes, replace: dict, gone: set) -> list:
    """`nodes` (of any kind) with the node of each id in `replace` replaced by its value and those in `gone` dropped."""
    return [replace.get(id(node), node) for node in nodes if id(node) in replace or id(node) not in gone]


def rewrite(imp: Imported, replace: dict, gone: set) -> None:
    """imp.nodes with the node of each id in `replace` replaced by its value and those in `gone` dropped;
    imp.used follows."""
    out = replaced(imp.nodes, replace, gone)
    imp.nodes[:] = out
    imp.used.clear()
    imp.used.update({i for n in out for i in n.inputs if i} | set(imp.graph.outputs))
