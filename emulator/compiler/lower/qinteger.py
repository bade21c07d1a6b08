"""Dynamic quantization's integer ops: DynamicQuantizeLinear, MatMulInteger and ConvInteger, and
com.microsoft's MatMulIntegerToFloat and DynamicQuantizeMatMul, which decompose into them and float32
multiplies and adds computed as onnxruntime computes them. Under a device's int8 rules their operands pass
the same check as every quantized tensor (qdq_device.check_quant): int8, zero points 0 (so
DynamicQuantizeLinear, uint8 with a scale computed at run time, is refused)."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..qdq import MS
from ..qdq_device import AT_RUN_TIME, check_quant
from .context import NodeView, broadcast_shape, unsupported
from .conv import emit_conv
from .linalg import matmul_shape
from .quantized import F32, I32, require_q8


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
    ctx.const_input(node, i, f"{what} zero point")  # refuses one computed at run time
    n = int(np.prod(v.shape, dtype=np.int64))
    if v.dtype != dtype or n not in (1, count):
        raise unsupported(node, f"{what} zero point '{v.name}' ({v.dtype}{list(v.shape)}; a constant of {dtype} "
                                f"with 1 or {count} values only)")
    return v.name


def _check_operand(ctx, node, v, zi, scale=None) -> None:
    """The device rules' check of an integer operand `v` (a Value) whose zero point is input zi; scale, when it
    has one, its scale input's Value."""
    if ctx.int8 == "ort":
        return
    z = ctx.input_opt(node, zi)
    zero = None if z is None else z.const if z.is_const else AT_RUN_TIME
    s = None if scale is None else scale.const if scale.is_const else AT_RUN_TIME
    check_quant(ctx.int8, node.label, v.name, v.dtype, s, zero)


def lower_dynamic_quantize(ctx, node):
    """DynamicQuantizeLinear (opset 11): float32 X to uint8 Y with the scale and zero point of X's range, as
    onnxruntime computes them."""
    x = ctx.input(node, 0)
    if x.dtype != F32:
        raise unsupported(node, f"input dtype {x.dtype} (float32 only)")
    outs = [ctx.output(node, i) for i in range(3)]
    check_quant(ctx.int8, node.label, outs[0], np.uint8, AT_RUN_TIME, AT_RUN_TIME)
    ctx.define(outs[0], np.uint8, x.shape)
    ctx.define(outs[1], F32, ())
    ctx.define(outs[2], np.uint8, ())
    ctx.emit("dynquant", [x.name], outs, node.name)


def lower_matmul_integer(ctx, node):
    """MatMulInteger (opset 10): int8 or uint8 A and B with numpy matmul semantics to int32; A's zero point one
    value (computed at run time or not), B's a constant of one value or one per column."""
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    require_q8(node, a, "input A")
    require_q8(node, b, "input B")
    _check_operand(ctx, node, a, 2)
    _check_operand(ctx, node, b, 3)
    n = b.shape[-1] if len(b.shape) >= 2 else 1
    ins = [a.name, b.name, _scalar_zero(ctx, node, 2, a.dtype, "A's"), _const_zero(ctx, node, 3, b.dtype, n, "B's")]
    y = ctx.define(ctx.output(node), I32, matmul_shape(node, a.shape, b.shape))
    ctx.emit("matmulinteger", ins, [y], node.name)


def lower_conv_integer(ctx, node):
    """ConvInteger (opset 10): 1-D and 2-D, int8 or uint8 X and constant W to int32, X's zero point one value
    (computed at run time or not), W's a constant of one value or one per output channel; geometry as Conv."""
    x = ctx.input(node, 0)
    require_q8(node, x, "input X")
    w = ctx.const_input(node, 1, "weight W")
    if w is None:
        raise CompileError(f"{node.label}: input W is required")
    require_q8(node, ctx.input(node, 1), "weight W")
    _check_operand(ctx, node, x, 2)
    _check_operand(ctx, node, ctx.input(node, 1), 3)
    if w.ndim != len(x.shape) or w.ndim not in (3, 4):
        raise unsupported(node, f"input {x.shape} and weight {w.shape} (only 1-D and 2-D convolutions)")
    extra = [_scalar_zero(ctx, node, 2, x.dtype, "X's"), _const_zero(ctx, node, 3, w.dtype, w.shape[0], "W's")]
    emit_conv(ctx, node, "convinteger", x, w, node.inputs[1], None, None, I32, extra=extra)


