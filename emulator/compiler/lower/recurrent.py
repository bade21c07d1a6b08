"""Recurrent layers: ONNX RNN, GRU and LSTM, each one runtime `rnn` node (as the CNN + bidirectional LSTM
+ CTC heads of text recognizers use them)."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import ACTIVATIONS, Rnn, RnnCell, RnnDirection
from ..qdq import MS
from .context import F32, float_input, unsupported

# ONNX activation name (lower case) -> (runtime activation, takes alpha, takes beta, default alpha, beta), as
# onnxruntime reads activation_alpha and activation_beta: each activation that takes a value consumes the
# next one of the list, or gets its default.
_ACTS = {
    "relu": ("relu", False, False, 0.0, 0.0),
    "tanh": ("tanh", False, False, 0.0, 0.0),
    "sigmoid": ("sigmoid", False, False, 0.0, 0.0),
    "leakyrelu": ("leakyrelu", True, False, 0.01, 0.0),
    "hardsigmoid": ("hardsigmoid", True, True, 0.2, 0.5),
    "elu": ("elu", True, False, 1.0, 0.0),
    "softsign": ("softsign", False, False, 0.0, 0.0),
    "softplus": ("softplus", False, False, 0.0, 0.0),
}
# Those ONNX allows that the emulator's activation functions do not compute.
_REFUSED_ACTS = {"affine": "Affine", "thresholdedrelu": "ThresholdedRelu", "scaledtanh": "ScaledTanh"}

# ONNX op -> (cell, gate count, default activations of one direction).
_CELLS = {
    "RNN": (RnnCell.RNN, 1, ("Tanh",)),
    "GRU": (RnnCell.GRU, 3, ("Sigmoid", "Tanh")),
    "LSTM": (RnnCell.LSTM, 4, ("Sigmoid", "Tanh", "Tanh")),
}
_DIRECTIONS = {"forward": RnnDirection.FORWARD, "reverse": RnnDirection.REVERSE,
               "bidirectional": RnnDirection.BIDIRECTIONAL}


def _text(v) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _activations(node, count, dirs, defaults):
    """([code] * 6, A[dirs, 3, 2]) for the node's activations, activation_alpha and activation_beta."""
    names = [_text(a) for a in node.attr("activations", [])] or list(defaults) * dirs
    if len(names) == count * dirs:
        pass
    elif node.op == "RNN" and dirs == 1 and len(names) == 2:  # the old spec's default listed two
        names = names[:1]
    else:
        raise CompileError(f"{node.label}: {len(names)} activations given, {count * dirs} expected "
                           f"({count} per direction)")
    alphas = [float(a) for a in node.attr("activation_alpha", [])]
    betas = [float(b) for b in node.attr("activation_beta", [])]
    codes, params = [0] * 6, np.zeros((dirs, 3, 2), np.float32)
    refused = sorted({_REFUSED_ACTS[n.lower()] for n in names if n.lower() in _REFUSED_ACTS})
    if refused:
        raise unsupported(node, f"activation {', '.join(refused)} (supported: Relu, Tanh, Sigmoid, LeakyRelu, "
                                f"HardSigmoid, Elu, Softsign, Softplus)")
    for i, name in enumerate(names):
        if name.lower() not in _ACTS:
            raise unsupported(node, f"activation '{name}'")
        act, takes_a, takes_b, da, db = _ACTS[name.lower()]
        a = (alphas.pop(0) if alphas else da) if takes_a else 0.0
        b = (betas.pop(0) if betas else db) if takes_b else 0.0
        d, k = divmod(i, count)
        codes[d * 3 + k] = ACTIVATIONS[act]
        params[d, k] = (a, b)
    return codes, params


def _weight_quant(ctx, node, k, what, dtype, dirs, cols):
    """DynamicQuantizeLSTM's scale (input k) and zero point (k + 1) of W or R: float32 scales [dirs, cols] and
    one zero point per direction (onnxruntime reads the first: the others must equal it)."""
    scale = ctx.const_input(node, k, f"{what}_scale")
    zp = ctx.const_input(node, k + 1, f"{what}_zero_point")
    if scale is None or zp is None:
        raise CompileError(f"{node.label}: {what}_scale and {what}_zero_point are required")
    for name, arr in ((f"{what}_scale", scale), (f"{what}_zero_point", zp)):
        if arr.shape not in ((dirs,), (dirs, cols)):
            raise CompileError(f"{node.label}: {name} {arr.shape} should be {(dirs,)} or {(dirs, cols)}")
    if scale.dtype != F32 or zp.dtype != dtype:
        raise unsupported(node, f"{what}_scale {scale.dtype} / {what}_zero_point {zp.dtype} (float32 and {dtype})")
    zp2 = zp.reshape(dirs, -1).astype(np.int64)
    if np.any(zp2 != zp2[:, :1]):
        raise unsupported(node, f"{what}_zero_point varying along a direction (one value per direction)")
    scales = np.broadcast_to(scale.reshape(dirs, -1), (dirs, cols)).astype(np.float32)
    return scales, [int(z) for z in zp2[:, 0]]


