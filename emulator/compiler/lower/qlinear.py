"""com.microsoft's quantized elementwise, pooling, softmax and concat ops (QLinearAdd, QLinearMul,
QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool, QLinearGlobalAveragePool, QLinearSoftmax,
QLinearConcat), and QLinearActivation, the op qdq.py makes of an elementwise op onnxruntime leaves in float
between its DQ and Q: each int8 or uint8, quantized per tensor."""
from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import CompileError
from ..op_params import ACTIVATION_NAMES, ACTIVATIONS, QAvgPool, QSoftmax, Softmax
from ..qdq import ACCEL, MS
from .context import NodeView, broadcast_shape, normalize_axis, unsupported
from .conv import lower_global_avgpool, lower_pool
from .data import lower_concat
from .elementwise import activation_params
from .quantized import F32, quant_of, require_q8


def _binary(op: str):
    def handler(ctx, node):
        a, b = ctx.input(node, 0), ctx.input(node, 3)
        require_q8(node, a, "input A")
        require_q8(node, b, "input B")
        if a.dtype != b.dtype:
            raise CompileError(f"{node.label}: inputs A ({a.dtype}) and B ({b.dtype}) differ in dtype")
        aq = quant_of(ctx, node, a.name, 1, 2, a.shape, a.dtype, "input A")
        bq = quant_of(ctx, node, b.name, 4, 5, b.shape, b.dtype, "input B")
        yq = quant_of(ctx, node, ctx.output(node), 6, 7, (), a.dtype, "output")
        for v, q in ((a, aq), (b, bq)):
            if not q.per_tensor:
                raise unsupported(node, f"input '{v.name}' quantized per axis")
        shape = broadcast_shape(node, a.shape, b.shape)
        ins = [ctx.quantized(a.name, aq, node), ctx.quantized(b.name, bq, node)]
        if op == "qadd" and _a_is_span_scalar(a.shape, b.shape):
            ins.reverse()  # onnxruntime's kernel then takes B as its first operand, which rounds differently
        y = ctx.define(ctx.output(node), a.dtype, shape, quant=yq)
        ctx.emit(op, ins, [y], node.name)

    handler.__doc__ = f"com.microsoft QLinear{op[1:].title()}: int8 or uint8, per tensor, numpy broadcasting."
    return handler


def _a_is_span_scalar(sa, sb) -> bool:
    """Does onnxruntime's broadcast loop see A as one value per span of B (its "input 0 scalar" case)?
    A is a single value, or A has size 1 in the innermost dim where either input is larger than 1
    while B does not."""
    na, nb = int(np.prod(sa, dtype=np.int64)), int(np.prod(sb, dtype=np.int64))
    if na == 1 or nb == 1:
        return na == 1 and nb != 1
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for da, db in zip(reversed(pa), reversed(pb)):
        if max(da, db) > 1:
            return da == 1
    return False


def _unary_operands(ctx, node):
    """(X, X's quantization, Y's) of an op whose inputs start X, X_scale, X_zero_point, Y_scale, Y_zero_point."""
    x = ctx.input(node, 0)
    require_q8(node, x, "input X")
    return (x, quant_of(ctx, node, x.name, 1, 2, x.shape, x.dtype, "input X"),
            quant_of(ctx, node, ctx.output(node), 3, 4, (), x.dtype, "output"))


def _unary_table(act: str):
    def handler(ctx, node):
        x, xq, yq = _unary_operands(ctx, node)
        emit_qactivation(ctx, node, x.name, xq, yq, act, float(node.attr("alpha", 0.01)) if act == "leakyrelu" else 0.0)

    handler.__doc__ = f"com.microsoft QLinear{act.title()}: int8 or uint8, per tensor (a 256-entry table)."
    return handler


def lower_qlinear_activation(ctx, node):
    """ai.accel QLinearActivation (made by qdq.py): the elementwise op named by its `activation` attribute (its
    other attributes and its inputs after the fifth are the op's own) between a dequantize and a quantize, as
    one 8-bit table."""
    x, xq, yq = _unary_operands(ctx, node)
    op = str(node.attr("activation"))
    if op == "Tanh":  # a unary function, without parameters
        code, alpha, beta = ACTIVATIONS["tanh"], 0.0, 0.0
    else:
        code, alpha, beta = activation_params(ctx, NodeView(node, op, [x.name, *node.inputs[5:]]))
    emit_qactivation(ctx, node, x.name, xq, yq, ACTIVATION_NAMES[code], alpha, beta)


def emit_qactivation(ctx, node, x: str, xq, yq, act: str, alpha=0.0, beta=0.0, out=None) -> str:
    """Y = quantize(act(dequantize(X))) as a table; act "none" is a requantization."""
    v = ctx.g.value(x)
    xin = ctx.quantized(x, xq, node)
    y = out or ctx.output(node)
    ctx.define(y, v.dtype, v.shape, quant=yq)
    ctx.emit("qactivation", [xin], [y], node.name, act=ACTIVATIONS[act], alpha=alpha, beta=beta)
    return y


def _pool_operands(ctx, node):
    """(X, X read with its quantization, Y's quantization) of a channels-first quantized pool."""
    if int(node.attr("channels_last", 0)):
        raise unsupported(node, "channels_last=1")
    x, xq, yq = _unary_operands(ctx, node)
    return x, ctx.quantized(x.name, xq, node), yq