def lower_matmul_integer_to_float(ctx, node):
    """com.microsoft MatMulIntegerToFloat: A, B (int8 or uint8), a_scale, b_scale, a_zero_point, b_zero_point,
    bias: float32(acc) * float32(a_scale * b_scale[n]) + bias[n], acc MatMulInteger's, with a multiply and an
    add (no FMA), as onnxruntime does. A's scale and zero point may be computed at run time."""
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    require_q8(node, a, "input A")
    require_q8(node, b, "input B")
    n = b.shape[-1] if len(b.shape) >= 2 else 1
    a_scale, b_scale = ctx.input(node, 2), ctx.input(node, 3)
    if int(np.prod(a_scale.shape, dtype=np.int64)) != 1 or not b_scale.is_const or b_scale.const.size not in (1, n):
        raise unsupported(node, "scales other than one A scale and a constant B scale of 1 or one per column")
    _check_operand(ctx, node, a, 4, a_scale)
    _check_operand(ctx, node, b, 5, b_scale)
    ins = [a.name, b.name, _scalar_zero(ctx, node, 4, a.dtype, "A's"), _const_zero(ctx, node, 5, b.dtype, n, "B's")]
    shape = matmul_shape(node, a.shape, b.shape)
    y = ctx.output(node)
    acc = ctx.temp(f"{y}_acc", I32, shape)
    ctx.emit("matmulinteger", ins, [acc], node.name)
    accf = ctx.temp(f"{y}_accf", F32, shape)
    ctx.emit("cast", [acc], [accf], node.name)
    mult = ctx.temp(f"{y}_multiplier", F32, broadcast_shape(node, a_scale.shape, b_scale.shape))
    ctx.emit("mul", [a_scale.name, b_scale.name], [mult], node.name)
    bias = ctx.input_opt(node, 6)
    out = ctx.temp(f"{y}_scaled", F32, shape) if bias is not None else y
    ctx.define(out, F32, shape)
    ctx.emit("mul", [accf, mult], [out], node.name)
    if bias is not None:
        ctx.define(y, F32, broadcast_shape(node, shape, bias.shape))
        ctx.emit("add", [out, bias.name], [y], node.name)


def lower_dynamic_quantize_matmul(ctx, node):
    """com.microsoft DynamicQuantizeMatMul: A (float32) quantized as DynamicQuantizeLinear does, then
    MatMulIntegerToFloat with B (int8 or uint8), b_scale, b_zero_point and bias."""
    a, b, b_scale = (ctx.input(node, i) for i in range(3))
    if a.dtype != F32:
        raise unsupported(node, f"input dtype {a.dtype} (float32 only)")
    aq, a_s, a_z = (ctx.temp(f"{a.name}_{s}", t, sh) for s, t, sh in
                    (("quantized", np.uint8, a.shape), ("scale", F32, ()), ("zero_point", np.uint8, ())))
    ctx.emit("dynquant", [a.name], [aq, a_s, a_z], node.name)
    b_zero = node.inputs[3] if len(node.inputs) > 3 else ""
    bias = node.inputs[4] if len(node.inputs) > 4 else ""
    lower_matmul_integer_to_float(ctx, NodeView(node, "MatMulIntegerToFloat",
                                                [aq, b.name, a_s, b_scale.name, a_z, b_zero, bias]))


HANDLERS: dict = {
    "DynamicQuantizeLinear": lower_dynamic_quantize, "MatMulInteger": lower_matmul_integer,
    "ConvInteger": lower_conv_integer, "MatMulIntegerToFloat": lower_matmul_integer_to_float,
    "DynamicQuantizeMatMul": lower_dynamic_quantize_matmul,
}
DOMAIN_OPS = {MS: frozenset({"MatMulIntegerToFloat", "DynamicQuantizeMatMul"})}
