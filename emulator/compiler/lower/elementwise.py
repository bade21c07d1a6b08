"""Elementwise math: Add, Sub, Mul, Div, Mod, the bit operations, the activations (as activation codes), the
unary functions, Pow, Sum, Mean, Min and Max (FORMAT.md ops add to div, activation, pow, min, max, mod to shr;
the Reduce* ops are reduce.py's).

Runtime tensors are float32, and for Add, Sub, Mul, Div, Min, Max and Mod also the integer dtypes (int8 to
uint64), which BitShift and the Bitwise ops take alone; any other dtype is a CompileError naming it (math on
constants of any dtype is folded before lowering)."""
from __future__ import annotations

import numpy as np

from ..op_params import ACTIVATIONS
from ..errors import CompileError
from ..ir import Value
from . import power
from .context import F32, INT_DTYPES, broadcast_shape, float_input, same_dtype, unsupported


# ---------------------------------------------------------------------------------------------------
# Add, Sub, Mul, Div
# ---------------------------------------------------------------------------------------------------

_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div"}


def legacy_broadcast_operand(ctx, node, a: Value, b: Value) -> str:
    """Opset < 7 Add/Sub/Mul/Div with broadcast=1 (and axis): B reshaped for numpy broadcasting."""
    if ctx.opset >= 7 or not node.attr("broadcast", 0):
        return b.name
    ra, rb = len(a.shape), len(b.shape)
    axis = int(node.attr("axis", ra - rb))
    if axis < 0:
        axis += ra
    if axis < 0 or axis + rb > ra:
        raise CompileError(f"{node.label}: legacy broadcast axis {axis} does not fit shapes "
                           f"{a.shape} and {b.shape}")
    shape = tuple(b.shape) + (1,) * (ra - axis - rb)
    if shape == tuple(b.shape):
        return b.name
    if b.is_const:
        return ctx.const(b.const.reshape(shape), f"{b.name}_bcast")
    return ctx.reshape_temp(b.name, shape, node.name, f"{b.name}_bcast")


def arith_input(ctx, node, i) -> Value:
    """Input i, which must be present and float32 or an integer dtype."""
    v = ctx.input(node, i)
    if v.dtype != F32 and v.dtype not in INT_DTYPES:
        raise unsupported(node, f"dtype {v.dtype} of input '{v.name}' (float32 or an integer dtype only)")
    return v


def lower_binary(ctx, node):
    """Add, Sub, Mul, Div (every opset): A and B of one dtype, float32 or an integer dtype (int8, uint8,
    int16, uint16, int32, uint32, int64, uint64), with numpy broadcasting (opset >= 7), or the legacy
    broadcast=1 with axis (opset < 7: B aligned at axis). Integers compute as onnxruntime does: Add, Sub
    and Mul wrap (two's complement), Div truncates toward zero (-7 / 2 = -3). Where C leaves integer
    division undefined, accel defines it (a kernel never fails at run time): x / 0 = 0, and the most
    negative value / -1 wraps to itself (onnxruntime's process may crash on both). float16 and float64
    are not supported on runtime tensors.
    """
    a, b = arith_input(ctx, node, 0), arith_input(ctx, node, 1)
    same_dtype(node, [a, b])
    bname = legacy_broadcast_operand(ctx, node, a, b)
    bshape = ctx.g.value(bname).shape
    shape = broadcast_shape(node, a.shape, bshape)
    y = ctx.define(ctx.output(node), a.dtype, shape)
    ctx.emit(_BINARY[node.op], [a.name, bname], [y], node.name)


# ---------------------------------------------------------------------------------------------------
# Mod, BitShift, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot
# ---------------------------------------------------------------------------------------------------

_BITWISE = {"BitwiseAnd": "bitand", "BitwiseOr": "bitor", "BitwiseXor": "bitxor"}


def _integer_binary_op(node) -> str:
    """The runtime op of Mod, BitShift or Bitwise{And,Or,Xor}, or a CompileError."""
    if node.op == "Mod":
        fmod = int(node.attr("fmod", 0))
        if fmod not in (0, 1):
            raise CompileError(f"{node.label}: fmod {fmod} must be 0 or 1")
        return "fmod" if fmod else "mod"
    # The importer has held the dtypes to the op's at the model's opset: integers for the Bitwise ops, unsigned
    # ones for BitShift before opset 28.
    if node.op == "BitShift":
        direction = node.attr("direction", "")
        if direction not in ("LEFT", "RIGHT"):
            raise CompileError(f"{node.label}: direction '{direction}' is not LEFT or RIGHT")
        return "shl" if direction == "LEFT" else "shr"
    return _BITWISE[node.op]


