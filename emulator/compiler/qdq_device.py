"""A device's form of a QDQ model (int8="dpu", the Vitis AI DPU, or "bpu", the Horizon BPU), before qdq.fuse:
what the devices compute differently from onnxruntime's fusions.

- Symmetric int8 only: every quantized tensor has zero points 0 and int8 integers (int32 for a bias), and for
  the DPU power-of-two scales (2^-fix_point) with fix points in DPU_FIX_POINTS; anything else is a
  CompileError naming the tensor (and the scale), since the device cannot run it. check_quant is that one
  check, made on a QDQ model's QuantizeLinear and DequantizeLinear nodes here and, for the operator form
  (QLinearConv, ...), where the lowering reads each op's scales (lower/quantized.py's quant_of).
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

__all__ = ["AT_RUN_TIME", "DPU_FIX_POINTS", "FUSED_ACTIVATION", "check_quant", "prepare"]

# The fix points a dpu tensor may have (scale 2^-fp), as the emulator's reader takes them
# (emulator/src/math/fixpoint.h, kMaxFixPoint).
DPU_FIX_POINTS = (-30, 30)
AT_RUN_TIME = "computed at run time"  # check_quant's scale or zero point that a tensor computes

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


def check_quant(rules: str, where: str, tensor: str, dtype, scale=None, zero=None) -> None:
    """The device rules' one check of a quantized tensor, for both forms of a model: each QuantizeLinear's and
    DequantizeLinear's tensor before the QDQ passes (prepare), and every quantized operand and output of an
    operator-form op (QLinearConv, com.microsoft QLinearAdd, QGemm, ..., MatMulInteger, ConvInteger; and the
    QDQ groups once fused) where the lowering reads its scale and zero point. `where` names the node, `tensor`
    the tensor; scale is None for an integer operand without one (MatMulInteger's), zero None when absent (0);
    either is AT_RUN_TIME when a tensor computes it. Nothing for the ort rules; else a CompileError saying
    what the device cannot take: not int8 (int32 for a sum or a bias), a scale or zero point not constant, a
    zero point other than 0, for the DPU a scale that is not a power of two or whose fix point is out of
    DPU_FIX_POINTS."""
    if rules == "ort":
        return
    kind = np.dtype(dtype)
    if kind not in (np.dtype(np.int8), np.dtype(np.int32)):
        raise CompileError(f"{where}: tensor '{tensor}' is {kind}: the {rules} int8 rules compute in int8")
    if scale is AT_RUN_TIME or (scale is not None and np.asarray(scale).dtype != np.float32):
        raise CompileError(f"{where}: the scale of '{tensor}' is not a constant float32 tensor; the {rules} int8 "
                           f"rules need constant scales")
    if zero is AT_RUN_TIME or (zero is not None and np.asarray(zero).dtype.kind not in "iu"):
        raise CompileError(f"{where}: the zero point of '{tensor}' is not a constant integer tensor; the {rules} "
                           f"int8 rules need zero points 0")
    if rules == "dpu" and scale is not None:
        _check_fix_points(where, tensor, np.asarray(scale).reshape(-1))
    z = np.asarray(0 if zero is None else zero).reshape(-1)
    if np.any(z != 0):
        raise CompileError(f"{where}: tensor '{tensor}' has zero point {int(z[np.flatnonzero(z)[0]])}: the "
                           f"{rules} int8 rules need zero points 0 (symmetric quantization)")


def _check_fix_points(where: str, tensor: str, scales: np.ndarray) -> None:
    lo, hi = DPU_FIX_POINTS
    for s in scales:
        fp = fix_points(s)
        if fp is None:
            raise CompileError(f"{where}: tensor '{tensor}' has scale {s!s}, not a power of two: the dpu int8 rules "
                               f"need power-of-two scales (fix points); quantize the model with power-of-two "
                               f"scales (Vitis AI's vai_q_onnx)")
        if not lo <= int(fp[0]) <= hi:
            raise CompileError(f"{where}: tensor '{tensor}' has scale {s!s} = 2^{-int(fp[0])}, a power of two, but its "
                               f"fix point {int(fp[0])} is out of [{lo}, {hi}], the fix points the dpu int8 rules "
                               f"hold")


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
    """check_quant of every QuantizeLinear's and DequantizeLinear's tensor, before the QDQ passes rewrite (or
    drop) them: a DequantizeLinear'd bias, say, is fused into its convolution without its scale."""
    for n in g.imp.nodes:
        if n.op not in (Q, DQ) or n.domain not in DEFAULT_DOMAINS or len(n.inputs) < 2:
            continue
        scale = g.const(n.inputs[1]) if g.is_const(n.inputs[1]) else AT_RUN_TIME
        zero = None
        if len(n.inputs) > 2 and n.inputs[2]:
            zero = g.zero(n) if g.is_const(n.inputs[2]) else AT_RUN_TIME
        check_quant(rules, n.label, n.outputs[0] if n.op == Q else n.inputs[0], g.int_type(n), scale, zero)


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
        # past 31 bits no nonzero int32 fits
        aligned = values.astype(np.int64) << np.minimum(np.maximum(shift, 0), 31)
        if np.any(shift < 0):
            aligned = np.where(shift < 0, _finer_bias(g, node, b, values.astype(np.int64), shift, want), aligned)
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


def _finer_bias(g: QdqGraph, node, b, values: np.ndarray, shift: np.ndarray, want: np.ndarray) -> np.ndarray:
    """A bias whose fix point is finer than its sum's (shift_bias < 0, which vai_c_xir's files hold): VART's conv2d-fix
    adds it exactly, acc + bias * 2^shift_bias, then rounds (acc + bias * 2^shift_bias) / 2^shift_cut half up once.
    For an integer acc and a shift_cut >= 1 that is the bias floored to the sum's fix point (the fraction it drops
    is less than one step of the sum, and the rounding point is a whole step), so the sum stays int32; with
    shift_cut 0 the bias rounds half up instead. The activation must see the sign of the same value: a relu or a
    clip does (a fraction cannot move an integer sum across zero); a leaky relu scales the fraction, so there the
    floored bias can differ from the reference by one step (docs/quantization.md). Returns every entry so aligned;
    the caller takes those whose shift is negative."""
    right = np.where(shift < 0, -shift, 0)
    act = g.only_user(node.outputs[0], "Relu") or g.only_user(node.outputs[0], "Clip") \
        or g.only_user(node.outputs[0], "LeakyRelu")
    q = g.only_q(act if act is not None else node)
    if q is None:
        raise CompileError(f"{node.label}: bias '{b.inputs[0]}' has a fix point finer than the input's plus the "
                           f"weights' ({int(want.min())}), and the convolution's output is not quantized: the DPU "
                           f"aligns such a bias at its output's rounding")
    cut = int(want.reshape(-1)[0]) - int(_fix(g, q).reshape(-1)[0])
    if cut >= 1:
        aligned = values >> np.minimum(right, 62)
    else:
        aligned = (values + (np.int64(1) << np.maximum(right - 1, 0))) >> np.minimum(right, 62)
    return aligned


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
