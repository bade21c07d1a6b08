"""Walks the ONNX nodes in order: folds what is constant (folding.py) and lowers the rest to runtime
nodes (FORMAT.md ops), computing every output's static shape with the op's own rule."""

from __future__ import annotations

import numpy as np

from . import folding
from .accm import ACTIVATIONS
from .errors import CompileError
from .importer import DEFAULT_DOMAINS, Imported, check_schema
from .ir import Graph, Node, Value
from .spatial import int_list, out_size, resolve_pads

F32 = np.dtype(np.float32)


def unsupported(node, what=None) -> CompileError:
    dom = f" (domain '{node.domain}')" if node.domain not in DEFAULT_DOMAINS else ""
    if what is None:
        return CompileError(f"unsupported op '{node.op}'{dom} (node '{node.name}')")
    return CompileError(f"unsupported {what} in op '{node.op}' (node '{node.name}')")


class Ctx:
    def __init__(self, imp: Imported):
        self.g: Graph = imp.graph
        self.opset = imp.opset
        self.used = imp.used

    # ---- inputs ----
    def input(self, node, i) -> Value:
        if i >= len(node.inputs) or not node.inputs[i]:
            raise CompileError(f"{node.label}: input {i} is required")
        return self.g.value(node.inputs[i])

    def input_opt(self, node, i):
        if i >= len(node.inputs) or not node.inputs[i]:
            return None
        return self.g.value(node.inputs[i])

    def const_input(self, node, i, what):
        v = self.input_opt(node, i)
        if v is None:
            return None
        if not v.is_const:
            raise CompileError(f"{node.label}: {what} ('{v.name}') must be a constant "
                               f"(after constant folding)")
        return v.const

    def output(self, node, i=0) -> str:
        if i >= len(node.outputs) or not node.outputs[i]:
            raise CompileError(f"{node.label}: output {i} is required")
        return node.outputs[i]

    def forbid_outputs_from(self, node, first, why):
        for o in node.outputs[first:]:
            if o and o in self.used:
                raise unsupported(node, f"output '{o}' ({why})")

    # ---- building ----
    def define(self, name, dtype, shape) -> str:
        shape = tuple(int(d) for d in shape)
        self.g.values[name] = Value(name, np.dtype(dtype) if dtype is not None else None, shape)
        return name

    def temp(self, hint, dtype, shape) -> str:
        return self.g.add_value(hint, dtype, tuple(int(d) for d in shape))

    def const(self, array, hint) -> str:
        return self.g.add_const(np.asarray(array, order="C"), hint)

    def emit(self, op, inputs, outputs, name, **kw) -> Node:
        n = Node(op, list(inputs), list(outputs), name, **kw)
        self.g.nodes.append(n)
        return n

    def copy_to(self, src: str, dst_name: str, shape, name) -> str:
        """A copy node from src into a new value dst_name shaped `shape` (a reshape)."""
        v = self.g.value(src)
        shape = tuple(int(d) for d in shape)
        if int(np.prod(shape, dtype=np.int64)) != int(np.prod(v.shape, dtype=np.int64)):
            raise CompileError(f"node '{name}': cannot reshape '{src}' {v.shape} to {shape}")
        self.define(dst_name, v.dtype, shape)
        self.emit("copy", [src], [dst_name], name)
        return dst_name

    def reshape_temp(self, src: str, shape, name, hint) -> str:
        return self.copy_to(src, self.g.names.new(hint), shape, name)


def _norm_axis(node, axis, rank, what="axis", allow_end=False):
    """axis in [-rank, rank) (or [-rank, rank] with allow_end) -> a non-negative axis."""
    axis = int(axis)
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < (rank + 1 if allow_end else rank):
        raise CompileError(f"{node.label}: {what} {axis} is out of range for rank {rank}")
    return a


