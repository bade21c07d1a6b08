"""The rewrites onnxruntime makes of a QDQ graph before it fuses groups (qdq.py), each of which changes what
the model computes, so they are made here too:
- a Relu before a QuantizeLinear whose zero point is its type's minimum, and a Clip before one whose range
  it does not narrow (within FLT_EPSILON), are removed (the quantization saturates as they would);
- Q1 -> DQ1 -> Q2 -> DQ2 becomes one Q -> DQ pair whose range is the intersection of the two, its zero point
  rounded half away from zero."""
from __future__ import annotations

import numpy as np

from .importer import Imported
from .qdq_graph import DQ, Q, QdqGraph, rewrite
from .quant import QUANT_DTYPES

FLT_EPSILON = float(np.finfo(np.float32).eps)


def _range(g: QdqGraph, q):
    """(qmin, qmax, scale, zero point) of a Q or DQ node with constant 8-bit per-tensor parameters, or None."""
    if not g.params_ok(q) or g.int_type(q) not in QUANT_DTYPES:
        return None
    s = g.scale(q)
    if s.size != 1:
        return None
    info = np.iinfo(g.int_type(q))
    z = g.zero(q)
    return info.min, info.max, float(s.reshape(())), 0 if z is None else int(z.reshape(()))


def _clip_bounds(g: QdqGraph, node):
    """Clip's (min, max) as floats (-inf, inf when absent), or None when one is not a constant scalar."""
    if g.imp.opset < 11:
        return float(node.attr("min", -np.inf)), float(node.attr("max", np.inf))
    bounds = []
    for i, default in ((1, -np.inf), (2, np.inf)):
        name = node.inputs[i] if len(node.inputs) > i else ""
        if name and (not g.is_const(name) or np.asarray(g.const(name)).size != 1):
            return None  # computed at run time, or not a scalar (the lowering refuses that)
        bounds.append(float(np.asarray(g.const(name)).reshape(())) if name else default)
    return tuple(bounds)


def _redundant(g: QdqGraph, node, q) -> bool:
    r = _range(g, q)
    if r is None:
        return False
    qmin, qmax, s, z = r
    if node.op == "Relu":
        return z == qmin
    bounds = _clip_bounds(g, node)
    if bounds is None:
        return False
    lo, hi = bounds
    return lo - s * (qmin - z) <= FLT_EPSILON and s * (qmax - z) - hi <= FLT_EPSILON


def remove_redundant_activations(imp: Imported) -> None:
    """Drops each Relu or Clip whose only reader is a QuantizeLinear that saturates as it would."""
    g = QdqGraph(imp)
    gone: set = set()
    for node in imp.nodes:
        if node.op not in ("Relu", "Clip") or node.domain not in ("", "ai.onnx"):
            continue
        q = g.only_q(node)
        if q is None or not _redundant(g, node, q):
            continue
        q.inputs[0] = node.inputs[0]
        q.proto.input[0] = node.inputs[0]
        gone.add(id(node))
    if gone:
        rewrite(imp, {}, gone)


def _merged_params(g: QdqGraph, q1, q2):
    """The scale and zero point of the one pair that replaces Q1 -> DQ1 -> Q2 -> DQ2, in float32."""
    qmin, qmax, s1, z1 = _range(g, q1)
    _, _, s2, z2 = _range(g, q2)
    f = np.float32
    rmin = max(f(f(qmin - z1) * f(s1)), f(f(qmin - z2) * f(s2)))
    rmax = min(f(f(qmax - z1) * f(s1)), f(f(qmax - z2) * f(s2)))
    scale = f(f(rmax - rmin) / f(qmax - qmin))
    t = float(f(f(qmin) - f(rmin / scale)))
    zero = int(np.floor(t + 0.5)) if t >= 0 else -int(np.floor(-t + 0.5))  # std::round: half away from zero
    return np.asarray(scale, np.float32), np.asarray(zero).astype(g.int_type(q1))


def merge_double_pairs(imp: Imported) -> None:
    """Q1 -> DQ1 -> Q2 -> DQ2, each read only by the next, per tensor, one integer type: Q1 and DQ2 take the
    merged parameters and read each other, DQ1 and Q2 go."""
    g = QdqGraph(imp)
    gone: set = set()
    for q1 in imp.nodes:
        if q1.op != Q or id(q1) in gone or _range(g, q1) is None:
            continue
        dq1 = g.only_user(q1.outputs[0], DQ)
        q2 = g.only_user(dq1.outputs[0], Q) if dq1 is not None else None
        dq2 = g.only_user(q2.outputs[0], DQ) if q2 is not None else None
        if dq2 is None or any(_range(g, n) is None for n in (dq1, q2, dq2)) or g.int_type(q1) != g.int_type(q2):
            continue
        if not (g.same_params(q1, dq1) and g.same_params(q2, dq2)):
            continue
        if g.same_params(q1, q2):
            scale_name, zero_name = q1.inputs[1], q1.inputs[2] if len(q1.inputs) > 2 else ""
        else:
            scale, zero = _merged_params(g, q1, q2)
            scale_name = imp.graph.add_const(scale, f"{q1.name}_merged_scale")
            zero_name = imp.graph.add_const(zero, f"{q1.name}_merged_zero_point")
        for n, x in ((q1, q1.inputs[0]), (dq2, q1.outputs[0])):
            n.inputs[:] = [x, scale_name, zero_name]
            del n.proto.input[:]
            n.proto.input.extend(n.inputs)
        gone.update((id(dq1), id(q2)))
    if gone:
        rewrite(imp, {}, gone)
