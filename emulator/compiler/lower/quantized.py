"""Quantized ops in onnxruntime's operator form: QuantizeLinear and DequantizeLinear (the edges of int8
regions, or folded on constants), QLinearConv, QLinearMatMul and com.microsoft's QLinearAdd, QLinearMul,
QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool, QLinearGlobalAveragePool, QLinearConcat and QGemm.
QDQ models reach here too: qdq.py first turns their DQ -> op -> Q groups into these ops, as onnxruntime's
graph optimizer does.

Each quantized operand is a runtime tensor carrying its scale and zero point (Ctx.quantized); an op's
output is defined with the quantization the node gives it.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import quant
from ..errors import CompileError
from ..ir import Value
from ..op_params import ACTIVATION_NAMES, ACTIVATIONS, Concat, QAvgPool, QGemm, QSoftmax
from .context import normalize_axis, unsupported
from .conv import emit_conv, lower_global_avgpool, lower_pool
from .elementwise import activation_params
from .linalg import matmul_shape

MS_DOMAIN = "com.microsoft"
I32 = np.dtype(np.int32)
F32 = np.dtype(np.float32)


def quant_of(ctx, node, si, zi, shape, dtype, what, axis=None) -> quant.Quant:
    """The Quant given by the node's constant scale (input si) and zero point (input zi, optional) for a
    tensor of `shape` and `dtype`."""
    scale = ctx.const_input(node, si, f"{what} scale")
    if scale is None:
        raise CompileError(f"{node.label}: the {what} scale (input {si}) is required")
    zero = ctx.const_input(node, zi, f"{what} zero point") if zi is not None else None
    return quant.make(scale, zero, axis, dtype, shape, f"{node.label}: {what}")


def _zero_dtype(ctx, node, zi, default=np.uint8) -> np.dtype:
    v = ctx.input_opt(node, zi)
    return np.dtype(default) if v is None else v.dtype


def _q8(node, v: Value, what: str) -> None:
    if v.dtype not in quant.QUANT_DTYPES:
        raise unsupported(node, f"{what} dtype {v.dtype} (int8 and uint8 only)")


def lower_quantize(ctx, node):
    """QuantizeLinear (opsets 10-21): float32 X to int8 or uint8 (the zero point's dtype, else
    output_dtype, else uint8), per tensor or per axis. Folded when X is a constant. Not supported: blocked
    quantization, 4-bit and float8 outputs, float16 inputs."""
    x = ctx.input(node, 0)
    if x.dtype != F32:
        raise unsupported(node, f"input dtype {x.dtype} (float32 only)")
    zv = ctx.input_opt(node, 2)
    if zv is not None:
        ydtype = zv.dtype
    elif node.attr("output_dtype"):
        ydtype = np.dtype(onnx_dtype(node, int(node.attr("output_dtype"))))
    else:
        ydtype = np.dtype(np.uint8)
    if ydtype not in quant.QUANT_DTYPES:
        raise unsupported(node, f"output dtype {ydtype} (int8 and uint8 only)")
    if int(node.attr("block_size", 0)):
        raise unsupported(node, "blocked quantization (block_size)")
    q = quant_of(ctx, node, 1, 2, x.shape, ydtype, "output", node.attr("axis"))
    y = ctx.output(node)
    if x.is_const:
        ctx.g.values[y] = Value(y, ydtype, x.shape, quant.quantize(x.const, q, ydtype), quant=q)
        return
    ctx.define(y, ydtype, x.shape, quant=q)
    ctx.emit("quantize", [x.name], [y], node.name)


def onnx_dtype(node, code: int):
    from onnx import helper  # the importer has loaded onnx already: no cost

    try:
        return helper.tensor_dtype_to_np_dtype(code)
    except Exception:
        raise unsupported(node, f"output_dtype {code}") from None


def lower_dequantize(ctx, node):
    """DequantizeLinear (opsets 10-21): int8, uint8 or int32 X to float32, per tensor or per axis. Folded
    when X is a constant (a weight that no int8 op takes). Not supported: blocked quantization, 4-bit and
    float8 inputs, float16 outputs."""
    x = ctx.input(node, 0)
    if x.dtype not in quant.QUANT_DTYPES + (I32,):
        raise unsupported(node, f"input dtype {x.dtype} (int8, uint8 and int32 only)")
    if int(node.attr("block_size", 0)):
        raise unsupported(node, "blocked quantization (block_size)")
    q = quant_of(ctx, node, 1, 2, x.shape, x.dtype, "input", node.attr("axis"))
    y = ctx.output(node)
    if x.is_const:
        ctx.g.values[y] = Value(y, F32, x.shape, quant.dequantize(x.const, q))
        return
    xin = ctx.quantized(x.name, q, node) if x.dtype != I32 else _int32_with(ctx, x, q)
    ctx.define(y, F32, x.shape)
    ctx.emit("dequantize", [xin], [y], node.name)


def _int32_with(ctx, x: Value, q) -> str:
    if x.quant is None or x.quant.same(q):
        x.quant = q
        return x.name
    raise CompileError(f"tensor '{x.name}' (int32) is dequantized with two different scales")


def lower_qlinearconv(ctx, node):
    """QLinearConv (opset 10): 1-D and 2-D, uint8 or int8 X and Y, int8 or uint8 W per tensor or per
    output channel, optional int32 bias; the geometry attributes as Conv."""
    x = ctx.input(node, 0)
    _q8(node, x, "input X")
    w = ctx.const_input(node, 3, "weight W")
    if w is None:
        raise CompileError(f"{node.label}: input W is required")
    wv = ctx.input(node, 3)
    _q8(node, wv, "weight W")
    if w.ndim != len(x.shape) or w.ndim not in (3, 4):
        raise unsupported(node, f"input {x.shape} and weight {w.shape} (only 1-D and 2-D convolutions)")
    xq = quant_of(ctx, node, 1, 2, x.shape, x.dtype, "input")
    wq = quant_of(ctx, node, 4, 5, w.shape, w.dtype, "weight", axis=0)
    ydtype = _zero_dtype(ctx, node, 7)
    yq = quant_of(ctx, node, 6, 7, (), ydtype, "output")
    b = ctx.const_input(node, 8, "bias B")
    if b is not None and b.dtype != I32:
        raise CompileError(f"{node.label}: bias B is {b.dtype}, not int32")
    xin = ctx.g.value(ctx.quantized(x.name, xq, node))
    emit_conv(ctx, node, "qconv", xin, w, node.inputs[3], node.inputs[8] if b is not None else None, b, ydtype,
              wquant=wq, yquant=yq)


def _matmul_quants(ctx, node, a: Value, b: Value, first: int):
    """(A's, B's and Y's Quant, Y's dtype) of QLinearMatMul-like inputs starting at `first`."""
    aq = quant_of(ctx, node, first + 1, first + 2, a.shape, a.dtype, "input A")
    baxis = len(b.shape) - 1 if len(b.shape) >= 2 else None
    bq = quant_of(ctx, node, first + 4, first + 5, b.shape, b.dtype, "input B", axis=baxis)
    if not aq.per_tensor:
        raise unsupported(node, "input A quantized per axis")
    return aq, bq


def lower_qlinearmatmul(ctx, node):
    """QLinearMatMul (opsets 10, 21): int8 or uint8 operands with numpy matmul semantics, A per tensor, B
    per tensor or per column."""
    a, b = ctx.input(node, 0), ctx.input(node, 3)
    _q8(node, a, "input A")
    _q8(node, b, "input B")
    aq, bq = _matmul_quants(ctx, node, a, b, 0)
    ydtype = _zero_dtype(ctx, node, 7)
    yq = quant_of(ctx, node, 6, 7, (), ydtype, "output")
    ins = [ctx.quantized(a.name, aq, node), ctx.quantized(b.name, bq, node)]
    y = ctx.define(ctx.output(node), ydtype, matmul_shape(node, a.shape, b.shape), quant=yq)
    ctx.emit("qmatmul", ins, [y], node.name)


def lower_qgemm(ctx, node):
    """com.microsoft QGemm: 2-D int8 or uint8 A (per tensor) and constant B (per tensor or per output
    column), optional constant int32 C, transA, transB, alpha; quantized output when y_scale is given,
    else float32."""
    a, b = ctx.input(node, 0), ctx.input(node, 3)
    _q8(node, a, "input A")
    _q8(node, b, "input B")
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise CompileError(f"{node.label}: A {a.shape} and B {b.shape} must be 2-D")
    if not b.is_const:
        raise unsupported(node, "input B computed at run time")
    ta, tb = int(int(node.attr("transA", 0)) != 0), int(int(node.attr("transB", 0)) != 0)
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    if k != k2:
        raise CompileError(f"{node.label}: inner dims differ (A {a.shape} transA={ta}, B {b.shape} transB={tb})")
    aq = quant_of(ctx, node, 1, 2, a.shape, a.dtype, "input A")
    bq = quant_of(ctx, node, 4, 5, b.shape, b.dtype, "input B", axis=0 if tb else 1)
    if not aq.per_tensor:
        raise unsupported(node, "input A quantized per axis")
    ins = [ctx.quantized(a.name, aq, node), ctx.quantized_const(b.name, bq)]
    c = ctx.input_opt(node, 6)
    if c is not None:
        if not c.is_const or c.dtype != I32:
            raise unsupported(node, f"input C '{c.name}' ({c.dtype}; only a constant int32 C)")
        if tuple(np.broadcast_shapes(c.shape, (m, n))) != (m, n):
            raise CompileError(f"{node.label}: C {c.shape} does not broadcast to {(m, n)}")
        ins.append(c.name)
    if ctx.input_opt(node, 7) is not None:
        ydtype = _zero_dtype(ctx, node, 8)
        y = ctx.define(ctx.output(node), ydtype, (m, n), quant=quant_of(ctx, node, 7, 8, (), ydtype, "output"))
    else:
        y = ctx.define(ctx.output(node), F32, (m, n))
    ctx.emit("qgemm", ins, [y], node.name, params=QGemm(trans_a=ta, trans_b=tb, alpha=float(node.attr("alpha", 1.0))))


def _binary(op: str):
    def handler(ctx, node):
        a, b = ctx.input(node, 0), ctx.input(node, 3)
        _q8(node, a, "input A")
        _q8(node, b, "input B")
        if a.dtype != b.dtype:
            raise CompileError(f"{node.label}: inputs A ({a.dtype}) and B ({b.dtype}) differ in dtype")
        aq = quant_of(ctx, node, 1, 2, a.shape, a.dtype, "input A")
        bq = quant_of(ctx, node, 4, 5, b.shape, b.dtype, "input B")
        yq = quant_of(ctx, node, 6, 7, (), a.dtype, "output")
        for v, q in ((a, aq), (b, bq)):
            if not q.per_tensor:
                raise unsupported(node, f"input '{v.name}' quantized per axis")
        shape = tuple(np.broadcast_shapes(a.shape, b.shape))
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


def _unary_table(act: str):
    def handler(ctx, node):
        x = ctx.input(node, 0)
        _q8(node, x, "input X")
        xq = quant_of(ctx, node, 1, 2, x.shape, x.dtype, "input X")
        yq = quant_of(ctx, node, 3, 4, (), x.dtype, "output")
        emit_qactivation(ctx, node, x.name, xq, yq, act, float(node.attr("alpha", 0.01)) if act == "leakyrelu" else 0.0)

    handler.__doc__ = f"com.microsoft QLinear{act.title()}: int8 or uint8, per tensor (a 256-entry table)."
    return handler


def lower_qlinear_activation(ctx, node):
    """ai.accel QLinearActivation (made by qdq.py): the elementwise op named by its `activation` attribute (its
    other attributes and its inputs after the fifth are the op's own) between a dequantize and a quantize, as
    one 8-bit table."""
    x = ctx.input(node, 0)
    _q8(node, x, "input X")
    xq = quant_of(ctx, node, 1, 2, x.shape, x.dtype, "input X")
    yq = quant_of(ctx, node, 3, 4, (), x.dtype, "output")
    code, alpha, beta = activation_params(ctx, _Proxy(node, str(node.attr("activation")), [x.name, *node.inputs[5:]]))
    emit_qactivation(ctx, node, x.name, xq, yq, ACTIVATION_NAMES[code], alpha, beta)


def emit_qactivation(ctx, node, x: str, xq, yq, act: str, alpha=0.0, beta=0.0, out=None) -> str:
    """Y = quantize(act(dequantize(X))) as a table; act "none" is a requantization."""
    v = ctx.g.value(x)
    xin = ctx.quantized(x, xq, node)
    y = out or ctx.output(node)
    ctx.define(y, v.dtype, v.shape, quant=yq)
    ctx.emit("qactivation", [xin], [y], node.name, act=ACTIVATIONS[act], alpha=alpha, beta=beta)
    return y


def _channels_first(node):
    if int(node.attr("channels_last", 0)):
        raise unsupported(node, "channels_last=1")


def lower_qavgpool(ctx, node):
    """com.microsoft QLinearAveragePool: as AveragePool (channels first), int8 or uint8 per tensor."""
    _channels_first(node)
    x = ctx.input(node, 0)
    _q8(node, x, "input X")
    xq = quant_of(ctx, node, 1, 2, x.shape, x.dtype, "input X")
    yq = quant_of(ctx, node, 3, 4, (), x.dtype, "output")
    kernel = [int(k) for k in node.attr("kernel_shape") or ()]
    pads = [int(p) for p in node.attr("pads") or ()]
    if kernel == list(x.shape[2:]) and not any(pads) and node.attr("auto_pad", "NOTSET") in ("NOTSET", "VALID"):
        # onnxruntime computes a window over the whole plane as its global pool, which rounds otherwise.
        _pool_via(ctx, node, lower_global_avgpool, "GlobalAveragePool", "qglobalavgpool",
                  ctx.quantized(x.name, xq, node), yq)
        return
    _pool_via(ctx, node, lower_pool, "AveragePool", "qavgpool", ctx.quantized(x.name, xq, node), yq)


def lower_qglobalavgpool(ctx, node):
    """com.microsoft QLinearGlobalAveragePool (channels first): int8 or uint8 per tensor."""
    _channels_first(node)
    x = ctx.input(node, 0)
    _q8(node, x, "input X")
    xq = quant_of(ctx, node, 1, 2, x.shape, x.dtype, "input X")
    yq = quant_of(ctx, node, 3, 4, (), x.dtype, "output")
    _pool_via(ctx, node, lower_global_avgpool, "GlobalAveragePool", "qglobalavgpool",
              ctx.quantized(x.name, xq, node), yq)


def _pool_via(ctx, node, lower, onnx_op, op, x: str, yq):
    """Lowers the pool as its float twin does, then makes the emitted node the quantized op."""
    first = len(ctx.g.nodes)
    lower(ctx, _Proxy(node, onnx_op, [x]))
    for n in ctx.g.nodes[first:]:
        if n.op in ("avgpool", "globalavgpool"):
            n.op = op
            if n.params is not None:
                n.params = QAvgPool(**{f.name: getattr(n.params, f.name) for f in dataclasses.fields(QAvgPool)})
        for o in n.outputs:  # the pool's output and a 1-D pool's reshape after it
            ctx.g.values[o].quant = yq


class _Proxy:
    """A node seen as another op with other inputs (the same name, outputs and attributes)."""

    def __init__(self, node, op, inputs):
        self._node, self.op, self.inputs = node, op, inputs
        self.name, self.outputs, self.domain = node.name, node.outputs, ""

    @property
    def label(self):
        return self._node.label

    def attr(self, name, default=None):
        return self._node.attr(name, default)


def lower_qsoftmax(ctx, node):
    """com.microsoft QLinearSoftmax: int8 or uint8 per tensor, over one axis (its opset attribute >= 13) or
    every dim from axis on (< 13)."""
    x = ctx.input(node, 0)
    _q8(node, x, "input X")
    xq = quant_of(ctx, node, 1, 2, x.shape, x.dtype, "input X")
    yq = quant_of(ctx, node, 3, 4, (), x.dtype, "output")
    opset = int(node.attr("opset", ctx.opset))
    rank = len(x.shape)
    axis = normalize_axis(node, node.attr("axis", -1 if opset >= 13 else 1), rank)
    y = ctx.define(ctx.output(node), x.dtype, x.shape, quant=yq)
    ctx.emit("qsoftmax", [ctx.quantized(x.name, xq, node)], [y], node.name,
             params=QSoftmax(axis=axis, coerce_2d=0 if opset >= 13 else 1))


def lower_qconcat(ctx, node):
    """com.microsoft QLinearConcat: int8 or uint8 inputs, each with its scale and zero point; an input
    quantized unlike the output is requantized first (a table), as onnxruntime does."""
    if len(node.inputs) < 5 or (len(node.inputs) - 2) % 3:
        raise CompileError(f"{node.label}: takes Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples")
    xs = [ctx.input(node, i) for i in range(2, len(node.inputs), 3)]
    for v in xs:
        _q8(node, v, f"input '{v.name}'")
    dtype = xs[0].dtype
    if any(v.dtype != dtype for v in xs):
        raise CompileError(f"{node.label}: inputs differ in dtype")
    yq = quant_of(ctx, node, 0, 1, (), dtype, "output")
    rank = len(xs[0].shape)
    axis = normalize_axis(node, node.attr("axis", 0), rank)
    ins = []
    for j, v in enumerate(xs):
        i = 2 + 3 * j
        xq = quant_of(ctx, node, i + 1, i + 2, v.shape, dtype, f"input '{v.name}'")
        if xq.same(yq):
            ins.append(ctx.quantized(v.name, xq, node))
        else:
            t = ctx.temp(f"{v.name}_requant", dtype, v.shape)
            ins.append(emit_qactivation(ctx, node, v.name, xq, yq, "none", out=t))
    shape = list(xs[0].shape)
    for v in xs:
        if len(v.shape) != rank or any(v.shape[d] != shape[d] for d in range(rank) if d != axis):
            raise CompileError(f"{node.label}: input '{v.name}' {v.shape} does not match {xs[0].shape} outside "
                               f"axis {axis}")
    shape[axis] = sum(v.shape[axis] for v in xs)
    y = ctx.define(ctx.output(node), dtype, shape, quant=yq)
    ctx.emit("concat", ins, [y], node.name, params=Concat(axis=axis))


def _scalar_zero(ctx, node, i, dtype, what) -> str | None:
    """Input i, a zero point of one element (a constant or a tensor computed at run time), or None."""
    v = ctx.input_opt(node, i)
    if v is None:
        return None
    if v.dtype != dtype or int(np.prod(v.shape, dtype=np.int64)) != 1:
        raise unsupported(node, f"{what} zero point '{v.name}' {v.dtype}{list(v.shape)} (one value of {dtype} only)")
    return v.name


def _const_zero(ctx, node, i, dtype, count, what) -> str | None:
    """Input i, a constant zero point of one value or `count` values, or None."""
    v = ctx.input_opt(node, i)
    if v is None:
        return None
    n = int(np.prod(v.shape, dtype=np.int64))
    if not v.is_const or v.dtype != dtype or n not in (1, count):
        raise unsupported(node, f"{what} zero point '{v.name}' ({v.dtype}{list(v.shape)}; a constant of {dtype} "
                                f"with 1 or {count} values only)")
    return v.name


def lower_dynamic_quantize(ctx, node):
    """DynamicQuantizeLinear (opset 11): float32 X to uint8 Y with the scale and zero point of X's range, as
    onnxruntime computes them."""
    x = ctx.input(node, 0)
    if x.dtype != F32:
        raise unsupported(node, f"input dtype {x.dtype} (float32 only)")
    outs = [ctx.output(node, i) for i in range(3)]
    ctx.define(outs[0], np.uint8, x.shape)
    ctx.define(outs[1], F32, ())
    ctx.define(outs[2], np.uint8, ())
    ctx.emit("dynquant", [x.name], outs, node.name)


def lower_matmul_integer(ctx, node):
    """MatMulInteger (opset 10): int8 or uint8 A and B with numpy matmul semantics to int32; A's zero point one
    value (computed at run time or not), B's a constant of one value or one per column."""
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    _q8(node, a, "input A")
    _q8(node, b, "input B")
    n = b.shape[-1] if len(b.shape) >= 2 else 1
    ins = [a.name, b.name, _scalar_zero(ctx, node, 2, a.dtype, "A's"), _const_zero(ctx, node, 3, b.dtype, n, "B's")]
    y = ctx.define(ctx.output(node), I32, matmul_shape(node, a.shape, b.shape))
    ctx.emit("matmulinteger", ins, [y], node.name)


def lower_conv_integer(ctx, node):
    """ConvInteger (opset 10): 1-D and 2-D, int8 or uint8 X and constant W to int32, X's zero point one value
    (computed at run time or not), W's a constant of one value or one per output channel; geometry as Conv."""
    x = ctx.input(node, 0)
    _q8(node, x, "input X")
    w = ctx.const_input(node, 1, "weight W")
    if w is None:
        raise CompileError(f"{node.label}: input W is required")
    _q8(node, ctx.input(node, 1), "weight W")
    if w.ndim != len(x.shape) or w.ndim not in (3, 4):
        raise unsupported(node, f"input {x.shape} and weight {w.shape} (only 1-D and 2-D convolutions)")
    extra = [_scalar_zero(ctx, node, 2, x.dtype, "X's"), _const_zero(ctx, node, 3, w.dtype, w.shape[0], "W's")]
    emit_conv(ctx, node, "convinteger", x, w, node.inputs[1], None, None, I32, extra=extra)


def lower_matmul_integer_to_float(ctx, node):
    """com.microsoft MatMulIntegerToFloat: A, B (int8 or uint8), a_scale, b_scale, a_zero_point, b_zero_point,
    bias: float32(acc) * float32(a_scale * b_scale[n]) + bias[n], acc MatMulInteger's, with a multiply and an
    add (no FMA), as onnxruntime does. A's scale and zero point may be computed at run time."""
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    _q8(node, a, "input A")
    _q8(node, b, "input B")
    n = b.shape[-1] if len(b.shape) >= 2 else 1
    a_scale, b_scale = ctx.input(node, 2), ctx.input(node, 3)
    if int(np.prod(a_scale.shape, dtype=np.int64)) != 1 or not b_scale.is_const or b_scale.const.size not in (1, n):
        raise unsupported(node, "scales other than one A scale and a constant B scale of 1 or one per column")
    ins = [a.name, b.name, _scalar_zero(ctx, node, 4, a.dtype, "A's"), _const_zero(ctx, node, 5, b.dtype, n, "B's")]
    shape = matmul_shape(node, a.shape, b.shape)
    y = ctx.output(node)
    acc = ctx.temp(f"{y}_acc", I32, shape)
    ctx.emit("matmulinteger", ins, [acc], node.name)
    accf = ctx.temp(f"{y}_accf", F32, shape)
    ctx.emit("cast", [acc], [accf], node.name)
    mult = ctx.temp(f"{y}_multiplier", F32, np.broadcast_shapes(a_scale.shape, b_scale.shape))
    ctx.emit("mul", [a_scale.name, b_scale.name], [mult], node.name)
    bias = ctx.input_opt(node, 6)
    out = ctx.temp(f"{y}_scaled", F32, shape) if bias is not None else y
    ctx.define(out, F32, shape)
    ctx.emit("mul", [accf, mult], [out], node.name)
    if bias is not None:
        ctx.define(y, F32, np.broadcast_shapes(shape, bias.shape))
        ctx.emit("add", [out, bias.name], [y], node.name)


def lower_dynamic_quantize_matmul(ctx, node):
    """com.microsoft DynamicQuantizeMatMul: A (float32) quantized as DynamicQuantizeLinear does, then
    MatMulIntegerToFloat with B (int8 or uint8), b_scale, b_zero_point and bias."""
    a = ctx.input(node, 0)
    if a.dtype != F32:
        raise unsupported(node, f"input dtype {a.dtype} (float32 only)")
    aq, a_s, a_z = (ctx.temp(f"{a.name}_{s}", t, sh) for s, t, sh in
                    (("quantized", np.uint8, a.shape), ("scale", F32, ()), ("zero_point", np.uint8, ())))
    ctx.emit("dynquant", [a.name], [aq, a_s, a_z], node.name)
    b_zero = node.inputs[3] if len(node.inputs) > 3 else ""
    bias = node.inputs[4] if len(node.inputs) > 4 else ""
    lower_matmul_integer_to_float(ctx, _Proxy(node, "MatMulIntegerToFloat",
                                              [aq, node.inputs[1], a_s, node.inputs[2], a_z, b_zero, bias]))


HANDLERS: dict = {
    "QuantizeLinear": lower_quantize, "DequantizeLinear": lower_dequantize, "QLinearConv": lower_qlinearconv,
    "QLinearMatMul": lower_qlinearmatmul, "QGemm": lower_qgemm, "QLinearAdd": _binary("qadd"),
    "QLinearMul": _binary("qmul"), "QLinearSigmoid": _unary_table("sigmoid"),
    "QLinearLeakyRelu": _unary_table("leakyrelu"), "QLinearAveragePool": lower_qavgpool,
    "QLinearGlobalAveragePool": lower_qglobalavgpool, "QLinearConcat": lower_qconcat, "QLinearSoftmax": lower_qsoftmax,
    "QLinearActivation": lower_qlinear_activation, "DynamicQuantizeLinear": lower_dynamic_quantize,
    "MatMulInteger": lower_matmul_integer, "ConvInteger": lower_conv_integer,
    "MatMulIntegerToFloat": lower_matmul_integer_to_float, "DynamicQuantizeMatMul": lower_dynamic_quantize_matmul,
}
# The com.microsoft ops among them (the others are in ONNX's default domain).
MS_OPS = frozenset({"QGemm", "QLinearAdd", "QLinearMul", "QLinearSigmoid", "QLinearLeakyRelu", "QLinearAveragePool",
                    "QLinearGlobalAveragePool", "QLinearConcat", "QLinearSoftmax", "MatMulIntegerToFloat",
                    "DynamicQuantizeMatMul"})
# The op qdq.py makes for elementwise ops onnxruntime leaves in float (its own domain).
ACCEL_OPS = frozenset({"QLinearActivation"})
ACCEL_DOMAIN = "ai.accel"
# Ops whose handler folds constant inputs itself, with onnxruntime's arithmetic.
SELF_FOLDING = frozenset({"QuantizeLinear", "DequantizeLinear"})