F16 = np.dtype(np.float16)


def _mod_float16(ctx, node):
    """Mod of two float16 tensors: cast to float32, mod or fmod, cast back (rounding to nearest even)."""
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    wide = []
    for v in (a, b):
        if v.is_const:
            wide.append(ctx.const(np.asarray(v.const).astype(F32), f"{v.name}_f32"))
        else:
            wide.append(ctx.temp(f"{v.name}_f32", F32, v.shape))
            ctx.emit("cast", [v.name], [wide[-1]], node.name)
    shape = broadcast_shape(node, a.shape, b.shape)
    r = ctx.temp(f"{node.name}_f32", F32, shape)
    ctx.emit(_integer_binary_op(node), wide, [r], node.name)
    y = ctx.define(ctx.output(node), F16, shape)
    ctx.emit("cast", [r], [y], node.name)


def lower_integer_binary(ctx, node):
    """Mod (opset 10+), BitShift (opset 11+), BitwiseAnd, BitwiseOr and BitwiseXor (opset 18+), with numpy
    broadcasting, A and B of one dtype: the runtime ops `mod` (Mod with fmod=0: floored, B's sign, with
    opset 28's float rules) and `fmod` (fmod=1: truncated, A's sign, float32 as C's fmodf), float32 or integers;
    `shl` / `shr` (direction LEFT / RIGHT: unsigned integers, and signed ones from opset 28 with an arithmetic
    right shift; a shift that is negative or of the width or more gives the sign extension alone, as opset 28
    defines it) and `bitand`, `bitor`, `bitxor` (integers). Where C leaves integer remainders undefined, accel
    defines them (a kernel never fails at run time): x mod 0 = 0, and min mod -1 = 0. float16 and float64 are
    not supported. Mod of float16 computes in float32 between two casts (the remainder of float16 operands is
    exact in float32, and the floored form's one addition rounds as onnxruntime's, which computes it so too)."""
    if node.op == "Mod" and ctx.input(node, 0).dtype == F16 and ctx.input(node, 1).dtype == F16:
        return _mod_float16(ctx, node)
    a, b = arith_input(ctx, node, 0), arith_input(ctx, node, 1)
    same_dtype(node, [a, b])
    op = _integer_binary_op(node)
    shape = broadcast_shape(node, a.shape, b.shape)
    y = ctx.define(ctx.output(node), a.dtype, shape)
    ctx.emit(op, [a.name, b.name], [y], node.name)


def lower_bitwise_not(ctx, node):
    """BitwiseNot (opset 18+): an integer X, Y = ~X of X's shape, as a `bitxor` with all bits set."""
    x = ctx.input(node, 0)
    ones = ctx.const(np.invert(np.zeros((), x.dtype)), f"{node.name}_all_ones")
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    ctx.emit("bitxor", [x.name, ones], [y], node.name)


# ---------------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------------

def _scalar(node, arr, what) -> float:
    arr = np.asarray(arr)
    if arr.size != 1:
        raise CompileError(f"{node.label}: {what} must be a scalar, got shape {arr.shape}")
    return float(arr.reshape(()))


def activation_params(ctx, node):
    """(code, alpha, beta) of an activation op."""
    op = node.op
    if op == "Relu":
        return ACTIVATIONS["relu"], 0.0, 0.0
    if op == "Sigmoid":
        return ACTIVATIONS["sigmoid"], 0.0, 0.0
    if op == "HardSwish":
        return ACTIVATIONS["hardswish"], 0.0, 0.0
    if op == "HardSigmoid":
        return (ACTIVATIONS["hardsigmoid"], float(node.attr("alpha", 0.2)),
                float(node.attr("beta", 0.5)))
    if op == "LeakyRelu":
        return ACTIVATIONS["leakyrelu"], float(node.attr("alpha", 0.01)), 0.0
    if op == "Clip":
        if ctx.opset < 11:
            lo = float(node.attr("min", -np.inf))
            hi = float(node.attr("max", np.inf))
        else:
            mn = ctx.const_input(node, 1, "min")
            mx = ctx.const_input(node, 2, "max")
            lo = -np.inf if mn is None else _scalar(node, mn, "min")
            hi = np.inf if mx is None else _scalar(node, mx, "max")
        return ACTIVATIONS["clip"], lo, hi
    raise unsupported(node)


