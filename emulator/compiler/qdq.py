"""QDQ fusion: the DequantizeLinear -> op -> QuantizeLinear groups of a QDQ model become onnxruntime's
operator-form ops (QLinearConv, com.microsoft QLinearAdd, ...), as onnxruntime's graph optimizer fuses them
on x86 with int8 activations allowed (session.qdqisint8allowed=1); around ops that only move data
(MaxPool, Reshape, Transpose, ...) the pair is dropped and the op runs on the integers. Bit-identity with
onnxruntime rests on fusing exactly what it fuses: an op left out runs in float between its DQ and Q (and
rounds differently), one fused that onnxruntime leaves in float would too.

Runs on the imported ONNX nodes, before lowering; lower/quantized.py lowers what this makes.
"""
from __future__ import annotations

from onnx import helper

from .importer import DEFAULT_DOMAINS, Imported, OnnxNode
from .quant import QUANT_DTYPES

MS = "com.microsoft"
DQ, Q = "DequantizeLinear", "QuantizeLinear"

# op -> (fused op, its domain, how its inputs are laid out).
UNARY = {"Sigmoid": ("QLinearSigmoid", MS), "LeakyRelu": ("QLinearLeakyRelu", MS),
         "AveragePool": ("QLinearAveragePool", MS), "GlobalAveragePool": ("QLinearGlobalAveragePool", MS),
         "Softmax": ("QLinearSoftmax", MS)}
