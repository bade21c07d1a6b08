"""QDQ fusion: the DequantizeLinear -> op -> QuantizeLinear groups of a QDQ model become onnxruntime's
operator-form ops (QLinearConv, com.microsoft QLinearAdd, ...), as onnxruntime's graph optimizer fuses them
on x86 with int8 activations allowed (session.qdqisint8allowed=1); around ops that only move data
(MaxPool, Reshape, Transpose, ...) the pair is dropped and the op runs on the integers. Bit-identity with
onnxruntime rests on fusing exactly what it fuses: an op left out runs in float between its DQ and Q (and
rounds differently), one fused that onnxruntime leaves in float would too. qdq_cleanup.py makes the
rewrites onnxruntime makes first.

Runs on the imported ONNX nodes, before lowering; lower/quantized.py, qlinear.py and qinteger.py lower what
this makes.
"""
from __future__ import annotations

import numpy as np

from . import qdq_cleanup
from .importer import DEFAULT_DOMAINS, Imported
from .qdq_graph import ACCEL, DQ, MS, QdqGraph, make_node, rewrite, scale_zero

__all__ = ["ACCEL", "INT8_FORMS", "MS", "fuse"]

# op -> (fused op, its domain).
UNARY = {"Sigmoid": ("QLinearSigmoid", MS), "LeakyRelu": ("QLinearLeakyRelu", MS),
         "AveragePool": ("QLinearAveragePool", MS), "GlobalAveragePool": ("QLinearGlobalAveragePool", MS),
         "Softmax": ("QLinearSoftmax", MS)}
BINARY = {"Add": ("QLinearAdd", MS), "Mul": ("QLinearMul", MS)}
# Elementwise ops onnxruntime leaves in float between their DQ and Q (a Relu or Clip it could not remove),
# computed here as the 8-bit table of exactly that (dequantize, its float function, quantize): the same
# integers, one lookup each.
TABLE = frozenset({"Relu", "Clip", "HardSigmoid", "HardSwish", "Tanh"})
# Ops that only move or select data: with the same scale and zero point on both sides the pair is dropped
# (which changes no value: quantizing a dequantized integer gives it back) and the op runs on the integers.
DATA_MOVEMENT = frozenset({"MaxPool", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Gather", "Flatten", "Slice",
                           "Expand", "Identity"})
# A bias is fused when its scale is the input's times the weights' within onnxruntime's tolerance.
BIAS_SCALE_RTOL, BIAS_SCALE_ATOL = 0.01, 1e-6

# What each ONNX op becomes in a QDQ model when its DQ -> op -> Q group fuses (docs/ops.md's int8 column).
INT8_FORMS = {
    "Conv": "qconv", "MatMul": "qmatmul (matmulinteger and a float scale without Q)",
    "Gemm": "qgemm (int8 or float output)", "Add": "qadd", "Mul": "qmul",
    "Sigmoid": "qactivation (onnxruntime's logistic)", "LeakyRelu": "qactivation", "AveragePool": "qavgpool",
    "GlobalAveragePool": "qglobalavgpool", "Softmax": "qsoftmax", "Concat": "concat, inputs requantized by tables",
    **dict.fromkeys(TABLE, "qactivation (onnxruntime's float function as a table)"),
    **dict.fromkeys(DATA_MOVEMENT, "on the integers (Q/DQ dropped)"),
}


def _int8_weights_ok(g: QdqGraph, x, w) -> bool:
    """int8 activations fuse only with int8 weights."""
    return not (g.int_type(x) == np.int8 and g.int_type(w) == np.uint8)


def _bias_ok(g: QdqGraph, x, w, b) -> bool:
    want = (g.scale(x).astype(np.float64) * g.scale(w).astype(np.float64)).reshape(-1)
    got = g.scale(b).astype(np.float64).reshape(-1)
    if got.size not in (1, want.size) and want.size != 1:
        return False
    return bool(np.all(np.abs(got - want) <= BIAS_SCALE_ATOL + BIAS_SCALE_RTOL * np.abs(want)))


def _data_movement(g: QdqGraph, node):
    dq = g.dq(node.inputs[0]) if node.inputs else None
    q = g.only_q(node)
    if dq is None or q is None or not g.same_params(dq, q) or not all(g.is_const(i) for i in node.inputs[1:]):
        return None
    if node.op == "MaxPool" and (g.imp.opset < 12 or not float(g.scale(dq).reshape(())) > 0):
        return None
    return make_node(node.op, None, [dq.inputs[0], *node.inputs[1:]], q.outputs, node), [dq, node, q]


def _table(g: QdqGraph, node):
    dq = g.dq(node.inputs[0]) if node.inputs else None
    q = g.only_q(node)
    if dq is None or q is None or not g.per_tensor(dq, q) or not all(g.is_const(i) for i in node.inputs[1:]):
        return None
    ins = [dq.inputs[0], *scale_zero(dq), *scale_zero(q), *node.inputs[1:]]
    return make_node("QLinearActivation", ACCEL, ins, q.outputs, node, activation=node.op), [dq, node, q]


def _conv(g: QdqGraph, node):
    x, w = (g.dq(i) for i in node.inputs[:2])
    q = g.only_q(node)
    if x is None or w is None or q is None or not g.is_const(w.inputs[0]) or not _int8_weights_ok(g, x, w) \
            or not g.per_tensor(x, q):
        return None
    bias, replaced = "", [x, w, node, q]
    if len(node.inputs) > 2 and node.inputs[2]:
        b = g.dq(node.inputs[2], bias=True)
        if b is None or not g.is_const(b.inputs[0]) or not _bias_ok(g, x, w, b):
            return None
        bias = b.inputs[0]
        replaced.insert(2, b)
    ins = [x.inputs[0], *scale_zero(x), w.inputs[0], *scale_zero(w), *scale_zero(q), bias]
    return make_node("QLinearConv", None, ins, q.outputs, node), replaced