def lower_activation(ctx, node):
    """Relu, Sigmoid, HardSwish, HardSigmoid (alpha, beta), LeakyRelu (alpha) and Clip (every opset),
    float32. Clip takes min/max attributes (opset < 11) or min/max inputs (opset >= 11) that must be
    constant scalars; an absent bound is unbounded. Clip of an integer tensor (opset >= 12, int8 ..
    uint64) is min(max(x, min), max) as `max` and `min` nodes, its bounds scalars of x's dtype that may
    also be computed at run time. Float32 Clip with bounds computed at run time, and the other ops on
    other dtypes than float32, are not supported.
    """
    x = ctx.input(node, 0)
    if node.op == "Clip" and x.dtype in INT_DTYPES:
        _integer_clip(ctx, node, x)
        return
    x = float_input(ctx, node, 0)
    code, alpha, beta = activation_params(ctx, node)
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    ctx.emit("activation", [x.name], [y], node.name, act=code, alpha=alpha, beta=beta)


def _integer_clip(ctx, node, x: Value) -> None:
    bounds = [(op, ctx.input_opt(node, i)) for op, i in (("max", 1), ("min", 2))]
    bounds = [(op, b) for op, b in bounds if b is not None]
    for _, b in bounds:
        if b.dtype != x.dtype or any(d != 1 for d in b.shape):
            raise CompileError(f"{node.label}: bound '{b.name}' must be a scalar of x's dtype {x.dtype}, got "
                               f"{b.dtype} {tuple(b.shape)}")
    y = ctx.output(node)
    if not bounds:
        ctx.copy_to(x.name, y, x.shape, node.name)
        return
    acc = x.name
    for k, (op, b) in enumerate(bounds):
        bname = b.name
        if len(b.shape) > len(x.shape):  # a [1] bound of a scalar x: made a scalar, so as not to widen x
            bname = (ctx.const(b.const.reshape(()), f"{b.name}_scalar") if b.is_const else
                     ctx.reshape_temp(b.name, (), node.name, f"{b.name}_scalar"))
        last = k == len(bounds) - 1
        out = ctx.define(y, x.dtype, x.shape) if last else ctx.temp(f"{y}_{op}", x.dtype, x.shape)
        ctx.emit(op, [acc, bname], [out], node.name)
        acc = out


def lower_prelu(ctx, node):
    """PRelu (every opset): float32 X with a constant slope that broadcasts to X (a one-element slope
    is a fused leaky relu). A slope computed at run time is not supported.
    """
    x = float_input(ctx, node, 0)
    slope = ctx.const_input(node, 1, "slope")
    if slope is None:
        raise CompileError(f"{node.label}: input 1 (slope) is required")
    y = ctx.output(node)
    if slope.size == 1:
        ctx.define(y, x.dtype, x.shape)
        ctx.emit("activation", [x.name], [y], node.name, act=ACTIVATIONS["leakyrelu"],
                 alpha=float(slope.reshape(())), beta=0.0)
        return
    if broadcast_shape(node, x.shape, slope.shape) != tuple(x.shape):
        raise CompileError(f"{node.label}: slope {slope.shape} does not broadcast to {x.shape}")
    # prelu(x) = relu(x) * (1 - slope) + x * slope
    slope = slope.astype(x.dtype if x.dtype is not None else F32)
    r = ctx.temp(f"{y}_relu", x.dtype, x.shape)
    ctx.emit("activation", [x.name], [r], f"{node.name}/relu", act=ACTIVATIONS["relu"])
    one_minus = ctx.const(1 - slope, f"{y}_one_minus_slope")
    s = ctx.const(slope, f"{y}_slope")
    a = ctx.temp(f"{y}_pos", x.dtype, x.shape)
    ctx.emit("mul", [r, one_minus], [a], f"{node.name}/mul_pos")
    b = ctx.temp(f"{y}_neg", x.dtype, x.shape)
    ctx.emit("mul", [x.name, s], [b], f"{node.name}/mul_slope")
    ctx.define(y, x.dtype, x.shape)
    ctx.emit("add", [a, b], [y], f"{node.name}/add")


def emit_activation(ctx, node, x: Value, name: str, alpha=0.0, beta=0.0, out=None) -> str:
    y = ctx.define(out or ctx.output(node), x.dtype, x.shape)
    ctx.emit("activation", [x.name], [y], node.name, act=ACTIVATIONS[name], alpha=float(alpha),
             beta=float(beta))
    return y


# ---------------------------------------------------------------------------------------------------
# Unary functions
# ---------------------------------------------------------------------------------------------------

def _unary(onnx_op: str, act: str, what: str):
    def handler(ctx, node):
        emit_activation(ctx, node, float_input(ctx, node, 0), act)

    handler.__name__ = f"lower_{onnx_op.lower()}"
    handler.__doc__ = f"""{onnx_op} (every opset), float32: {what}, as the activation `{act}`.

    Fuses into the conv / gemm / matmul / elementwise node that produces its input when it is that
    tensor's only use."""
    return handler


