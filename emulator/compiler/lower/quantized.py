"""Quantized ops in onnxruntime's operator form, and what the quantized op families share: QuantizeLinear and
DequantizeLinear (the edges of int8 regions, or folded on constants), QLinearConv, QLinearMatMul and
com.microsoft's QGemm. The other families: qlinear.py (com.microsoft's QLinear elementwise, pooling, softmax
and concat ops), qinteger.py (dynamic quantization's integer ops). QDQ models reach here too: qdq.py first
turns their DQ -> op -> Q groups into these ops, as onnxruntime's graph optimizer does.

Each quantized operand is a runtime tensor carrying its scale and zero point (Ctx.quantized); an op's
output is defined with the quantization the node gives it.
"""
from __future__ import annotations

import numpy as np

from .. import quant
from ..errors import CompileError
from ..ir import Value
from ..op_params import QGemm
from ..qdq import MS
from ..qdq_device import check_quant
from .context import broadcast_shape, unsupported
from .conv import emit_conv
from .linalg import matmul_shape

I32 = np.dtype(np.int32)
F32 = np.dtype(np.float32)


def quant_of(ctx, node, tensor, si, zi, shape, dtype, what, axis=None) -> quant.Quant:
    """The Quant given by the node's constant scale (input si) and zero point (input zi, optional) for the
    tensor named `tensor`, of `shape` and `dtype`: where every quantization of either form of a model enters
    the lowering, so the device rules' check (qdq_device.check_quant) is made here."""
    for i, part in ((si, "scale"), (zi, "zero point")):
        v = ctx.input_opt(node, i) if i is not None else None
        if v is not None and not v.is_const and v.name not in ctx.g.inputs:  # a graph input: const_input says
            raise unsupported(node, f"{what} {part} '{v.name}' computed at run time")
    scale = ctx.const_input(node, si, f"{what} scale")
    if scale is None:
        raise CompileError(f"{node.label}: the {what} scale (input {si}) is required")
    zero = ctx.const_input(node, zi, f"{what} zero point") if zi is not None else None
    q = quant.make(scale, zero, axis, dtype, shape, f"{node.label}: {what}")
    check_quant(ctx.int8, node.label, tensor, dtype, q.scale, q.zero_point)
    return q


def zero_dtype(ctx, node, zi, default=np.uint8) -> np.dtype:
    v = ctx.input_opt(node, zi)
    return np.dtype(default) if v is None else v.dtype


def require_q8(node, v: Value, what: str) -> None:
    if v.dtype not in quant.QUANT_DTYPES:
        raise unsupported(node, f"{what} dtype {v.dtype} (int8 and uint8 only)")


def lower_quantize(ctx, node):
    """QuantizeLinear (opsets 10-21): float32 X to int8 or uint8 (the zero point's dtype, else
    output_dtype, else uint8), per tensor or per axis. Folded when X is a constant. A scale or zero point given or
    computed at run time (DynamicQuantizeLinear's body): per tensor, as float32 Div, Round, Add, Clip and Cast
    (rewrites.quantize_at_run_time), onnxruntime's arithmetic. Not supported: blocked quantization, 4-bit, 16-bit and
    float8 outputs, float16 inputs."""
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
    q = quant_of(ctx, node, ctx.output(node), 1, 2, x.shape, ydtype, "output", node.attr("axis"))
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
    q = quant_of(ctx, node, x.name, 1, 2, x.shape, x.dtype, "input", node.attr("axis"))
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
    require_q8(node, x, "input X")
    w = ctx.const_input(node, 3, "weight W")
    if w is None:
        raise CompileError(f"{node.label}: input W is required")
    wv = ctx.input(node, 3)
    require_q8(node, wv, "weight W")
    if w.ndim != len(x.shape) or w.ndim not in (3, 4):
        raise unsupported(node, f"input {x.shape} and weight {w.shape} (only 1-D and 2-D convolutions)")
    xq = quant_of(ctx, node, x.name, 1, 2, x.shape, x.dtype, "input")
    wq = quant_of(ctx, node, wv.name, 4, 5, w.shape, w.dtype, "weight", axis=0)
    ydtype = zero_dtype(ctx, node, 7)
    yq = quant_of(ctx, node, ctx.output(node), 6, 7, (), ydtype, "output")
    b = ctx.const_input(node, 8, "bias B")
    if b is not None and b.dtype != I32:
        raise CompileError(f"{node.label}: bias B is {b.dtype}, not int32")
    xin = ctx.g.value(ctx.quantized(x.name, xq, node))
    emit_conv(ctx, node, "qconv", xin, w, node.inputs[3], node.inputs[8] if b is not None else None, b, ydtype,
              wquant=wq, yquant=yq)