def lower_qavgpool(ctx, node):
    """com.microsoft QLinearAveragePool: as AveragePool (channels first), int8 or uint8 per tensor."""
    x, xin, yq = _pool_operands(ctx, node)
    kernel = [int(k) for k in node.attr("kernel_shape") or ()]
    pads = [int(p) for p in node.attr("pads") or ()]
    if kernel == list(x.shape[2:]) and not any(pads) and node.attr("auto_pad", "NOTSET") in ("NOTSET", "VALID"):
        # onnxruntime computes a window over the whole plane as its global pool, which rounds otherwise.
        _pool_via(ctx, node, lower_global_avgpool, "GlobalAveragePool", "qglobalavgpool", xin, yq)
        return
    _pool_via(ctx, node, lower_pool, "AveragePool", "qavgpool", xin, yq)


def lower_qglobalavgpool(ctx, node):
    """com.microsoft QLinearGlobalAveragePool (channels first): int8 or uint8 per tensor."""
    _, xin, yq = _pool_operands(ctx, node)
    _pool_via(ctx, node, lower_global_avgpool, "GlobalAveragePool", "qglobalavgpool", xin, yq)


def _lower_as(ctx, node, lower, onnx_op, inputs, yq, **attrs) -> list:
    """Lowers node as the float op onnx_op over `inputs` (its handler `lower`, which checks the shapes and
    emits the nodes; `attrs` replace node's), every tensor it defines quantized by yq; returns the nodes it
    emitted."""
    first = len(ctx.g.nodes)
    lower(ctx, NodeView(node, onnx_op, inputs, **attrs))
    for n in ctx.g.nodes[first:]:
        for o in n.outputs:  # the op's output and a 1-D op's reshape after it
            ctx.g.values[o].quant = yq
    return ctx.g.nodes[first:]


def _pool_via(ctx, node, lower, onnx_op, op, x: str, yq):
    """Lowers the pool as its float twin does, then makes the emitted node the quantized op."""
    for n in _lower_as(ctx, node, lower, onnx_op, [x], yq):
        if n.op in ("avgpool", "globalavgpool"):
            n.op = op
            if n.params is not None:
                n.params = QAvgPool(**{f.name: getattr(n.params, f.name) for f in dataclasses.fields(QAvgPool)})


def lower_qsoftmax(ctx, node):
    """com.microsoft QLinearSoftmax: int8 or uint8 per tensor, over one axis (its opset attribute >= 13) or
    every dim from axis on (< 13); under a device's rules in float between a dequantize and a quantize."""
    x, xq, yq = _unary_operands(ctx, node)
    opset = int(node.attr("opset", ctx.opset))
    rank = len(x.shape)
    axis = normalize_axis(node, node.attr("axis", -1 if opset >= 13 else 1), rank)
    xin, y = ctx.quantized(x.name, xq, node), ctx.output(node)
    if ctx.int8 != "ort":
        # The devices run softmax in float (VART's CPU op, a toolchain's float node): dequantized, the float
        # softmax, quantized, as their rules leave a QDQ model's DQ -> Softmax -> Q (qdq.NOT_ON_DEVICES).
        xf, sf = ctx.temp(f"{x.name}_dequantized", F32, x.shape), ctx.temp(f"{y}_float", F32, x.shape)
        ctx.emit("dequantize", [xin], [xf], node.name)
        ctx.emit("softmax", [xf], [sf], node.name, params=Softmax(axis=axis, coerce_2d=0 if opset >= 13 else 1))
        ctx.define(y, x.dtype, x.shape, quant=yq)
        ctx.emit("quantize", [sf], [y], node.name)
        return
    ctx.define(y, x.dtype, x.shape, quant=yq)
    ctx.emit("qsoftmax", [xin], [y], node.name, params=QSoftmax(axis=axis, coerce_2d=0 if opset >= 13 else 1))


def lower_qconcat(ctx, node):
    """com.microsoft QLinearConcat: int8 or uint8 inputs, each with its scale and zero point; an input
    quantized unlike the output is requantized first (a table), as onnxruntime does."""
    if len(node.inputs) < 5 or (len(node.inputs) - 2) % 3:
        raise CompileError(f"{node.label}: takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples")
    xs = [ctx.input(node, i) for i in range(2, len(node.inputs), 3)]
    for v in xs:
        require_q8(node, v, f"input '{v.name}'")
    dtype = xs[0].dtype
    if any(v.dtype != dtype for v in xs):
        raise CompileError(f"{node.label}: inputs differ in dtype")
    yq = quant_of(ctx, node, ctx.output(node), 0, 1, (), dtype, "output")
    ins = []
    for j, v in enumerate(xs):
        i = 2 + 3 * j
        xq = quant_of(ctx, node, v.name, i + 1, i + 2, v.shape, dtype, f"input '{v.name}'")
        if xq.same(yq):
            ins.append(ctx.quantized(v.name, xq, node))
        else:
            t = ctx.temp(f"{v.name}_requant", dtype, v.shape)
            ins.append(emit_qactivation(ctx, node, v.name, xq, yq, "none", out=t))
    _lower_as(ctx, node, lower_concat, "Concat", ins, yq, axis=node.attr("axis", 0))


HANDLERS: dict = {
    "QLinearAdd": _binary("qadd"), "QLinearMul": _binary("qmul"), "QLinearSigmoid": _unary_table("sigmoid"),
    "QLinearLeakyRelu": _unary_table("leakyrelu"), "QLinearAveragePool": lower_qavgpool,
    "QLinearGlobalAveragePool": lower_qglobalavgpool, "QLinearConcat": lower_qconcat, "QLinearSoftmax": lower_qsoftmax,
    "QLinearActivation": lower_qlinear_activation,
}
DOMAIN_OPS = {MS: frozenset(HANDLERS) - {"QLinearActivation"}, ACCEL: frozenset({"QLinearActivation"})}