def lower_recurrent(ctx, node):
    """RNN, GRU and LSTM (every opset): float32, with W, R and B (and LSTM's peepholes P) constants; direction
    forward, reverse or bidirectional; layout 0 or 1; initial_h and initial_c (constants or computed);
    sequence_lens (int32, constant or computed: a batch row runs its own length, Y is 0 past it and Y_h,
    Y_c hold its last state, 0 for a length of 0, as onnxruntime); clip; LSTM's input_forget; GRU's
    linear_before_reset; the outputs Y, Y_h, Y_c, any of them. Activations Relu, Tanh, Sigmoid,
    LeakyRelu, HardSigmoid, Elu, Softsign and Softplus with activation_alpha and activation_beta read as
    onnxruntime reads them (each activation that takes a value consumes the next, else its ONNX default);
    Affine, ThresholdedRelu and ScaledTanh are refused. clip bounds the input of every gate's activation,
    not LSTM's cell state before h (as onnxruntime; the ONNX text leaves it open). Lengths outside
    0..seq_length in a constant sequence_lens are a compile error; computed ones fail the run, as
    onnxruntime's does (InvalidArgumentError naming the node, the length, its position and the range).

    The X W^T of every step is one GEMM, H R^T one GEMM per step; the arithmetic per element does not depend
    on threads or batch.
    """
    cell, gates, defaults = _CELLS["LSTM" if node.op == "DynamicQuantizeLSTM" else node.op]
    x = float_input(ctx, node, 0)
    if len(x.shape) != 3:
        raise CompileError(f"{node.label}: X {x.shape} must be 3-D")
    layout = int(node.attr("layout", 0))
    if layout not in (0, 1):
        raise CompileError(f"{node.label}: layout {layout} is not 0 or 1")
    s, n, i = (x.shape[1], x.shape[0], x.shape[2]) if layout else x.shape
    direction = _text(node.attr("direction", "forward"))
    if direction not in _DIRECTIONS:
        raise CompileError(f"{node.label}: direction '{direction}' is not forward, reverse or bidirectional")
    dirs = 2 if direction == "bidirectional" else 1
    quantized = node.op == "DynamicQuantizeLSTM"
    if quantized and layout != 0:
        raise unsupported(node, f"layout {layout}")
    consts = {}
    for k, what in ((1, "W"), (2, "R"), (3, "B"), (7, "P")):
        if k == 7 and cell != RnnCell.LSTM:
            continue
        arr = ctx.const_input(node, k, what)
        if arr is not None and arr.dtype != F32 and not (quantized and k < 3 and arr.dtype in (np.int8, np.uint8)):
            raise unsupported(node, f"dtype {arr.dtype} of {what} (" +
                              ("int8 or uint8" if quantized and k < 3 else "float32") + " only)")
        consts[what] = arr
    w, r = consts["W"], consts["R"]
    if w is None or r is None:
        raise CompileError(f"{node.label}: inputs W and R are required")
    if quantized:  # [D, I, G*H] and [D, H, G*H]
        if r.ndim != 3 or r.shape[0] != dirs or r.shape[2] != gates * r.shape[1]:
            raise CompileError(f"{node.label}: R {r.shape} should be [{dirs}, hidden_size, {gates}*hidden_size]")
        h = int(r.shape[1])
        want_w = (dirs, i, gates * h)
    else:
        if r.ndim != 3 or r.shape[0] != dirs or r.shape[1] != gates * r.shape[2]:
            raise CompileError(f"{node.label}: R {r.shape} should be [{dirs}, {gates}*hidden_size, hidden_size]")
        h = int(r.shape[2])
        want_w = (dirs, gates * h, i)
    hidden = node.attr("hidden_size")
    if hidden is not None and int(hidden) != h:
        raise CompileError(f"{node.label}: hidden_size {int(hidden)} differs from R's {r.shape}")
    if w.shape != want_w:
        raise CompileError(f"{node.label}: W {w.shape} should be {want_w}")
    for what, shape in (("B", (dirs, 2 * gates * h)), ("P", (dirs, 3 * h))):
        if consts.get(what) is not None and consts[what].shape != shape:
            raise CompileError(f"{node.label}: {what} {consts[what].shape} should be {shape}")
    state_shape = (n, dirs, h) if layout else (dirs, n, h)
    inputs = [x.name, node.inputs[1], node.inputs[2], node.inputs[3] if consts["B"] is not None else ""]
    lens = ctx.input_opt(node, 4)
    if lens is not None:
        if lens.dtype != np.int32 or tuple(lens.shape) != (n,):
            raise CompileError(f"{node.label}: sequence_lens {lens.dtype}{list(lens.shape)} should be int32 [{n}]")
        if lens.is_const and (np.any(lens.const < 0) or np.any(lens.const > s)):
            raise CompileError(f"{node.label}: sequence_lens {lens.const.tolist()} outside 0..{s}")
        if lens.is_const and np.all(lens.const == s):
            lens = None  # every row runs every step
    inputs.append(lens.name if lens is not None else "")
    for k, what in ((5, "initial_h"), (6, "initial_c")):
        v = ctx.input_opt(node, k) if (k == 5 or cell == RnnCell.LSTM) else None
        if v is not None and (v.dtype != F32 or tuple(v.shape) != state_shape):
            raise CompileError(f"{node.label}: {what} {v.dtype}{list(v.shape)} should be float32 "
                               f"{list(state_shape)}")
        inputs.append(v.name if v is not None else "")
    inputs.append(node.inputs[7] if consts.get("P") is not None else "")
    clip = node.attr("clip")
    if clip is not None and not float(clip) > 0:
        raise CompileError(f"{node.label}: clip {float(clip)} is not > 0")
    input_forget = int(node.attr("input_forget", 0)) if cell == RnnCell.LSTM else 0
    lbr = int(node.attr("linear_before_reset", 0)) if cell == RnnCell.GRU else 0
    codes, act_params = _activations(node, len(defaults), dirs, defaults)
    inputs.append(ctx.const(act_params, f"{node.name}_activation_params") if np.any(act_params != 0) else "")
    zeros = {"w_zero": (0, 0), "r_zero": (0, 0)}
    if quantized:
        for k, what, wq in ((8, "W", w), (10, "R", r)):
            scale, zp = _weight_quant(ctx, node, k, what, wq.dtype, dirs, gates * h)
            inputs.append(ctx.const(scale, f"{node.name}_{what}_scales"))
            zeros[f"{what.lower()}_zero"] = tuple(zp) + (0,) * (2 - dirs)
    inputs = [i or None for i in inputs]  # None: an absent optional input

    shapes = ((n, s, dirs, h) if layout else (s, dirs, n, h), state_shape, state_shape)
    outputs, mask = [], 0
    for k in range(3 if cell == RnnCell.LSTM else 2):
        o = node.outputs[k] if k < len(node.outputs) else ""
        if o and o in ctx.used:
            outputs.append(ctx.define(o, F32, shapes[k]))
            mask |= 1 << k
    if not mask:
        return
    params = Rnn(cell=cell, direction=_DIRECTIONS[direction], layout=layout, input_forget=int(input_forget != 0),
                 linear_before_reset=int(lbr != 0), outputs=mask, acts=tuple(codes),
                 clip=float(clip) if clip is not None else 0.0, **zeros)
    ctx.emit("rnn", inputs, outputs, node.name, params=params)


def lower_dynamic_quantize_lstm(ctx, node):
    """com.microsoft DynamicQuantizeLSTM (what onnxruntime.quantization.quantize_dynamic makes of an LSTM):
    as LSTM (layout 0), with W [D, input_size, 4*hidden] and R [D, hidden, 4*hidden] int8 or uint8 constants,
    their scales per direction or per column and one zero point per direction (onnxruntime reads only the
    first). Each product is onnxruntime's: X of the steps up to the longest length, and per step H_{t-1} of
    the batch, quantized as DynamicQuantizeLinear does (uint8, the range over the whole matrix), exact int32
    sums, scaled by float32(s_A * s_W[col]). onnxruntime splits the batch by thread when it computes with
    several threads (then each part has its own range): the emulator quantizes the whole batch, as
    onnxruntime on one thread.
    """
    lower_recurrent(ctx, node)


HANDLERS: dict = {"RNN": lower_recurrent, "GRU": lower_recurrent, "LSTM": lower_recurrent,
                  "DynamicQuantizeLSTM": lower_dynamic_quantize_lstm}
DOMAIN_OPS = {MS: frozenset({"DynamicQuantizeLSTM"})}