def _matmul_quants(ctx, node, a: Value, b: Value, first: int):
    """(A's, B's and Y's Quant, Y's dtype) of QLinearMatMul-like inputs starting at `first`."""
    aq = quant_of(ctx, node, a.name, first + 1, first + 2, a.shape, a.dtype, "input A")
    baxis = len(b.shape) - 1 if len(b.shape) >= 2 else None
    bq = quant_of(ctx, node, b.name, first + 4, first + 5, b.shape, b.dtype, "input B", axis=baxis)
    if not aq.per_tensor:
        raise unsupported(node, "input A quantized per axis")
    return aq, bq


def lower_qlinearmatmul(ctx, node):
    """QLinearMatMul (opsets 10, 21): int8 or uint8 operands with numpy matmul semantics, A per tensor, B
    per tensor or per column."""
    a, b = ctx.input(node, 0), ctx.input(node, 3)
    require_q8(node, a, "input A")
    require_q8(node, b, "input B")
    aq, bq = _matmul_quants(ctx, node, a, b, 0)
    ydtype = zero_dtype(ctx, node, 7)
    yq = quant_of(ctx, node, ctx.output(node), 6, 7, (), ydtype, "output")
    ins = [ctx.quantized(a.name, aq, node), ctx.quantized(b.name, bq, node)]
    y = ctx.define(ctx.output(node), ydtype, matmul_shape(node, a.shape, b.shape), quant=yq)
    ctx.emit("qmatmul", ins, [y], node.name)


def lower_qgemm(ctx, node):
    """com.microsoft QGemm: 2-D int8 or uint8 A (per tensor) and constant B (per tensor or per output
    column), optional constant int32 C, transA, transB, alpha; quantized output when y_scale is given,
    else float32."""
    a, b = ctx.input(node, 0), ctx.input(node, 3)
    require_q8(node, a, "input A")
    require_q8(node, b, "input B")
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise CompileError(f"{node.label}: A {a.shape} and B {b.shape} must be 2-D")
    if not b.is_const:
        raise unsupported(node, "input B computed at run time")
    ta, tb = int(int(node.attr("transA", 0)) != 0), int(int(node.attr("transB", 0)) != 0)
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    if k != k2:
        raise CompileError(f"{node.label}: inner dims differ (A {a.shape} transA={ta}, B {b.shape} transB={tb})")
    aq = quant_of(ctx, node, a.name, 1, 2, a.shape, a.dtype, "input A")
    bq = quant_of(ctx, node, b.name, 4, 5, b.shape, b.dtype, "input B", axis=0 if tb else 1)
    if not aq.per_tensor:
        raise unsupported(node, "input A quantized per axis")
    ins = [ctx.quantized(a.name, aq, node), ctx.quantized_const(b.name, bq)]
    c = ctx.input_opt(node, 6)
    if c is not None:
        if not c.is_const or c.dtype != I32:
            raise unsupported(node, f"input C '{c.name}' ({c.dtype}; only a constant int32 C)")
        if broadcast_shape(node, c.shape, (m, n)) != (m, n):
            raise CompileError(f"{node.label}: C {c.shape} does not broadcast to {(m, n)}")
        ins.append(c.name)
    if ctx.input_opt(node, 7) is not None:
        ydtype = zero_dtype(ctx, node, 8)
        yq = quant_of(ctx, node, ctx.output(node), 7, 8, (), ydtype, "output")
        y = ctx.define(ctx.output(node), ydtype, (m, n), quant=yq)
    else:
        y = ctx.define(ctx.output(node), F32, (m, n))
    alpha = float(node.attr("alpha", 1.0))
    if ctx.int8 != "ort" and alpha != 1.0:  # the reader refuses it too; here a compiled model never fails to load
        raise CompileError(f"{node.label}: alpha {alpha:g} is not 1, which the {ctx.int8} int8 rules need")
    ctx.emit("qgemm", ins, [y], node.name, params=QGemm(trans_a=ta, trans_b=tb, alpha=alpha))


HANDLERS: dict = {
    "QuantizeLinear": lower_quantize, "DequantizeLinear": lower_dequantize, "QLinearConv": lower_qlinearconv,
    "QLinearMatMul": lower_qlinearmatmul, "QGemm": lower_qgemm,
}
DOMAIN_OPS = {MS: frozenset({"QGemm"})}  # the ops not in ONNX's default domain, by domain
# Ops whose handler folds constant inputs itself, with onnxruntime's arithmetic.
SELF_FOLDING = frozenset({"QuantizeLinear", "DequantizeLinear"})