def _matmul(g: QdqGraph, node):
    a, b = (g.dq(i) for i in node.inputs[:2])
    if a is None or b is None or not _int8_weights_ok(g, a, b) or not g.per_tensor(a):
        return None
    q = g.only_q(node)
    if q is not None and not g.per_tensor(q):
        return None
    if q is not None:
        ins = [a.inputs[0], *scale_zero(a), b.inputs[0], *scale_zero(b), *scale_zero(q)]
        return make_node("QLinearMatMul", None, ins, q.outputs, node), [a, b, node, q]
    if not g.is_const(b.inputs[0]):
        return None
    sa, za = scale_zero(a)
    sb, zb = scale_zero(b)
    ins = [a.inputs[0], b.inputs[0], sa, sb, za, zb]
    return make_node("MatMulIntegerToFloat", MS, ins, node.outputs, node), [a, b, node]


def _gemm(g: QdqGraph, node):
    a, b = (g.dq(i) for i in node.inputs[:2])
    if a is None or b is None or not g.is_const(b.inputs[0]) or not _int8_weights_ok(g, a, b) \
            or not g.per_tensor(a):
        return None
    q = g.only_q(node)
    if q is not None and not g.per_tensor(q):
        return None
    bias, replaced = "", [a, b, node]
    if len(node.inputs) > 2 and node.inputs[2]:
        c = g.dq(node.inputs[2], bias=True)
        if c is None or not g.is_const(c.inputs[0]) or float(node.attr("beta", 1.0)) != 1.0 or not _bias_ok(g, a, b, c):
            return None
        bias = c.inputs[0]
        replaced.append(c)
    y = scale_zero(q) if q is not None else []
    if q is not None:
        replaced.append(q)
    ins = [a.inputs[0], *scale_zero(a), b.inputs[0], *scale_zero(b), bias, *y]
    return make_node("QGemm", MS, ins, q.outputs if q is not None else node.outputs, node), replaced


def _elementwise(g: QdqGraph, node):
    """Unary and binary QLinear ops and QLinearConcat: every input from a DQ (of one integer type for a
    binary op), the output to a Q."""
    dqs = [g.dq(i) for i in node.inputs]
    q = g.only_q(node)
    if q is None or not dqs or any(d is None for d in dqs) or not g.per_tensor(q, *dqs):
        return None
    x = [[d.inputs[0], *scale_zero(d)] for d in dqs]
    y = scale_zero(q)
    if node.op in UNARY:
        fused, dom = UNARY[node.op]
        extra = {"opset": g.imp.opset} if node.op == "Softmax" else {}
        return make_node(fused, dom, [*x[0], *y], q.outputs, node, **extra), [*dqs, node, q]
    if node.op in BINARY:
        if g.int_type(dqs[0]) != g.int_type(dqs[1]):
            return None
        fused, dom = BINARY[node.op]
        return make_node(fused, dom, [*x[0], *x[1], *y], q.outputs, node), [*dqs, node, q]
    return make_node("QLinearConcat", MS, [*y, *[t for xi in x for t in xi]], q.outputs, node), [*dqs, node, q]


# The inputs a fusable op must have (a malformed node is left to the lowering, which refuses it).
ARITY = {"Conv": (2, 3), "MatMul": (2, 2), "Gemm": (2, 3), **dict.fromkeys(BINARY, (2, 2))}


def _fuse(g: QdqGraph, node):
    """(the fused node, the nodes it replaces) for one candidate node, or None."""
    lo, hi = ARITY.get(node.op, (1, 1 << 30))
    if node.domain not in DEFAULT_DOMAINS or not lo <= len(node.inputs) <= hi or not all(node.inputs[:lo]):
        return None
    if node.op in DATA_MOVEMENT:
        return _data_movement(g, node)
    if node.op in TABLE:
        return _table(g, node)
    if node.op == "Conv":
        return _conv(g, node)
    if node.op == "MatMul":
        return _matmul(g, node)
    if node.op == "Gemm":
        return _gemm(g, node)
    if node.op in UNARY or node.op in BINARY or node.op == "Concat":
        return _elementwise(g, node)
    return None


# What the devices do not compute as onnxruntime's integer kernel does (their runtimes run it in float): under
# their rules it stays DQ -> op -> Q.
NOT_ON_DEVICES = frozenset({"Softmax"})


def fuse(imp: Imported, int8: str = "ort") -> None:
    """Rewrites imp.nodes in place, as onnxruntime does: the clean-ups first (qdq_cleanup.py), then each
    fusable group becomes one node at the position of its op; a DequantizeLinear stays while another node
    still reads its output. A device's rules (int8 "dpu" or "bpu") leave NOT_ON_DEVICES in float (qdq_device.py
    has prepared the rest)."""
    qdq_cleanup.remove_redundant_activations(imp)
    qdq_cleanup.merge_double_pairs(imp)
    g = QdqGraph(imp)
    fused_at: dict = {}
    gone: set = set()
    for node in imp.nodes:
        if id(node) in gone or (int8 != "ort" and node.op in NOT_ON_DEVICES):
            continue
        hit = _fuse(g, node)
        if hit is None:
            continue
        new, replaced = hit
        fused_at[id(node)] = new
        gone.update(id(r) for r in replaced if r.op != DQ)
        for r in replaced:  # a DQ goes once every reader of its output is gone
            if r.op == DQ and r.outputs[0] not in g.outputs and \
                    all(id(c) in gone for c in g.consumers.get(r.outputs[0], [])):
                gone.add(id(r))
    rewrite(imp, fused_at, gone)
