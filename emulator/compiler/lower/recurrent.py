"""Recurrent layers: ONNX RNN, GRU and LSTM, each one runtime `rnn` node (as the CNN + bidirectional LSTM
+ CTC heads of text recognizers use them)."""
from __future__ import annotations

import numpy as np

from ..errors import CompileError
from ..op_params import ACTIVATIONS, Rnn, RnnCell, RnnDirection
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
    0..seq_length in a constant sequence_lens are a compile error; computed ones are clamped into that range
    at run time (onnxruntime fails).

    The X W^T of every step is one GEMM, H R^T one GEMM per step; the arithmetic per element does not depend
    on threads or batch.
    """
    cell, gates, defaults = _CELLS[node.op]
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
    consts = {}
    for k, what in ((1, "W"), (2, "R"), (3, "B"), (7, "P")):
        if k == 7 and cell != RnnCell.LSTM:
            continue
        arr = ctx.const_input(node, k, what)
        if arr is not None and arr.dtype != F32:
            raise unsupported(node, f"dtype {arr.dtype} of {what} (float32 only)")
        consts[what] = arr
    w, r = consts["W"], consts["R"]
    if w is None or r is None:
        raise CompileError(f"{node.label}: inputs W and R are required")
    if r.ndim != 3 or r.shape[0] != dirs or r.shape[1] != gates * r.shape[2]:
        raise CompileError(f"{node.label}: R {r.shape} should be [{dirs}, {gates}*hidden_size, hidden_size]")
    h = int(r.shape[2])
    hidden = node.attr("hidden_size")
    if hidden is not None and int(hidden) != h:
        raise CompileError(f"{node.label}: hidden_size {int(hidden)} differs from R's {r.shape}")
    if w.shape != (dirs, gates * h, i):
        raise CompileError(f"{node.label}: W {w.shape} should be {(dirs, gates * h, i)}")
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
    if np.any(act_params != 0):
        inputs.append(ctx.const(act_params, f"{node.name}_activation_params"))
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
                 clip=float(clip) if clip is not None else 0.0)
    ctx.emit("rnn", inputs, outputs, node.name, params=params)


HANDLERS: dict = {"RNN": lower_recurrent, "GRU": lower_recurrent, "LSTM": lower_recurrent}
