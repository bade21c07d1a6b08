"""A device's form of a QDQ model (int8="dpu", the Vitis AI DPU, or "bpu", the Horizon BPU), before qdq.fuse:
what the devices compute differently from onnxruntime's fusions.

- Symmetric int8 only: every QuantizeLinear and DequantizeLinear has zero points 0 and int8 integers (int32
  for a bias), and for the DPU power-of-two scales (2^-fix_point); anything else is a CompileError naming
  the tensor (and the scale), since the device cannot run it.
- The DPU: a convolution's or matmul's bias has its own fix point: it is aligned to the input's plus the
  weights' by a left shift (the DPU's shift_bias) into the int32 bias the integer kernels add.
- The devices fuse relu and relu6 (a clip), and the DPU leaky relu, into a convolution or matmul, and relu
  into an add, applying them to the exact sum before its one rounding: Conv -> Relu -> Q becomes Conv -> Q
  with the activation as the attribute FUSED_ACTIVATION, which the lowering puts on the integer node.
"""
from __future__ import annotations

import numpy as np

from .errors import CompileError
from .importer import DEFAULT_DOMAINS, Imported
from .qdq_graph import DQ, Q, QdqGraph, make_node, rewrite

__all__ = ["FUSED_ACTIVATION", "check_tensors", "prepare"]

FUSED_ACTIVATION = "accel_fused_activation"  # "relu" | "leakyrelu" | "clip", with ..._alpha and ..._beta
# What each rule set's device fuses into each op.
FUSING = {
    "dpu": {"Conv": ("Relu", "LeakyRelu", "Clip"), "MatMul": ("Relu", "LeakyRelu", "Clip"),
            "Gemm": ("Relu", "LeakyRelu", "Clip"), "Add": ("Relu",)},
    "bpu": {"Conv": ("Relu", "Clip"), "MatMul": ("Relu", "Clip"), "Gemm": ("Relu", "Clip"), "Add": ("Relu",)},
}


def prepare(imp: Imported, rules: str) -> None:
    """Checks the quantization and rewrites imp.nodes into the device's form (the module's docstring)."""
    g = QdqGraph(imp)
    _check_quantization(g, rules)
    if rules == "dpu":
        _align_biases(g)
    _absorb_activations(QdqGraph(imp), FUSING[rules])


def check_tensors(g, rules: str) -> None:
    """After lowering, every quantized tensor of the graph `g` as the device's rules and the emulator's reader
    take it (zero points 0; for the DPU, power-of-two scales): the operator form (QLinearConv, QLinearAdd,
    ...) carries its scales past the QDQ checks. A CompileError names the tensor."""
    names = {t for n in g.nodes for t in [*n.inputs, *n.outputs] if t} | set(g.inputs) | set(g.outputs)
    for name in sorted(names):
        q = g.value(name).quant
        if q is None:
            continue
        if rules == "dpu" and fix_points(q.scale) is None:
            bad = next((str(np.float32(s)) for s in np.asarray(q.scale).reshape(-1) if fix_points(s) is None), "[]")
            raise CompileError(f"tensor '{name}' has scale {bad}, not a power of two: the dpu int8 rules need "
                               f"power-of-two scales (fix points)")
        if np.any(np.asarray(q.zero_point) != 0):
            raise CompileError(f"tensor '{name}' has zero point {int(np.asarray(q.zero_point).reshape(-1)[0])}: the "
                               f"{rules} int8 rules need zero points 0 (symmetric quantization)")


def fix_points(scale) -> np.ndarray | None:
    """The fix points of power-of-two scales (scale == 2^-fp), or None when one is not a power of two."""
    s = np.asarray(scale, dtype=np.float64).reshape(-1)
    if s.size == 0 or not np.all(np.isfinite(s)) or not np.all(s > 0):
        return None
    mant, exp = np.frexp(s)
    if not np.all(mant == 0.5):
        return None
    return (1 - exp).astype(np.int64)


def _check_quantization(g: QdqGraph, rules: str) -> None:
    """Every QuantizeLinear and DequantizeLinear: constant float32 scales (powers of two for the DPU), constant
    zero points 0, int8 (int32 for a dequantized bias). What is anything else is refused here, before the
    lowering could write what the device's reader refuses."""
    ints = (np.dtype(np.int8), np.dtype(np.int32))
    for n in g.imp.nodes:
        if n.op not in (Q, DQ) or n.domain not in DEFAULT_DOMAINS or len(n.inputs) < 2:
            continue
        tensor = n.outputs[0] if n.op == Q else n.inputs[0]
        scale = g.const(n.inputs[1])
        if scale is None or np.asarray(scale).dtype != np.float32:
            raise CompileError(f"{n.label}: the scale of '{tensor}' is not a constant float32 tensor; the {rules} "
                               f"int8 rules need constant scales")
        if rules == "dpu" and fix_points(scale) is None:
            bad = next((str(np.float32(v)) for v in np.asarray(scale).reshape(-1) if fix_points(v) is None), "[]")
            raise CompileError(f"{n.label}: tensor '{tensor}' has scale {bad}, not a power of two: the dpu int8 "
                               f"rules need power-of-two scales (fix points); quantize the model with power-of-two "
                               f"scales (Vitis AI's vai_q_onnx)")
        has_zero = len(n.inputs) > 2 and bool(n.inputs[2])
        zero = g.zero(n) if has_zero and g.is_const(n.inputs[2]) else None
        if has_zero and (zero is None or zero.dtype.kind not in "iu"):
            raise CompileError(f"{n.label}: the zero point of '{tensor}' is not a constant integer tensor; the {rules} "
                               f"int8 rules need zero points 0")
        if zero is not None and np.any(zero != 0):
            value = int(zero.reshape(-1)[np.flatnonzero(zero.reshape(-1) != 0)[0]])
            raise CompileError(f"{n.label}: tensor '{tensor}' has zero point {value}: the {rules} int8 rules need "
                               f"zero points 0 (symmetric quantization)")
        kind = g.int_type(n)
        if kind not in ints or (kind == np.int32 and n.op == Q):
            raise CompileError(f"{n.label}: tensor '{tensor}' is {kind}: the {rules} int8 rules compute in int8")


