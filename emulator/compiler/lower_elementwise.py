"""Elementwise math, reductions and normalization: unary functions (as activation codes), Pow, Min, Max,
the Reduce* ops and LayerNormalization (FORMAT.md 1.1 ops).

Each handler takes (ctx, node) as in lowering.py and emits runtime nodes. Runtime tensors are float32
only: any other dtype is a CompileError naming it (integer math on constants is folded before lowering)."""
from __future__ import annotations

import numpy as np

from .accm import ACTIVATIONS
from .errors import CompileError
from .ir import Value
from .lowering import F32, _broadcast, _legacy_broadcast_operand, _norm_axis, unsupported


def float_input(ctx, node, i) -> Value:
    """Input i, which must be present and float32."""
    v = ctx.input(node, i)
    if v.dtype != F32:
        raise unsupported(node, f"dtype {v.dtype} of input '{v.name}' (float32 only)")
    return v


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
]


def lower_elu(ctx, node):
    """Elu (every opset), float32, attribute alpha (default 1): the activation `elu`."""
    emit_activation(ctx, node, float_input(ctx, node, 0), "elu", node.attr("alpha", 1.0))


def lower_selu(ctx, node):
    """Selu (every opset), float32, attributes alpha and gamma (ONNX defaults): the activation `selu`."""
    emit_activation(ctx, node, float_input(ctx, node, 0), "selu",
                    node.attr("alpha", 1.67326319217681884765625),
                    node.attr("gamma", 1.05070102214813232421875))


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
    the `pow` op. Before opset 7, broadcast=1 and axis are honoured as for Add."""
    x = float_input(ctx, node, 0)
    e = ctx.g.value(_legacy_broadcast_operand(ctx, node, x, ctx.input(node, 1)))
    shape = _broadcast(node, x.shape, e.shape)
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


def chain_binary(ctx, node, op: str, ins: list) -> None:
    """node's output = op(...op(op(ins[0], ins[1]), ins[2])...), broadcasting; one input is a copy."""
    y = ctx.output(node)
    if len(ins) == 1:
        ctx.copy_to(ins[0].name, y, ins[0].shape, node.name)
        return
    acc = ins[0]
    for k, v in enumerate(ins[1:], start=1):
        shape = _broadcast(node, acc.shape, v.shape)
        last = k == len(ins) - 1
        out = ctx.define(y, acc.dtype, shape) if last else ctx.temp(f"{y}_{op}{k}", acc.dtype, shape)
        ctx.emit(op, [acc.name, v.name], [out], node.name)
        acc = ctx.g.value(out)


def lower_sum(ctx, node):
    """Sum (every opset), float32, one or more inputs with numpy broadcasting: a chain of binary `add`
    nodes; one input is a copy. Other dtypes are not supported."""
    ins = [float_input(ctx, node, i) for i in range(len(node.inputs))]
    chain_binary(ctx, node, "add", ins)


def lower_min_max(ctx, node):
    """Min and Max (every opset), float32, one or more inputs with numpy broadcasting: a chain of
    binary `min` / `max` nodes (NaN when either operand is NaN); one input is a copy."""
    if not node.inputs:
        raise CompileError(f"{node.label}: no inputs")
    ins = [float_input(ctx, node, i) for i in range(len(node.inputs))]
    chain_binary(ctx, node, node.op.lower(), ins)


# ---------------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------------

REDUCE_FUNCTIONS = {
    "ReduceMean": 1, "ReduceSum": 2, "ReduceMax": 3, "ReduceMin": 4, "ReduceProd": 5,
    "ReduceSumSquare": 6, "ReduceL1": 7, "ReduceL2": 8, "ReduceLogSumExp": 9,
}
# A reduction over no axes (noop_with_empty_axes=1) still applies the per-element part, as onnxruntime.
_NOOP_ACTIVATION = {"ReduceSumSquare": ("pow", 2.0), "ReduceL1": ("abs", 0.0), "ReduceL2": ("abs", 0.0)}


def _reduce_axes(ctx, node):
    """(axes or None for 'all', noop_with_empty_axes) from the attribute (before opset 18; ReduceSum
    before 13) or the constant input."""
    since = 13 if node.op == "ReduceSum" else 18
    if ctx.opset >= since:
        a = ctx.const_input(node, 1, "axes")
        axes = None if a is None or np.asarray(a).size == 0 else [int(v) for v in np.asarray(a).reshape(-1)]
        return axes, int(node.attr("noop_with_empty_axes", 0))
    a = node.attr("axes")
    return (None if not a else [int(v) for v in a]), 0