def _prod(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _broadcast(node, *shapes) -> tuple:
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise CompileError(f"{node.label}: shapes {' and '.join(str(tuple(s)) for s in shapes)} "
                           f"do not broadcast") from None


# ---------------------------------------------------------------------------------------------------
# Elementwise and matrix ops
# ---------------------------------------------------------------------------------------------------

_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div"}


def _legacy_broadcast_operand(ctx, node, a: Value, b: Value) -> str:
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


def lower_binary(ctx, node):
    """Add, Sub, Mul, Div (every opset): float32 A and B with numpy broadcasting (opset >= 7), or the
    legacy broadcast=1 with axis (opset < 7: B aligned at axis). Other dtypes (integer division
    included) are not supported on runtime tensors.
    """
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    bname = _legacy_broadcast_operand(ctx, node, a, b)
    bshape = ctx.g.value(bname).shape
    shape = _broadcast(node, a.shape, bshape)
    y = ctx.define(ctx.output(node), a.dtype, shape)
    ctx.emit(_BINARY[node.op], [a.name, bname], [y], node.name)


def lower_gemm(ctx, node):
    """Gemm (every opset): 2-D float32 A and B with transA, transB, alpha and beta, and an optional C
    that broadcasts to (M, N). Integer Gemm is not supported.
    """
    a, b, c = ctx.input(node, 0), ctx.input(node, 1), ctx.input_opt(node, 2)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise CompileError(f"{node.label}: A {a.shape} and B {b.shape} must be 2-D")
    ta, tb = int(int(node.attr("transA", 0)) != 0), int(int(node.attr("transB", 0)) != 0)  # nonzero is true
    m, k = (a.shape[1], a.shape[0]) if ta else a.shape
    k2, n = (b.shape[1], b.shape[0]) if tb else b.shape
    if k != k2:
        raise CompileError(f"{node.label}: inner dims differ (A {a.shape} transA={ta}, "
                           f"B {b.shape} transB={tb})")
    inputs = [a.name, b.name]
    if c is not None:
        if _broadcast(node, c.shape, (m, n)) != (m, n):
            raise CompileError(f"{node.label}: C {c.shape} does not broadcast to {(m, n)}")
        inputs.append(c.name)
    y = ctx.define(ctx.output(node), a.dtype, (m, n))
    ctx.emit("gemm", inputs, [y], node.name, ints=[ta, tb],
             floats=[float(node.attr("alpha", 1.0)), float(node.attr("beta", 1.0))])


def matmul_shape(node, a, b) -> tuple:
    if not a or not b:
        raise CompileError(f"{node.label}: MatMul operands must have rank >= 1")
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        raise CompileError(f"{node.label}: inner dims differ ({tuple(a)} x {tuple(b)})")
    batch = _broadcast(node, a2[:-2], b2[:-2])
    out = list(batch) + [a2[-2], b2[-1]]
    if len(b) == 1:
        out.pop(-1)
    if len(a) == 1:
        out.pop(-2 if len(b) != 1 else -1)
    return tuple(out)


def lower_matmul(ctx, node):
    """MatMul (every opset): float32 operands of rank >= 1 with numpy matmul semantics (1-D operands
    promoted, batch dims broadcast). Integer MatMul is not supported.
    """
    a, b = ctx.input(node, 0), ctx.input(node, 1)
    y = ctx.define(ctx.output(node), a.dtype, matmul_shape(node, a.shape, b.shape))
    ctx.emit("matmul", [a.name, b.name], [y], node.name)


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
    constant scalars; an absent bound is unbounded. Clip with bounds computed at run time, and integer
    inputs, are not supported.
    """
    x = ctx.input(node, 0)
    code, alpha, beta = activation_params(ctx, node)
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    ctx.emit("activation", [x.name], [y], node.name, act=code, alpha=alpha, beta=beta)


def lower_prelu(ctx, node):
    """PRelu (every opset): float32 X with a constant slope that broadcasts to X (a one-element slope
    is a fused leaky relu). A slope computed at run time is not supported.
    """
    x = ctx.input(node, 0)
    slope = ctx.const_input(node, 1, "slope")
    if slope is None:
        raise CompileError(f"{node.label}: input 1 (slope) is required")
    y = ctx.output(node)
    if slope.size == 1:
        ctx.define(y, x.dtype, x.shape)
        ctx.emit("activation", [x.name], [y], node.name, act=ACTIVATIONS["leakyrelu"],
                 alpha=float(slope.reshape(())), beta=0.0)
        return
    if _broadcast(node, x.shape, slope.shape) != tuple(x.shape):
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


# ---------------------------------------------------------------------------------------------------
# Convolution and pooling (2-D; 1-D lowered to 2-D with H = 1)
# ---------------------------------------------------------------------------------------------------

def _lift_1d(ctx, node, x: Value) -> str:
    n, c, w = x.shape
    return ctx.reshape_temp(x.name, (n, c, 1, w), node.name, f"{x.name}_2d")


def _finish_1d(ctx, node, y2: str, y: str):
    v = ctx.g.value(y2)
    n, c, _, w = v.shape
    ctx.copy_to(y2, y, (n, c, w), node.name)


def conv_operands(ctx, node, what: str):
    """(X, W, B or None, rank) of a Conv-like node: X 3-D or 4-D (`what` names the op's kind in the
    refusal), W a constant of X's rank, B an optional constant."""
    x = ctx.input(node, 0)
    w = ctx.const_input(node, 1, "weight W")
    if w is None:
        raise CompileError(f"{node.label}: input W is required")
    b = ctx.const_input(node, 2, "bias B")
    rank = len(x.shape)
    if rank not in (3, 4):
        raise unsupported(node, f"input rank {rank} (only 1-D and 2-D {what})")
    if w.ndim != rank:
        raise CompileError(f"{node.label}: weight shape {w.shape} does not match input rank {rank}")
    return x, w, b, rank


def lower_conv(ctx, node):
    """Conv (every opset): 1-D and 2-D float32 convolutions (input rank 3 or 4) with constant W and
    optional constant B, group, strides, dilations, kernel_shape (must match W), pads and auto_pad
    (NOTSET, VALID, SAME_UPPER, SAME_LOWER). 3-D and higher convolutions and weights computed at run
    time are not supported.
    """
    x, w, b, rank = conv_operands(ctx, node, "convolutions")
    sp = rank - 2
    group = int(node.attr("group", 1))
    kernel = [int(k) for k in w.shape[2:]]
    if node.attr("kernel_shape") is not None and [int(k) for k in node.attr("kernel_shape")] != kernel:
        raise CompileError(f"{node.label}: kernel_shape {list(node.attr('kernel_shape'))} does not "
                           f"match the weight shape {w.shape}")
    strides = int_list(node, "strides", [1] * sp, sp, minimum=1)
    dil = int_list(node, "dilations", [1] * sp, sp, minimum=1)
    begins, ends = resolve_pads(node, x.shape[2:], kernel, strides, dil)
    n, c = x.shape[:2]
    m = int(w.shape[0])
    if group < 1 or c != w.shape[1] * group or m % group:
        raise CompileError(f"{node.label}: input channels {c}, weight {w.shape} and group {group} "
                           f"do not agree")
    if b is not None and tuple(b.shape) != (m,):
        raise CompileError(f"{node.label}: bias shape {b.shape} is not ({m},)")
    if sp == 1:
        kernel, strides, dil = [1] + kernel, [1] + strides, [1] + dil
        begins, ends = [0] + begins, [0] + ends
        xin = _lift_1d(ctx, node, x)
        w = w.reshape(m, w.shape[1], 1, w.shape[2])
        wname = ctx.const(w, f"{node.inputs[1]}_2d")
    else:
        xin, wname = x.name, node.inputs[1]
    in_hw = ctx.g.value(xin).shape[2:]
    out_hw = [out_size(node, in_hw[i], kernel[i], strides[i], dil[i], begins[i], ends[i])
              for i in range(2)]
    inputs = [xin, wname] + ([node.inputs[2]] if b is not None else [])
    ints = [group, kernel[0], kernel[1], strides[0], strides[1], begins[0], begins[1], ends[0],
            ends[1], dil[0], dil[1]]
    y = ctx.output(node)
    if sp == 1:
        y2 = ctx.temp(f"{y}_2d", x.dtype, (n, m, *out_hw))
        ctx.emit("conv", inputs, [y2], node.name, ints=ints)
        _finish_1d(ctx, node, y2, y)
    else:
        ctx.define(y, x.dtype, (n, m, *out_hw))
        ctx.emit("conv", inputs, [y], node.name, ints=ints)


def lower_pool(ctx, node):
    """MaxPool and AveragePool (every opset): 1-D and 2-D float32 pooling (input rank 3 or 4) with
    kernel_shape, strides, pads, auto_pad (NOTSET, VALID, SAME_UPPER, SAME_LOWER), ceil_mode,
    dilations (MaxPool) and count_include_pad (AveragePool). Not supported: 3-D and higher pooling,
    MaxPool's Indices output, AveragePool dilations other than 1, integer MaxPool.
    """
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if rank not in (3, 4):
        raise unsupported(node, f"input rank {rank} (only 1-D and 2-D pooling)")
    sp = rank - 2
    if node.attr("kernel_shape") is None:
        raise CompileError(f"{node.label}: kernel_shape is required")
    kernel = int_list(node, "kernel_shape", None, sp, minimum=1)
    strides = int_list(node, "strides", [1] * sp, sp, minimum=1)
    dil = int_list(node, "dilations", [1] * sp, sp, minimum=1)
    ceil_mode = int(int(node.attr("ceil_mode", 0)) != 0)
    is_max = node.op == "MaxPool"
    if is_max:
        ctx.forbid_outputs_from(node, 1, "MaxPool indices")
        if int(node.attr("storage_order", 0)) not in (0, 1):
            raise unsupported(node, "storage_order")
    elif any(d != 1 for d in dil):
        raise unsupported(node, f"dilations={dil}")
    begins, ends = resolve_pads(node, x.shape[2:], kernel, strides, dil)
    _emit_pool(ctx, node, x, "maxpool" if is_max else "avgpool", kernel, strides, dil, begins, ends,
               ceil_mode, int(int(node.attr("count_include_pad", 0)) != 0))


def _emit_pool(ctx, node, x, op, kernel, strides, dil, begins, ends, ceil_mode, cip):
    sp = len(x.shape) - 2
    if sp == 1:
        kernel, strides, dil = [1] + kernel, [1] + strides, [1] + dil
        begins, ends = [0] + begins, [0] + ends
        xin = _lift_1d(ctx, node, x)
    else:
        xin = x.name
    in_hw = ctx.g.value(xin).shape[2:]
    out_hw = [out_size(node, in_hw[i], kernel[i], strides[i], dil[i], begins[i], ends[i],
                       bool(ceil_mode)) for i in range(2)]
    ints = [0, kernel[0], kernel[1], strides[0], strides[1], begins[0], begins[1], ends[0], ends[1],
            dil[0], dil[1], 1 if ceil_mode else 0]
    if op == "avgpool":
        ints.append(1 if cip else 0)
    n, c = x.shape[:2]
    y = ctx.output(node)
    if sp == 1:
        y2 = ctx.temp(f"{y}_2d", x.dtype, (n, c, *out_hw))
        ctx.emit(op, [xin], [y2], node.name, ints=ints)
        _finish_1d(ctx, node, y2, y)
    else:
        ctx.define(y, x.dtype, (n, c, *out_hw))
        ctx.emit(op, [xin], [y], node.name, ints=ints)


def lower_global_avgpool(ctx, node):
    """GlobalAveragePool (every opset): float32 input of rank >= 3, averaged over every dim after the
    second.
    """
    x = ctx.input(node, 0)
    if len(x.shape) < 3:
        raise CompileError(f"{node.label}: input rank {len(x.shape)} < 3")
    y = ctx.define(ctx.output(node), x.dtype, tuple(x.shape[:2]) + (1,) * (len(x.shape) - 2))
    ctx.emit("globalavgpool", [x.name], [y], node.name)


def lower_global_maxpool(ctx, node):
    """GlobalMaxPool (every opset): 1-D and 2-D float32 inputs (rank 3 or 4). Rank 5 and higher are
    not supported.
    """
    x = ctx.input(node, 0)
    if len(x.shape) not in (3, 4):
        raise unsupported(node, f"input rank {len(x.shape)} (only 1-D and 2-D pooling)")
    sp = len(x.shape) - 2
    kernel = list(x.shape[2:])
    _emit_pool(ctx, node, x, "maxpool", kernel, [1] * sp, [1] * sp, [0] * sp, [0] * sp, 0, 0)


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


# ---------------------------------------------------------------------------------------------------
# Data movement: copies, transpose, concat, softmax
# ---------------------------------------------------------------------------------------------------

def lower_identity(ctx, node):
    """Identity and Dropout (every opset) on tensors of any accel dtype, as a copy; Dropout in inference
    mode (ratio ignored). Not supported: sequence and optional inputs, Dropout's mask output, and
    training_mode true (opset >= 12).
    """
    x = ctx.input(node, 0)
    if node.op == "Dropout":
        ctx.forbid_outputs_from(node, 1, "Dropout mask")
        if ctx.opset >= 12:
            tm = ctx.const_input(node, 2, "training_mode")
            if tm is not None and bool(np.asarray(tm).reshape(-1)[0]):
                raise unsupported(node, "training_mode=True")
    ctx.copy_to(x.name, ctx.output(node), x.shape, node.name)


def lower_flatten(ctx, node):
    """Flatten (every opset): any accel dtype, axis in [-rank, rank] (a copy).
    """
    x = ctx.input(node, 0)
    rank = len(x.shape)
    axis = _norm_axis(node, node.attr("axis", 1), rank, allow_end=True)
    ctx.copy_to(x.name, ctx.output(node), (_prod(x.shape[:axis]), _prod(x.shape[axis:])), node.name)


def reshape_shape(node, in_shape, target, allowzero) -> tuple:
    out, infer = [], -1
    for i, s in enumerate(int(v) for v in target):
        if s == 0 and not allowzero:
            if i >= len(in_shape):
                raise CompileError(f"{node.label}: shape {list(target)} copies dim {i}, but the "
                                   f"input {tuple(in_shape)} has rank {len(in_shape)}")
            out.append(int(in_shape[i]))
        elif s == -1:
            if infer >= 0:
                raise CompileError(f"{node.label}: shape {list(target)} has more than one -1")
            infer = i
            out.append(1)
        elif s < -1:
            raise CompileError(f"{node.label}: shape {list(target)} has a negative dim")
        else:
            out.append(s)
    total = _prod(in_shape)
    if infer >= 0:
        known = _prod(out)
        if known == 0 or total % known:
            raise CompileError(f"{node.label}: cannot reshape {tuple(in_shape)} to {list(target)}")
        out[infer] = total // known
    if _prod(out) != total:
        raise CompileError(f"{node.label}: cannot reshape {tuple(in_shape)} to {list(target)}")
    return tuple(out)


def lower_reshape(ctx, node):
    """Reshape (every opset): any accel dtype (a copy), the target from the shape attribute (opset < 5) or a
    constant shape input (opset >= 5), with 0 (copy the dim) and one -1 (inferred), and allowzero
    (opset >= 14). A shape computed at run time and empty results are not supported.
    """
    x = ctx.input(node, 0)
    if ctx.opset < 5:
        target = node.attr("shape")
        if target is None:
            raise CompileError(f"{node.label}: attribute shape is required")
    else:
        target = ctx.const_input(node, 1, "shape")
        if target is None:
            raise CompileError(f"{node.label}: input shape is required")
        target = np.asarray(target).reshape(-1)
    allowzero = int(node.attr("allowzero", 0)) if ctx.opset >= 14 else 0
    ctx.copy_to(x.name, ctx.output(node), reshape_shape(node, x.shape, target, allowzero), node.name)


def _axes(ctx, node, opset_input):
    if ctx.opset >= opset_input:
        a = ctx.const_input(node, 1, "axes")
        return None if a is None else [int(v) for v in np.asarray(a).reshape(-1)]
    a = node.attr("axes")
    return None if a is None else [int(v) for v in a]


def lower_squeeze(ctx, node):
    """Squeeze (every opset): any accel dtype (a copy); axes from the attribute (opset < 13) or a constant
    input (opset >= 13), negative allowed; no axes removes every dim of size 1. Axes computed at run
    time are not supported.
    """
    x = ctx.input(node, 0)
    axes = _axes(ctx, node, 13)
    rank = len(x.shape)
    if axes is None:
        shape = tuple(d for d in x.shape if d != 1)
    else:
        axes = {_norm_axis(node, a, rank, "axes") for a in axes}
        for a in axes:
            if x.shape[a] != 1:
                raise CompileError(f"{node.label}: cannot squeeze axis {a} of size {x.shape[a]}")
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    ctx.copy_to(x.name, ctx.output(node), shape, node.name)


def lower_unsqueeze(ctx, node):
    """Unsqueeze (every opset): any accel dtype (a copy); axes from the attribute (opset < 13) or a constant
    input (opset >= 13), negative allowed. Axes computed at run time are not supported.
    """
    x = ctx.input(node, 0)
    axes = _axes(ctx, node, 13)
    if axes is None:
        raise CompileError(f"{node.label}: axes are required")
    out_rank = len(x.shape) + len(axes)
    axes = [_norm_axis(node, a, out_rank, "axes") for a in axes]
    if len(set(axes)) != len(axes):
        raise CompileError(f"{node.label}: repeated axes {axes}")
    it = iter(x.shape)
    shape = tuple(1 if i in axes else next(it) for i in range(out_rank))
    ctx.copy_to(x.name, ctx.output(node), shape, node.name)


def lower_transpose(ctx, node):
    """Transpose (every opset): float32, perm given or the default reversal. Other dtypes are not
    supported.
    """
    x = ctx.input(node, 0)
    rank = len(x.shape)
    perm = node.attr("perm")
    perm = list(range(rank))[::-1] if perm is None else [int(p) for p in perm]
    if sorted(perm) != list(range(rank)):
        raise CompileError(f"{node.label}: perm {perm} is not a permutation of 0..{rank - 1}")
    y = ctx.define(ctx.output(node), x.dtype, tuple(x.shape[p] for p in perm))
    ctx.emit("transpose", [x.name], [y], node.name, ints=perm)


def lower_concat(ctx, node):
    """Concat (every opset): float32 inputs, axis (default 1 before opset 4; negative allowed);
    empty inputs are dropped. Other dtypes are not supported.
    """
    ins = [ctx.input(node, i) for i in range(len(node.inputs))]
    if not ins:
        raise CompileError(f"{node.label}: no inputs")
    rank = len(ins[0].shape)
    if rank == 0:
        raise CompileError(f"{node.label}: cannot concatenate scalars")
    axis = node.attr("axis", 1 if ctx.opset < 4 else None)
    if axis is None:
        raise CompileError(f"{node.label}: attribute axis is required")
    axis = _norm_axis(node, axis, rank)
    for v in ins:
        if len(v.shape) != rank or any(v.shape[i] != ins[0].shape[i] for i in range(rank) if i != axis):
            raise CompileError(f"{node.label}: input '{v.name}' {v.shape} does not match "
                               f"{ins[0].shape} outside axis {axis}")
    shape = list(ins[0].shape)
    shape[axis] = sum(v.shape[axis] for v in ins)
    live = [v for v in ins if _prod(v.shape) > 0]  # empty inputs contribute nothing
    y = ctx.output(node)
    if len(live) == 1:
        ctx.copy_to(live[0].name, y, shape, node.name)
        return
    ctx.define(y, ins[0].dtype, shape)
    ctx.emit("concat", [v.name for v in live], [y], node.name, ints=[axis])


def lower_softmax(ctx, node):
    """Softmax (every opset): float32, axis, with opset < 13's semantics (over all dims from axis on)
    and opset >= 13's (over that one axis). Other dtypes are not supported.
    """
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if rank == 0:
        raise CompileError(f"{node.label}: input is a scalar")
    legacy = ctx.opset < 13
    axis = _norm_axis(node, node.attr("axis", 1 if legacy else -1), rank)
    y = ctx.define(ctx.output(node), x.dtype, x.shape)
    ctx.emit("softmax", [x.name], [y], node.name, ints=[axis, 1 if legacy else 0])


HANDLERS = {
    "Add": lower_binary, "Sub": lower_binary, "Mul": lower_binary, "Div": lower_binary,
    "Gemm": lower_gemm, "MatMul": lower_matmul,
    "Relu": lower_activation, "Sigmoid": lower_activation, "HardSigmoid": lower_activation,
    "HardSwish": lower_activation, "LeakyRelu": lower_activation, "Clip": lower_activation,
    "PRelu": lower_prelu,
    "Conv": lower_conv, "MaxPool": lower_pool, "AveragePool": lower_pool,
    "GlobalAveragePool": lower_global_avgpool, "GlobalMaxPool": lower_global_maxpool,
    "BatchNormalization": lower_batchnorm,
    "Identity": lower_identity, "Dropout": lower_identity, "Flatten": lower_flatten, "Reshape": lower_reshape,
    "Squeeze": lower_squeeze, "Unsqueeze": lower_unsqueeze, "Transpose": lower_transpose,
    "Concat": lower_concat, "Softmax": lower_softmax,
}

# The op families in modules of their own; they use the helpers above, so they are imported here.
from . import lower_data, lower_elementwise, lower_spatial  # noqa: E402

for _family in (lower_elementwise, lower_spatial, lower_data):
    HANDLERS.update(_family.HANDLERS)

SUPPORTED_OPS = frozenset(HANDLERS)


def lower(imp: Imported) -> Graph:
    ctx = Ctx(imp)
    g = imp.graph
    for node in imp.nodes:
        if node.domain not in DEFAULT_DOMAINS:
            raise unsupported(node)
        check_schema(node, imp.opset, lambda n: g.values[n].dtype if n in g.values else None)
        for i in node.inputs:
            if i:
                g.value(i)
        present = [i for i in node.inputs if i]
        results = None
        if node.op in folding.NONDETERMINISTIC_OPS:
            raise unsupported(node)
        if all(g.values[i].is_const for i in present):
            arrays = [g.values[i].const if i else None for i in node.inputs]
            results = folding.evaluate(node, arrays, imp.opset_imports)
        elif node.op == "Shape":
            results = [folding.shape_of(node, g.values[node.inputs[0]].shape, imp.opset)]
        elif node.op == "Size":
            results = [folding.size_of(g.values[node.inputs[0]].shape)]
        if results is not None:
            for o, r in zip(node.outputs, results):
                if not o:
                    continue
                if r is None:
                    if o in imp.used:
                        raise CompileError(f"{node.label}: output '{o}' was not computed")
                    continue
                g.values[o] = Value(o, r.dtype, tuple(r.shape), r)
            continue
        handler = HANDLERS.get(node.op)
        if handler is None:
            raise unsupported(node)
        handler(ctx, node)
        for o in node.outputs:
            if o and o not in g.values and o in imp.used:
                raise CompileError(f"{node.label}: output '{o}' is not supported")
    return g