BINARY = {"Add": ("QLinearAdd", MS), "Mul": ("QLinearMul", MS)}
# Elementwise ops onnxruntime leaves in float between their DQ and Q, computed here as the 8-bit table of
# exactly that (dequantize, its float function, quantize): the same integers, one lookup each.
TABLE = frozenset({"Relu", "Clip", "HardSigmoid", "HardSwish"})
ACCEL = "ai.accel"  # the domain of the internal op that carries them (QLinearActivation)
# Ops whose Q/DQ pair is dropped when both carry the same scale and zero point.
DATA_MOVEMENT = frozenset({"MaxPool", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Gather", "Flatten"})


class _Graph:
    """The node list with its producer and consumer maps, and what is constant."""

    def __init__(self, imp: Imported):
        self.imp = imp
        self.values = imp.graph.values
        self.outputs = set(imp.graph.outputs)
        self.producer = {o: n for n in imp.nodes for o in n.outputs if o}
        self.consumers: dict = {}
        for n in imp.nodes:
            for i in n.inputs:
                if i:
                    self.consumers.setdefault(i, []).append(n)

    def is_const(self, name: str) -> bool:
        return not name or (name in self.values and self.values[name].is_const)

    def dq(self, name: str):
        """The DequantizeLinear producing `name` with constant scale and zero point, else None."""
        n = self.producer.get(name)
        if n is None or n.op != DQ or n.domain not in DEFAULT_DOMAINS or int(n.attr("block_size", 0)):
            return None
        return n if all(self.is_const(i) for i in n.inputs[1:3]) else None

    def only_q(self, node):
        """The QuantizeLinear that alone consumes node's single output (not a graph output), else None."""
        outs = [o for o in node.outputs if o]
        if len(outs) != 1 or outs[0] in self.outputs:
            return None
        users = self.consumers.get(outs[0], [])
        if len(users) != 1 or users[0].op != Q or users[0].domain not in DEFAULT_DOMAINS:
            return None
        q = users[0]
        return q if all(self.is_const(i) for i in q.inputs[1:3]) and not int(q.attr("block_size", 0)) else None

    def same_params(self, a, b) -> bool:
        """Do two Q/DQ nodes carry the same constant scale and zero point (per tensor)?"""
        sa, sb = self.values[a.inputs[1]].const, self.values[b.inputs[1]].const
        if sa.size != 1 or sb.size != 1 or sa.reshape(()) != sb.reshape(()):
            return False
        za, zb = (self._zero(n) for n in (a, b))
        return za is not None and zb is not None and za.dtype == zb.dtype and za.reshape(()) == zb.reshape(())

    def _zero(self, n):
        if len(n.inputs) > 2 and n.inputs[2]:
            return self.values[n.inputs[2]].const
        return None


def _scale_zero(n) -> list:
    """A Q or DQ node's scale and zero point inputs ("" for an absent zero point)."""
    return [n.inputs[1], n.inputs[2] if len(n.inputs) > 2 else ""]


def _q8_dq(g: _Graph, dq) -> bool:
    v = g.values.get(dq.inputs[0])
    return v is None or v.dtype in QUANT_DTYPES


def _make(op, domain, inputs, outputs, like, **attrs) -> OnnxNode:
    proto = helper.make_node(op, inputs, outputs, name=like.name, domain="" if domain is None else domain)
    for a in like.proto.attribute:
        if a.name not in attrs:
            proto.attribute.append(a)
    for k, v in attrs.items():
        proto.attribute.append(helper.make_attribute(k, v))
    return OnnxNode(proto, 0)


def _fuse(g: _Graph, node):
    """(the fused node, the nodes it replaces) for one candidate node, or None."""
    if node.domain not in DEFAULT_DOMAINS:
        return None
    op = node.op
    if op in DATA_MOVEMENT:
        dq = g.dq(node.inputs[0]) if node.inputs else None
        q = g.only_q(node)
        if dq is None or q is None or not g.same_params(dq, q) or not _q8_dq(g, dq):
            return None
        extra = [i for i in node.inputs[1:]]
        return _make(op, None, [dq.inputs[0], *extra], q.outputs, node), [dq, node, q]
    if op in TABLE:
        dq = g.dq(node.inputs[0]) if node.inputs else None
        q = g.only_q(node)
        if dq is None or q is None or not _q8_dq(g, dq) or not all(g.is_const(i) for i in node.inputs[1:]):
            return None
        ins = [dq.inputs[0], *_scale_zero(dq), *_scale_zero(q), *node.inputs[1:]]
        return _make("QLinearActivation", ACCEL, ins, q.outputs, node, activation=op), [dq, node, q]
    if op in UNARY or op in BINARY or op == "Conv" or op == "MatMul" or op == "Concat" or op == "Gemm":
        data = _data_inputs(node)
        dqs = [g.dq(i) for i in data]
        if any(d is None or not _q8_dq(g, d) for d in dqs):
            return None
        q = g.only_q(node)
        if op == "Conv":
            return _conv(g, node, dqs, q)
        if op == "Gemm":
            return _gemm(g, node, dqs, q)
        if q is None:
            return None
        x = [[d.inputs[0], *_scale_zero(d)] for d in dqs]
        y = _scale_zero(q)
        if op in UNARY:
            fused, dom = UNARY[op]
            extra = {"opset": g.imp.opset} if op == "Softmax" else {}
            return _make(fused, dom, [*x[0], *y], q.outputs, node, **extra), [*dqs, node, q]
        if op in BINARY:
            fused, dom = BINARY[op]
            return _make(fused, dom, [*x[0], *x[1], *y], q.outputs, node), [*dqs, node, q]
        if op == "MatMul":
            return _make("QLinearMatMul", None, [*x[0], *x[1], *y], q.outputs, node), [*dqs, node, q]
        return _make("QLinearConcat", MS, [*y, *[t for xi in x for t in xi]], q.outputs, node), [*dqs, node, q]
    return None


def _data_inputs(node) -> list:
    if node.op == "Conv" or node.op == "Gemm":
        return [i for i in node.inputs[:2]]
    return list(node.inputs)


def _conv(g: _Graph, node, dqs, q):
    x, w = dqs
    if q is None or not g.is_const(w.inputs[0]):
        return None
    bias = ""
    replaced = [x, w, node, q]
    if len(node.inputs) > 2 and node.inputs[2]:
        b = g.dq(node.inputs[2])
        if b is None or not g.is_const(b.inputs[0]):
            return None
        bias = b.inputs[0]
        replaced.insert(2, b)
    ins = [x.inputs[0], *_scale_zero(x), w.inputs[0], *_scale_zero(w), *_scale_zero(q), bias]
    return _make("QLinearConv", None, ins, q.outputs, node), replaced


def _gemm(g: _Graph, node, dqs, q):
    a, b = dqs
    if not g.is_const(b.inputs[0]) or float(node.attr("beta", 1.0)) != 1.0 and len(node.inputs) > 2:
        return None
    bias = ""
    replaced = [a, b, node]
    if len(node.inputs) > 2 and node.inputs[2]:
        c = g.dq(node.inputs[2])
        if c is None or not g.is_const(c.inputs[0]):
            return None
        bias = c.inputs[0]
        replaced.append(c)
    y = _scale_zero(q) if q is not None else []
    outs = q.outputs if q is not None else node.outputs
    if q is not None:
        replaced.append(q)
    ins = [a.inputs[0], *_scale_zero(a), b.inputs[0], *_scale_zero(b), bias, *y]
    return _make("QGemm", MS, ins, outs, node), replaced


def fuse(imp: Imported) -> None:
    """Rewrites imp.nodes in place: each fusable group becomes one node at the position of its op; a
    DequantizeLinear stays while another node still reads its output."""
    g = _Graph(imp)
    fused_at: dict = {}
    gone: set = set()
    for node in imp.nodes:
        if id(node) in gone:
            continue
        hit = _fuse(g, node)
        if hit is None:
            continue
        new, replaced = hit
        fused_at[id(node)] = new
        for r in replaced:
            if r.op != DQ:
                gone.add(id(r))
        for r in replaced:  # a DQ goes once every reader of its output is gone
            if r.op == DQ and all(id(c) in gone for c in g.consumers.get(r.outputs[0], [])):
                gone.add(id(r))
    out = []
    for node in imp.nodes:
        if id(node) in fused_at:
            out.append(fused_at[id(node)])
        elif id(node) not in gone:
            out.append(node)
    imp.nodes[:] = out
    imp.used.clear()
    imp.used.update({i for n in out for i in n.inputs if i} | set(imp.graph.outputs))
