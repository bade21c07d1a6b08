"""Ops lowered by rewriting them into other ONNX ops (the lowering loop queues the nodes each rewrite returns in
place of the node; a rewrite that returns None leaves the node to its handler): QuantizeLinear whose scale or zero
point is computed at run time (DynamicQuantizeLinear's function body) as its arithmetic in float32 ops; Compress of
a constant condition as a Gather of the indices it keeps; MelWeightMatrix of
constant inputs as the table it makes; DFT and STFT as
products with constant cosine and sine matrices (a GEMM per transform: the lengths are static and short in the
models that use them, where an FFT's fewer operations would not pay for its shuffles)."""

from __future__ import annotations

import numpy as np
from onnx import helper

from ..errors import CompileError
from ..importer import OnnxNode
from .context import normalize_axis


def _node(ctx, node, op, inputs, outputs=None, **attrs) -> OnnxNode:
    outputs = outputs or [ctx.g.names.new(f"{node.name}/{op.lower()}")]
    return OnnxNode(helper.make_node(op, inputs, outputs, name=f"{node.name}/{op}", **attrs), 0)


def compress(ctx, node: OnnxNode) -> list:
    """Compress (opset 9 on) of a constant condition: the slices of x along `axis` (of x flattened without one)
    where the condition is true, as a Gather of their indices; a condition shorter than the axis keeps none past
    its end. A condition computed at run time makes the output's length data, which a fixed graph cannot have."""
    x = ctx.input(node, 0)
    cond = ctx.const_input(node, 1, "condition")
    if cond is None:
        raise CompileError(f"{node.label}: condition is required")
    cond = np.asarray(cond).reshape(-1).astype(bool)
    axis = node.attr("axis")
    nodes = []
    source = x.name
    if axis is None:
        shape = ctx.g.add_const(np.array([-1], np.int64), f"{node.name}/flat")
        nodes.append(_node(ctx, node, "Reshape", [x.name, shape]))
        source, axis, dim = nodes[-1].outputs[0], 0, int(np.prod(x.shape))
    else:
        axis = normalize_axis(node, axis, len(x.shape))
        dim = x.shape[axis]
    if cond.size > dim:
        raise CompileError(f"{node.label}: the condition has {cond.size} elements, more than the {dim} along the axis")
    keep = np.nonzero(cond)[0].astype(np.int64)
    indices = ctx.g.add_const(keep, f"{node.name}/kept")
    nodes.append(_node(ctx, node, "Gather", [source, indices], [node.outputs[0]], axis=axis))
    return nodes


def _int_input(ctx, node, i, what, default=None):
    v = ctx.const_input(node, i, what) if i < len(node.inputs) and node.inputs[i] else None
    return default if v is None else int(np.asarray(v).reshape(-1)[0])


def _dft_matrices(n: int, length: int, bins: int, inverse: bool, complex_input: bool) -> tuple:
    """(Wr, Wi): [x_re | x_im] (n values each, or x_re alone) times Wr gives the bins' real parts, times Wi their
    imaginary parts, of the length-`length` DFT (inverse: e^{+i...} / length) of x zero-padded or cut to it.
    Angles are taken modulo the length from integer products, so the quarter turns are exact."""
    k = np.arange(bins)[None, :]
    m = (np.arange(n)[:, None] * k) % length
    angle = 2 * np.pi * m / length
    cos, sin = np.cos(angle), np.sin(angle)
    quarter = (4 * m) % length == 0
    turns = (4 * m) // length
    cos = np.where(quarter, np.choose(turns % 4, [1.0, 0.0, -1.0, 0.0]), cos)
    sin = np.where(quarter, np.choose(turns % 4, [0.0, 1.0, 0.0, -1.0]), sin)
    sign, scale = (1.0, 1.0 / length) if inverse else (-1.0, 1.0)
    # (a + ib)(cos + i sign sin) = (a cos - sign b sin) + i (sign a sin + b cos)
    wr, wi = [cos], [sign * sin]
    if complex_input:
        wr.append(-sign * sin)
        wi.append(cos)
    return (np.concatenate(wr) * scale).astype(np.float32), (np.concatenate(wi) * scale).astype(np.float32)


def _inverse_real_matrix(n: int, length: int, complex_input: bool):
    """W: [x_re | x_im] (n bins each) times W gives the real signal of `length` whose spectrum's first n bins they
    are (the others its conjugate mirror): each bin but 0 and length/2 counted twice."""
    k = np.arange(length)[None, :]
    m = (np.arange(n)[:, None] * k) % length
    angle = 2 * np.pi * m / length
    twice = np.where((np.arange(n) == 0) | (2 * np.arange(n) == length), 1.0, 2.0)[:, None]
    rows = [twice * np.cos(angle)] + ([-twice * np.sin(angle)] if complex_input else [])
    return (np.concatenate(rows) / length).astype(np.float32)