_UNARY = [
    ("Tanh", "tanh", "tanh(x)"),
    ("Sqrt", "sqrt", "sqrt(x) (NaN for x < 0)"),
    ("Exp", "exp", "e^x"),
    ("Log", "log", "log(x) (NaN for x < 0, -inf at 0)"),
    ("Neg", "neg", "-x"),
    ("Abs", "abs", "|x|"),
    ("Reciprocal", "reciprocal", "1 / x"),
    ("Erf", "erf", "erf(x)"),
    ("Floor", "floor", "floor(x)"),
    ("Ceil", "ceil", "ceil(x)"),
    ("Round", "round", "x rounded to the nearest integer, halves to even"),
    ("Softplus", "softplus", "log(1 + e^x)"),
    ("Softsign", "softsign", "x / (1 + |x|)"),
    ("Sign", "sign", "-1, 0 or 1 by the sign of x (-0 and NaN kept)"),
    ("Sin", "sin", "sin(x)"),
    ("Cos", "cos", "cos(x)"),
    ("Tan", "tan", "tan(x)"),
    ("Asin", "asin", "asin(x) (NaN outside [-1, 1])"),
    ("Acos", "acos", "acos(x) (NaN outside [-1, 1])"),
    ("Atan", "atan", "atan(x)"),
    ("Sinh", "sinh", "sinh(x)"),
    ("Cosh", "cosh", "cosh(x)"),
    ("Asinh", "asinh", "asinh(x)"),
    ("Acosh", "acosh", "acosh(x) (NaN below 1)"),
    ("Atanh", "atanh", "atanh(x) (NaN outside [-1, 1])"),
    ("Mish", "mish", "x * tanh(softplus(x))"),
]

# ONNX op -> (activation, ((attribute, default) for alpha, then beta)): the unary functions with attributes.
_UNARY_WITH_ATTRIBUTES = {
    "Elu": ("elu", (("alpha", 1.0),)),
    "Selu": ("selu", (("alpha", 1.67326319217681884765625), ("gamma", 1.05070102214813232421875))),
    "Celu": ("celu", (("alpha", 1.0),)),
    "Shrink": ("shrink", (("lambd", 0.5), ("bias", 0.0))),
    "ThresholdedRelu": ("thresholded_relu", (("alpha", 1.0),)),
    "Swish": ("swish", (("alpha", 1.0),)),
}


def lower_unary_with_attributes(ctx, node):
    """Elu (alpha), Selu (alpha, gamma), Celu (alpha), Shrink (lambd, bias), ThresholdedRelu (alpha) and Swish
    (alpha), every opset, float32, the attributes' ONNX defaults when absent: the activations `elu`, `selu`,
    `celu`, `shrink`, `thresholded_relu` and `swish` with the attributes as alpha and beta. Celu's alpha must
    not be 0 (x / alpha)."""
    act, attrs = _UNARY_WITH_ATTRIBUTES[node.op]
    values = [float(node.attr(name, default)) for name, default in attrs]
    if node.op == "Celu" and values[0] == 0.0:
        raise CompileError(f"{node.label}: alpha 0 (Celu divides by alpha)")
    emit_activation(ctx, node, float_input(ctx, node, 0), act, *values)


def lower_gelu(ctx, node):
    """Gelu (opset 20), float32, approximate 'none' (erf form, the activation `gelu`) or 'tanh'
    (`gelu_tanh`). Other approximate values are refused."""
    approx = node.attr("approximate", "none")
    if approx not in ("none", "tanh"):
        raise unsupported(node, f"approximate '{approx}'")
    emit_activation(ctx, node, float_input(ctx, node, 0), "gelu" if approx == "none" else "gelu_tanh")


# ---------------------------------------------------------------------------------------------------
# Pow, Min, Max
# ---------------------------------------------------------------------------------------------------