def _fix(g: QdqGraph, n) -> np.ndarray:
    return fix_points(g.scale(n))


def _align_biases(g: QdqGraph) -> None:
    """Each Conv's and Gemm's DQ'd bias as int32 at the fix point of its input plus its weights'."""
    imp, replace = g.imp, {}
    for node in imp.nodes:
        if node.op not in ("Conv", "Gemm") or node.domain not in DEFAULT_DOMAINS or len(node.inputs) < 3 \
                or not node.inputs[2]:
            continue
        x, w = (g.dq(i) for i in node.inputs[:2])
        b = g.producer.get(node.inputs[2])
        if x is None or w is None or b is None or b.op != DQ or not g.is_const(b.inputs[0]) \
                or len(g.consumers.get(b.outputs[0], [])) != 1:
            continue
        fx, fw, fb = _fix(g, x), _fix(g, w), _fix(g, b)
        values = np.asarray(g.const(b.inputs[0])).reshape(-1)
        want = (fx[0] + fw).reshape(-1) if fx.size == 1 else fx  # the sum's fix point, per output channel
        if fx.size != 1 or values.dtype.kind not in "iu" or want.size not in (1, values.size) \
                or fb.size not in (1, values.size):
            continue  # not a conv's bias as the lowering takes one: it refuses it with a message
        shift = np.broadcast_to(want, values.shape) - np.broadcast_to(fb.reshape(-1), values.shape)
        if np.any(shift < 0):
            raise CompileError(f"{node.label}: bias '{b.inputs[0]}' has fix point {int(fb.max())}, finer than the "
                               f"input's plus the weights' ({int(want.min())}): the DPU aligns a bias by a left shift "
                               f"only")
        aligned = values.astype(np.int64) << np.minimum(shift, 31)  # past 31 bits no nonzero int32 fits
        if np.any(np.abs(aligned) > np.iinfo(np.int32).max):
            raise CompileError(f"{node.label}: bias '{b.inputs[0]}' does not fit int32 at the fix point of its sum")
        scale = np.ldexp(np.float32(1), -want).astype(np.float32)
        bname = imp.graph.add_const(aligned.astype(np.int32), f"{b.inputs[0]}_dpu_aligned")
        sname = imp.graph.add_const(scale if scale.size > 1 else scale.reshape(()), f"{b.inputs[1]}_dpu_aligned")
        zname = imp.graph.add_const(np.zeros(scale.shape if scale.size > 1 else (), np.int32), "dpu_bias_zero")
        attrs = {"axis": 0} if scale.size > 1 else {}
        replace[id(b)] = make_node(DQ, None, [bname, sname, zname], b.outputs, b, **attrs)
    if replace:
        rewrite(imp, replace, set())


def _activation(g: QdqGraph, act):
    """(name, alpha, beta) of an activation node a device fuses, or None (a clip with bounds not constant)."""
    if act.op == "Relu":
        return "relu", 0.0, 0.0
    if act.op == "LeakyRelu":
        return "leakyrelu", float(act.attrs.get("alpha", 0.01)), 0.0
    if g.imp.opset < 11:
        return "clip", float(act.attrs.get("min", -np.inf)), float(act.attrs.get("max", np.inf))
    bounds = []
    for i, default in ((1, -np.inf), (2, np.inf)):
        name = act.inputs[i] if len(act.inputs) > i else ""
        if name and not g.is_const(name):
            return None
        bounds.append(float(np.asarray(g.const(name)).reshape(-1)[0]) if name else default)
    return "clip", bounds[0], bounds[1]


def _absorb_activations(g: QdqGraph, fusing: dict) -> None:
    imp, replace, gone = g.imp, {}, set()
    for node in imp.nodes:
        acts = fusing.get(node.op)
        if acts is None or node.domain not in DEFAULT_DOMAINS or len(node.outputs) != 1:
            continue
        act = next((a for a in acts if g.only_user(node.outputs[0], a) is not None), None)
        if act is None:
            continue
        a = g.only_user(node.outputs[0], act)
        if g.only_user(a.outputs[0], Q) is None:
            continue
        params = _activation(g, a)
        if params is None:
            continue
        name, alpha, beta = params
        replace[id(node)] = make_node(node.op, node.domain or None, node.inputs, a.outputs, node,
                                      **{FUSED_ACTIVATION: name, f"{FUSED_ACTIVATION}_alpha": alpha,
                                         f"{FUSED_ACTIVATION}_beta": beta})
        gone.add(id(a))
    if replace:
        rewrite(imp, replace, gone)