class _Builder:
    def __init__(self, ctx, node):
        self.ctx, self.node, self.nodes = ctx, node, []

    def add(self, op, inputs, outputs=None, **attrs) -> str:
        self.nodes.append(_node(self.ctx, self.node, op, inputs, outputs, **attrs))
        return self.nodes[-1].outputs[0]

    def const(self, array, hint) -> str:
        return self.ctx.g.add_const(np.asarray(array), f"{self.node.name}/{hint}")

    def part(self, x: str, i: int) -> str:
        """x's last axis' element i, without that axis."""
        return self.add("Gather", [x, self.const(np.int64(i), "part")], axis=-1)

    def spectrum(self, parts: list, n: int, length: int, bins: int, inverse: bool, out: str, perm=None) -> None:
        """`out` [..., bins, 2]: the DFT along the last axis of the real (and imaginary) parts given; `perm`
        transposes each part back first."""
        wr, wi = _dft_matrices(n, length, bins, inverse, len(parts) == 2)
        z = parts[0] if len(parts) == 1 else self.add("Concat", parts, axis=-1)
        halves = [self.add("MatMul", [z, self.const(w, name)]) for w, name in ((wr, "dft_real"), (wi, "dft_imag"))]
        if perm is not None:
            halves = [self.add("Transpose", [h], perm=perm) for h in halves]
        axes = self.const(np.array([-1], np.int64), "last")
        self.add("Concat", [self.add("Unsqueeze", [h, axes]) for h in halves], [out], axis=-1)

    def real_signal(self, parts: list, n: int, length: int, out: str, perm) -> None:
        """`out` [..., length, 1]: the real signal whose one-sided spectrum's n bins the parts hold, along the
        last axis, transposed back by `perm`."""
        z = parts[0] if len(parts) == 1 else self.add("Concat", parts, axis=-1)
        w = _inverse_real_matrix(n, length, len(parts) == 2)
        y = self.add("Transpose", [self.add("MatMul", [z, self.const(w, "idft_real")])], perm=perm)
        self.add("Unsqueeze", [y, self.const(np.array([-1], np.int64), "last")], [out])