def lower_pow(ctx, node):
    """Pow (every opset), float32 base, numpy broadcasting. A constant one-element exponent that does
    not widen the base's shape becomes the activation `pow` (alpha = the exponent; 1 is a copy, and
    the kernel squares, cubes, takes square roots and reciprocals exactly for 2, 3, 0.5 and -1); any
    other exponent, a float32 tensor or a constant of any numeric dtype (converted to float32), is
    the `pow` op. Before opset 7, broadcast=1 and axis are honoured as for Add. An integer base, or an integer
    exponent computed at run time, is power.py's (powcast)."""
    if ctx.opset >= 12 and power.is_mixed(ctx.input(node, 0), ctx.input(node, 1)):
        return power.lower_pow_mixed(ctx, node, ctx.input(node, 0), ctx.input(node, 1))
    x = float_input(ctx, node, 0)
    e = ctx.g.value(legacy_broadcast_operand(ctx, node, x, ctx.input(node, 1)))
    shape = broadcast_shape(node, x.shape, e.shape)
    if e.is_const:
        if not (np.issubdtype(e.const.dtype, np.floating) or np.issubdtype(e.const.dtype, np.integer)):
            raise unsupported(node, f"exponent dtype {e.const.dtype}")
        if e.const.size == 1 and shape == tuple(x.shape):
            p = float(np.asarray(e.const, np.float64).reshape(()))
            if p == 1.0:
                ctx.copy_to(x.name, ctx.output(node), x.shape, node.name)
            else:
                emit_activation(ctx, node, x, "pow", p)
            return
        ename = ctx.const(e.const.astype(F32), f"{e.name}_f32") if e.const.dtype != F32 else e.name
    elif e.dtype != F32:
        raise unsupported(node, f"dtype {e.dtype} of input '{e.name}' (float32 only)")
    else:
        ename = e.name
    y = ctx.define(ctx.output(node), x.dtype, shape)
    ctx.emit("pow", [x.name, ename], [y], node.name)


def chain_binary(ctx, node, op: str, ins: list, y: str | None = None) -> None:
    """y (node's output unless given) = op(...op(op(ins[0], ins[1]), ins[2])...), broadcasting; one input is a
    copy."""
    y = y or ctx.output(node)
    if len(ins) == 1:
        ctx.copy_to(ins[0].name, y, ins[0].shape, node.name)
        return
    acc = ins[0]
    for k, v in enumerate(ins[1:], start=1):
        shape = broadcast_shape(node, acc.shape, v.shape)
        last = k == len(ins) - 1
        out = ctx.define(y, acc.dtype, shape) if last else ctx.temp(f"{y}_{op}{k}", acc.dtype, shape)
        ctx.emit(op, [acc.name, v.name], [out], node.name)
        acc = ctx.g.value(out)


def _same_dtype_inputs(ctx, node) -> list:
    ins = [arith_input(ctx, node, i) for i in range(len(node.inputs))]
    same_dtype(node, ins)
    return ins


def lower_sum(ctx, node):
    """Sum and Mean (every opset), float32, one or more inputs with numpy broadcasting: a chain of binary `add`
    nodes, for Mean then a `div` by the count (the sum divided, as onnxruntime); one input is a copy. Other
    dtypes are not supported."""
    ins = [float_input(ctx, node, i) for i in range(len(node.inputs))]
    if node.op == "Sum" or len(ins) == 1:
        chain_binary(ctx, node, "add", ins)
        return
    y = ctx.output(node)
    total = ctx.g.names.new(f"{y}_sum")
    chain_binary(ctx, node, "add", ins, total)
    count = ctx.const(np.array(len(ins), np.float32), f"{y}_count")
    shape = ctx.g.value(total).shape
    ctx.emit("div", [total, count], [ctx.define(y, F32, shape)], node.name)


def lower_min_max(ctx, node):
    """Min and Max (every opset), float32 or one integer dtype (int8 .. uint64), one or more inputs with
    numpy broadcasting: a chain of binary `min` / `max` nodes (float32: NaN when either operand is NaN);
    one input is a copy. float16 and float64 are not supported."""
    if not node.inputs:
        raise CompileError(f"{node.label}: no inputs")
    chain_binary(ctx, node, node.op.lower(), _same_dtype_inputs(ctx, node))


HANDLERS: dict = {
    "Add": lower_binary, "Sub": lower_binary, "Mul": lower_binary, "Div": lower_binary,
    "Relu": lower_activation, "Sigmoid": lower_activation, "HardSigmoid": lower_activation,
    "HardSwish": lower_activation, "LeakyRelu": lower_activation, "Clip": lower_activation,
    "PRelu": lower_prelu, "Gelu": lower_gelu,
    "Pow": lower_pow, "Sum": lower_sum, "Mean": lower_sum, "Min": lower_min_max, "Max": lower_min_max,
    "Mod": lower_integer_binary, "BitShift": lower_integer_binary, "BitwiseNot": lower_bitwise_not,
    **dict.fromkeys(_BITWISE, lower_integer_binary),
}
HANDLERS.update({op: _unary(op, act, what) for op, act, what in _UNARY})
HANDLERS.update(dict.fromkeys(_UNARY_WITH_ATTRIBUTES, lower_unary_with_attributes))
