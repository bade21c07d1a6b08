"""Normalizations: BatchNormalization (folded into a preceding Conv later, by batchnorm.py),
LayerNormalization, Softmax, LogSoftmax and Hardmax."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..ir import Value
from ..op_params import ArgReduce, LayerNorm, LayerNormArithmetic, LogSoftmax, OneHot, Softmax
from .context import F32, float_input, normalize_axis, unsupported


def lower_batchnorm(ctx, node):
    """BatchNormalization (every opset), inference only: float32 X of rank >= 2 with constant scale, B,
    mean and var (one value per channel) and epsilon; folded into a preceding Conv when it can be.
    Not supported: training_mode=1 (opset >= 14), spatial=0 (opset < 9), the running-statistics
    outputs.
    """
    x = ctx.input(node, 0)
    if ctx.opset >= 14 and int(node.attr("training_mode", 0)):
        raise unsupported(node, "training_mode=1")
    if ctx.opset < 9 and int(node.attr("spatial", 1)) != 1:
        raise unsupported(node, "spatial=0")
    ctx.forbid_outputs_from(node, 1, "training statistics")
    if len(x.shape) < 2:
        raise CompileError(f"{node.label}: input rank {len(x.shape)} < 2")
    c = x.shape[1]
    params = []
    for i, what in enumerate(("scale", "B", "mean", "var"), start=1):
        p = ctx.const_input(node, i, what)
        if p is None:
            raise CompileError(f"{node.label}: input {what} is required")
        if p.size != c:
            raise CompileError(f"{node.label}: {what} has shape {p.shape}, expected ({c},)")
        params.append(p.reshape(c).astype(np.float64))
    gamma, beta, mean, var = params
    eps = float(node.attr("epsilon", 1e-5))
    s = gamma / np.sqrt(var + eps)
    t = beta - mean * s
    dt = x.dtype if x.dtype is not None else F32
    y = ctx.output(node)
    sname = ctx.const(s.astype(dt), f"{node.name}_scale")
    tname = ctx.const(t.astype(dt), f"{node.name}_shift")
    ctx.define(y, x.dtype, x.shape)
    ctx.emit("batchnorm", [x.name, sname, tname], [y], node.name)


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
    src = v.name
    if tuple(v.shape) != tuple(tail):  # leading 1s beyond the normalized rank: the mul would keep them
        src = ctx.reshape_temp(v.name, tail, node.name, f"{v.name}_{what}_tail")
    ones = ctx.const(np.ones(norm_shape, F32), f"{node.name}_ones")
    full = ctx.temp(f"{v.name}_{what}", F32, norm_shape)
    ctx.emit("mul", [src, ones], [full], node.name)
    return full


def lower_layernorm(ctx, node):
    """LayerNormalization (opset 17), float32: axis, epsilon (> 0), Scale and optional B, constant or
    not, of any shape that broadcasts into the normalized dims X.shape[axis:]; the outputs Y, Mean and
    InvStdDev (shaped X.shape[:axis] followed by 1s); stash_type is ignored, as onnxruntime does (statistics
    are float32). One `layernorm` node, rounded as onnxruntime's CPU kernel (arithmetic onnxruntime): bit for
    bit, so a float LayerNormalization between quantized layers requantizes as onnxruntime does."""
    x = float_input(ctx, node, 0)
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: input is a scalar")
    axis = normalize_axis(node, node.attr("axis", -1), rank)
    eps = float(node.attr("epsilon", 1e-5))
    if not eps > 0 or not np.isfinite(eps):
        raise unsupported(node, f"epsilon={eps} (must be > 0)")
    norm_shape = tuple(x.shape[axis:])
    params_in = []
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
        params_in.append(name)
    outputs, mask = [ctx.define(ctx.output(node), x.dtype, x.shape)], 0
    stats_shape = tuple(d if i < axis else 1 for i, d in enumerate(x.shape))
    for k in (1, 2):  # Mean, InvStdDev
        o = node.outputs[k] if k < len(node.outputs) else ""
        if o and o in ctx.used:
            outputs.append(ctx.define(o, F32, stats_shape))
            mask |= 1 << k
    params = LayerNorm(axis=axis, epsilon=eps, arithmetic=LayerNormArithmetic.ONNXRUNTIME,
                       outputs=mask | 1 if mask else 0)  # 0 (Y alone) keeps the 1.1 form of the field
    ctx.emit("layernorm", [x.name] + params_in, outputs, node.name, params=params)


def _along_axis(ctx, node):
    """(the float32 input, its normalized axis, whether opset < 13's meaning holds: over all dims from axis on) of
    the Softmax family, whose opset 13 changed what axis means."""
    x = float_input(ctx, node, 0)
    if len(x.shape) == 0:
        raise CompileError(f"{node.label}: input is a scalar")
    legacy = ctx.opset < 13
    return x, normalize_axis(node, node.attr("axis", 1 if legacy else -1), len(x.shape)), legacy


def lower_softmax(ctx, node):
    """Softmax and LogSoftmax (every opset): float32, axis, with opset < 13's semantics (over all dims from
    axis on) and opset >= 13's (over that one axis). LogSoftmax is (x - max) - log(sum(exp(x - max))), which
    neither overflows nor loses the digits of log(softmax) near the max. Other dtypes are not supported.
    """
    x, axis, legacy = _along_axis(ctx, node)
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    params = (LogSoftmax if node.op == "LogSoftmax" else Softmax)(axis=axis, coerce_2d=1 if legacy else 0)
    ctx.emit(node.op.lower(), [x.name], [y], node.name, params=params)


def lower_hardmax(ctx, node):
    """Hardmax (every opset): float32, 1 at the first largest element along axis and 0 elsewhere, with opset <
    13's semantics (over all dims from axis on) and opset >= 13's (over that one axis): an `argreduce` (argmax,
    first index) and a `onehot` of 0 and 1 that puts the line back. A line holding NaN has its 1 at the first
    NaN (argmax's rule, as numpy's argmax). Other dtypes are not supported."""
    x, axis, legacy = _along_axis(ctx, node)
    y = ctx.output(node)
    lines, xin = x.shape, x.name
    if legacy:  # the dims from axis on as one
        lines = (int(np.prod(x.shape[:axis], dtype=np.int64)), int(np.prod(x.shape[axis:], dtype=np.int64)))
        xin, axis = ctx.reshape_temp(x.name, lines, node.name, f"{x.name}_2d"), 1
    index = ctx.temp(f"{y}_argmax", np.dtype(np.int64), tuple(d for i, d in enumerate(lines) if i != axis))
    ctx.emit("argreduce", [xin], [index], f"{node.name}/argmax", params=ArgReduce(axis=axis, select_min=0,
                                                                                  select_last=0))
    values = ctx.const(np.array([0, 1], np.float32), f"{y}_values")
    out = ctx.define(y, F32, x.shape) if not legacy else ctx.temp(f"{y}_2d", F32, lines)
    ctx.emit("onehot", [index, values], [out], node.name, params=OneHot(axis=axis, depth=lines[axis]))
    if legacy:
        ctx.copy_to(out, y, x.shape, node.name)


HANDLERS: dict = {
    "BatchNormalization": lower_batchnorm, "LayerNormalization": lower_layernorm, "Softmax": lower_softmax,
    "LogSoftmax": lower_softmax, "Hardmax": lower_hardmax,
}
