"""Comparison, boolean logic and selection: Equal, Greater, GreaterOrEqual, Less, LessOrEqual, Not, And, Or,
Xor, Where, IsNaN and IsInf (FORMAT.md ops compare, logic, where).

Bool tensors are one byte per element, 0 or 1, at run time as in numpy. Nodes whose inputs are all constants
fold before lowering, as every op does."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import ACTIVATIONS, Compare, CompareFn, Logic, LogicFn
from .context import F32, INT_DTYPES, broadcast_shape, same_dtype, unsupported
from .elementwise import legacy_broadcast_operand

BOOL = np.dtype(np.bool_)

_COMPARE = {"Equal": CompareFn.EQUAL, "Greater": CompareFn.GREATER, "GreaterOrEqual": CompareFn.GREATER_OR_EQUAL,
            "Less": CompareFn.LESS, "LessOrEqual": CompareFn.LESS_OR_EQUAL}
_LOGIC = {"And": LogicFn.AND, "Or": LogicFn.OR, "Xor": LogicFn.XOR}


def _bool_input(ctx, node, i):
    v = ctx.input(node, i)
    if v.dtype != BOOL:
        raise CompileError(f"{node.label}: input '{v.name}' is {v.dtype}, not bool")
    return v


def lower_compare(ctx, node):
    """Equal, Greater, GreaterOrEqual, Less, LessOrEqual (every opset): A and B of one dtype, float32 or an
    integer dtype (int8, uint8, int16, uint16, int32, uint32, int64, uint64), or bool (Equal), with numpy
    broadcasting (before opset 7, broadcast=1 with axis aligns B as for Add); a bool output, one `compare`
    node. float32 compares as IEEE and as onnxruntime: a NaN operand makes every comparison false (Equal(NaN,
    NaN) included), -0 equals +0, infinities order as numbers. float16 and float64 inputs are not
    supported."""
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    same_dtype(node, [a, b])
    if a.dtype != F32 and a.dtype not in INT_DTYPES and a.dtype != BOOL:
        raise unsupported(node, f"dtype {a.dtype} of input '{a.name}' (float32, integers and bool only)")
    bname = legacy_broadcast_operand(ctx, node, a, b)
    shape = broadcast_shape(node, a.shape, ctx.g.value(bname).shape)
    y = ctx.define(ctx.output(node), BOOL, shape)
    ctx.emit("compare", [a.name, bname], [y], node.name, params=Compare(function=_COMPARE[node.op]))


def lower_logic(ctx, node):
    """And, Or, Xor (every opset): bool A and B with numpy broadcasting (before opset 7, broadcast=1 with axis
    as for Add), a bool output; one `logic` node."""
    a, b = _bool_input(ctx, node, 0), _bool_input(ctx, node, 1)
    bname = legacy_broadcast_operand(ctx, node, a, b)
    shape = broadcast_shape(node, a.shape, ctx.g.value(bname).shape)
    y = ctx.define(ctx.output(node), BOOL, shape)
    ctx.emit("logic", [a.name, bname], [y], node.name, params=Logic(function=_LOGIC[node.op]))


def lower_not(ctx, node):
    """Not (every opset): a bool X, Y = not X of X's shape; one `logic` node (function not)."""
    x = _bool_input(ctx, node, 0)
    y = ctx.define(ctx.output(node), BOOL, x.shape)
    ctx.emit("logic", [x.name], [y], node.name, params=Logic(function=LogicFn.NOT))


def lower_isnan_isinf(ctx, node):
    """IsNaN (opset 9+) and IsInf (opset 10+, detect_positive and detect_negative, both 1 by default): a
    float32 X, a bool Y of X's shape, through `compare` (equal): IsNaN is not (x == x), IsInf is |x| == inf
    (an `abs` activation first), x == inf or x == -inf when one sign is detected, and x == NaN (false
    everywhere) when neither is. float16 and float64 inputs are not supported."""
    x = ctx.input(node, 0)
    if x.dtype != F32:
        raise unsupported(node, f"dtype {x.dtype} of input '{x.name}' (float32 only)")
    y = ctx.output(node)
    equal = Compare(function=CompareFn.EQUAL)
    if node.op == "IsNaN":
        same = ctx.temp(f"{y}_equal", BOOL, x.shape)
        ctx.emit("compare", [x.name, x.name], [same], f"{node.name}/equal", params=equal)
        ctx.emit("logic", [same], [ctx.define(y, BOOL, x.shape)], node.name, params=Logic(function=LogicFn.NOT))
        return
    pos, neg = int(node.attr("detect_positive", 1)), int(node.attr("detect_negative", 1))
    operand = x.name
    if pos and neg:
        operand = ctx.temp(f"{y}_abs", F32, x.shape)
        ctx.emit("activation", [x.name], [operand], f"{node.name}/abs", act=ACTIVATIONS["abs"])
    target = np.inf if pos else (-np.inf if neg else np.nan)
    ref = ctx.const(np.array(target, np.float32), f"{y}_target")
    ctx.emit("compare", [operand, ref], [ctx.define(y, BOOL, x.shape)], node.name, params=equal)


def lower_where(ctx, node):
    """Where (every opset): a bool condition C, X and Y of one dtype (any dtype accel has: float32, float16,
    the integers, bool), numpy broadcasting over all three; Z = C ? X : Y, elements copied unchanged (NaN
    payloads included). One `where` node."""
    c = _bool_input(ctx, node, 0)
    x, y = ctx.input(node, 1), ctx.input(node, 2)
    same_dtype(node, [x, y])
    shape = broadcast_shape(node, c.shape, x.shape, y.shape)
    z = ctx.define(ctx.output(node), x.dtype, shape)
    ctx.emit("where", [c.name, x.name, y.name], [z], node.name)


HANDLERS: dict = {
    **dict.fromkeys(_COMPARE, lower_compare), **dict.fromkeys(_LOGIC, lower_logic),
    "Not": lower_not, "Where": lower_where, "IsNaN": lower_isnan_isinf, "IsInf": lower_isnan_isinf,
}