def dft(ctx, node: OnnxNode) -> list:
    """DFT (opset 17 on) of a real ([..., 1]) or complex ([..., 2]) input along `axis` (an attribute, an input
    from opset 20, constant), dft_length constant (the input zero-padded or cut to it), forward or inverse, the
    one-sided forward transform's length // 2 + 1 bins; the one-sided inverse, the real signal ([..., 1]) of
    dft_length (default 2 * (bins - 1)) whose spectrum's first bins the input holds."""
    x = ctx.input(node, 0)
    rank = len(x.shape)
    if rank < 2 or x.shape[-1] not in (1, 2):
        raise CompileError(f"{node.label}: input '{x.name}' {tuple(x.shape)} does not end in a real (1) or "
                           f"complex (2) axis")
    inverse, onesided = bool(node.attr("inverse", 0)), bool(node.attr("onesided", 0))
    axis = _int_input(ctx, node, 2, "axis", -2) if ctx.opset >= 20 else node.attr("axis", 1)
    axis = normalize_axis(node, axis, rank)
    if axis == rank - 1:
        raise CompileError(f"{node.label}: axis {axis} is the real/imaginary axis")
    n = x.shape[axis]
    length = _int_input(ctx, node, 1, "dft_length", 2 * (n - 1) if inverse and onesided else n)
    if length < 1:
        raise CompileError(f"{node.label}: dft_length {length} is not positive")
    bins = length // 2 + 1 if onesided else length
    b = _Builder(ctx, node)
    parts = [b.part(x.name, i) for i in range(x.shape[-1])]
    perm = [d for d in range(rank - 1) if d != axis] + [axis]
    back = [perm.index(d) for d in range(rank - 1)]
    parts = [b.add("Transpose", [p], perm=perm) for p in parts]
    keep = min(n, length // 2 + 1 if inverse and onesided else length)  # the input bins the output reads
    if n > keep:
        starts, ends, last = (b.const(np.array([v], np.int64), hint) for v, hint in ((0, "start"), (keep, "end"),
                                                                                      (-1, "axis")))
        parts = [b.add("Slice", [p, starts, ends, last]) for p in parts]
        n = keep
    if inverse and onesided:
        b.real_signal(parts, n, length, node.outputs[0], back)
    else:
        b.spectrum(parts, n, length, bins, inverse, node.outputs[0], back)
    return b.nodes


def stft(ctx, node: OnnxNode) -> list:
    """STFT (opset 17) of a real ([batch, length, 1]) or complex ([batch, length, 2]) signal: frames of
    frame_length (constant, or the window's length) every frame_step (constant) samples, times the window (a
    constant or a runtime input), each frame's DFT ([batch, frames, bins, 2]; length // 2 + 1 bins one-sided, the
    default)."""
    x = ctx.input(node, 0)
    if len(x.shape) != 3 or x.shape[-1] not in (1, 2):
        raise CompileError(f"{node.label}: signal '{x.name}' {tuple(x.shape)} is not [batch, length, 1 or 2]")
    step = _int_input(ctx, node, 1, "frame_step")
    window = ctx.input_opt(node, 2)
    length = _int_input(ctx, node, 3, "frame_length", window.shape[0] if window is not None else None)
    if step is None or step < 1 or length is None or not 1 <= length <= x.shape[1]:
        raise CompileError(f"{node.label}: frame_step {step} and frame_length {length} do not frame a signal of "
                           f"{x.shape[1]} samples")
    if window is not None and tuple(window.shape) != (length,):
        raise CompileError(f"{node.label}: window '{window.name}' {tuple(window.shape)} is not ({length},)")
    onesided = bool(node.attr("onesided", 1))
    frames = 1 + (x.shape[1] - length) // step
    b = _Builder(ctx, node)
    index = b.const(np.arange(frames, dtype=np.int64)[:, None] * step + np.arange(length, dtype=np.int64), "frames")
    parts = [b.add("Gather", [b.part(x.name, i), index], axis=1) for i in range(x.shape[-1])]
    if window is not None:
        parts = [b.add("Mul", [p, window.name]) for p in parts]
    b.spectrum(parts, length, length, length // 2 + 1 if onesided else length, False, node.outputs[0])
    return b.nodes


def table(ctx, node: OnnxNode) -> list:
    """MelWeightMatrix: a table its inputs (sizes, rates, frequencies) define, computed when the model compiles by
    onnx's reference (as every node of constant inputs is): its inputs must be constants."""
    for i, name in enumerate(node.inputs):
        if name:
            ctx.const_input(node, i, f"input {i}")
    raise CompileError(f"{node.label}: not computed at compile time")  # unreachable: the driver folds it first


def quantize_at_run_time(ctx, node: OnnxNode):
    """QuantizeLinear whose scale or zero point a tensor computes (DynamicQuantizeLinear's body; the constant case is
    lower_quantize's): y = saturate(round_half_even(x / scale) + zero_point), onnxruntime's arithmetic, as Div, Round,
    Add, Clip and Cast; per tensor (one scale value) to int8 or uint8, float32 x. None when both are constants, and
    for what lower_quantize refuses (it says why)."""
    scale, zero = ctx.input(node, 1), ctx.input_opt(node, 2)
    if scale.is_const and (zero is None or zero.is_const):
        return None
    x = ctx.input(node, 0)
    if zero is not None:
        ydtype = zero.dtype
    elif node.attr("output_dtype"):
        ydtype = np.dtype(helper.tensor_dtype_to_np_dtype(int(node.attr("output_dtype"))))
    else:
        ydtype = np.dtype(np.uint8)
    per_tensor = int(np.prod(scale.shape)) == 1 and (zero is None or int(np.prod(zero.shape)) == 1)
    if (ydtype not in (np.dtype(np.int8), np.dtype(np.uint8)) or x.dtype != np.float32 or scale.dtype != np.float32
            or not per_tensor or int(node.attr("block_size", 0))):
        return None  # lower_quantize names what it does not support
    info = np.iinfo(ydtype)
    nodes = [_node(ctx, node, "Div", [x.name, scale.name])]
    nodes.append(_node(ctx, node, "Round", [nodes[-1].outputs[0]]))
    if zero is not None:
        nodes.append(_node(ctx, node, "Cast", [zero.name], to=1))
        nodes.append(_node(ctx, node, "Add", [nodes[-2].outputs[0], nodes[-1].outputs[0]]))
    lo = ctx.g.add_const(np.array(info.min, np.float32), f"{node.name}/qmin")
    hi = ctx.g.add_const(np.array(info.max, np.float32), f"{node.name}/qmax")
    nodes.append(_node(ctx, node, "Clip", [nodes[-1].outputs[0], lo, hi]))
    to = helper.np_dtype_to_tensor_dtype(ydtype)
    nodes.append(_node(ctx, node, "Cast", [nodes[-1].outputs[0]], [node.outputs[0]], to=to))
    return nodes


REWRITES = {"QuantizeLinear": quantize_at_run_time, "Compress": compress, "DFT": dft, "STFT": stft,
            "MelWeightMatrix": table}