def lower_reduce(ctx, node):
    """ReduceMean, ReduceSum, ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2,
    ReduceLogSumExp (every opset), float32, over any set of axes: the axes attribute before opset 18
    (ReduceSum: 13), a constant axes input from then on (a computed one is refused); keepdims 0/1;
    noop_with_empty_axes (no axes: the input, with the per-element square or |x| of SumSquare, L1 and
    L2, as onnxruntime). One `reduce` node (a following copy drops the reduced dims when keepdims=0);
    a mean over exactly the axes after the second is the `globalavgpool` op."""
    x = float_input(ctx, node, 0)
    fn = REDUCE_FUNCTIONS[node.op]
    axes, noop = _reduce_axes(ctx, node)
    y = ctx.output(node)
    if axes is None and noop:
        act = _NOOP_ACTIVATION.get(node.op)
        if act is None:
            ctx.copy_to(x.name, y, x.shape, node.name)
        else:
            emit_activation(ctx, node, x, act[0], act[1])
        return
    keep = int(node.attr("keepdims", 1))
    rank = len(x.shape)
    if rank == 0:  # a scalar: reduced as a one-element vector
        x = ctx.g.value(ctx.reshape_temp(x.name, (1,), node.name, f"{x.name}_1d"))
        axes, rank, keep = [0], 1, 0
    elif axes is None:
        axes = list(range(rank))
    norm = sorted(_norm_axis(node, a, rank, "axes") for a in axes)
    if len(set(norm)) != len(norm):
        raise CompileError(f"{node.label}: repeated axes {axes}")
    kept = tuple(1 if i in norm else d for i, d in enumerate(x.shape))
    final = kept if keep else tuple(d for i, d in enumerate(x.shape) if i not in norm)
    if node.op == "ReduceMean" and rank >= 3 and norm == list(range(2, rank)):
        op, kw = "globalavgpool", {}
    else:
        op, kw = "reduce", {"ints": [fn, sum(1 << a for a in norm)]}
    out = ctx.define(y, x.dtype, kept) if final == kept else ctx.temp(f"{y}_keepdims", x.dtype, kept)
    ctx.emit(op, [x.name], [out], node.name, **kw)
    if out != y:
        ctx.copy_to(out, y, final, node.name)


# ---------------------------------------------------------------------------------------------------
# LayerNormalization
# ---------------------------------------------------------------------------------------------------

def norm_tail(shape, norm_shape):
    """`shape` without the leading 1s it has beyond norm_shape's rank, if it broadcasts into norm_shape
    (so a scale or bias of that shape varies along the normalized dims only); else None."""
    shape, norm_shape = tuple(shape), tuple(norm_shape)
    lead = len(shape) - len(norm_shape)
    if lead > 0:
        if any(d != 1 for d in shape[:lead]):
            return None
        shape = shape[lead:]
    try:
        return shape if tuple(np.broadcast_shapes(shape, norm_shape)) == norm_shape else None
    except ValueError:
        return None


def expand_norm_const(array, norm_shape):
    """A constant scale or bias as a float32 array shaped norm_shape, or None if it does not fit."""
    tail = norm_tail(np.shape(array), norm_shape)
    if tail is None:
        return None
    return np.ascontiguousarray(np.broadcast_to(np.asarray(array, F32).reshape(tail), tuple(norm_shape)))


def norm_param(ctx, node, v: Value, norm_shape: tuple, what: str):
    """A scale or bias that broadcasts into the dims from the axis on, as a tensor shaped norm_shape:
    a constant is expanded at compile time; a runtime tensor is reshaped (a copy) when it has the
    element count, else broadcast by a mul with ones. None if it does not broadcast so."""
    norm_shape = tuple(norm_shape)
    if tuple(v.shape) == norm_shape:
        return v.name
    if v.is_const:
        full = expand_norm_const(v.const, norm_shape)
        return None if full is None else ctx.const(full, f"{v.name}_{what}")
    tail = norm_tail(v.shape, norm_shape)
    if tail is None:
        return None
    if np.prod(tail, dtype=np.int64) == np.prod(norm_shape, dtype=np.int64):
        return ctx.reshape_temp(v.name, norm_shape, node.name, f"{v.name}_{what}")
    ones = ctx.const(np.ones(norm_shape, F32), f"{node.name}_ones")
    full = ctx.temp(f"{v.name}_{what}", F32, norm_shape)
    ctx.emit("mul", [v.name, ones], [full], node.name)
    return full


def lower_layernorm(ctx, node):
    """LayerNormalization (opset 17), float32: axis, epsilon (> 0), Scale and optional B, constant or
    not, of any shape that broadcasts into the normalized dims X.shape[axis:]. Only output Y may be
    used (Mean and InvStdDev are refused); stash_type is ignored (statistics are float32). One
    `layernorm` node."""
    x = float_input(ctx, node, 0)
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: input is a scalar")
    axis = _norm_axis(node, node.attr("axis", -1), rank)
    eps = float(node.attr("epsilon", 1e-5))
    if not eps > 0 or not np.isfinite(eps):
        raise unsupported(node, f"epsilon={eps} (must be > 0)")
    ctx.forbid_outputs_from(node, 1, "LayerNormalization Mean and InvStdDev")
    norm_shape = tuple(x.shape[axis:])
    params = []
    for i, what in ((1, "scale"), (2, "bias")):
        v = ctx.input_opt(node, i)
        if v is None:
            if i == 1:
                raise CompileError(f"{node.label}: input Scale is required")
            continue
        if v.dtype != F32:
            raise unsupported(node, f"dtype {v.dtype} of input '{v.name}' (float32 only)")
        name = norm_param(ctx, node, v, norm_shape, what)
        if name is None:
            raise unsupported(node, f"{what} shape {tuple(v.shape)} (must broadcast into the normalized "
                                    f"dims {norm_shape})")
        params.append(name)
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    ctx.emit("layernorm", [x.name] + params, [y], node.name, ints=[axis], floats=[eps])


HANDLERS: dict = {op: _unary(op, act, what) for op, act, what in _UNARY}
HANDLERS.update({
    "Elu": lower_elu, "Selu": lower_selu, "Gelu": lower_gelu,
    "Pow": lower_pow, "Sum": lower_sum, "Min": lower_min_max, "Max": lower_min_max,
    "LayerNormalization": lower_layernorm,
})
HANDLERS.update(dict.fromkeys(REDUCE_FUNCTIONS, lower_reduce))
