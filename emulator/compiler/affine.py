"""Constant bias and scale folding: conv followed by add/sub/mul of a per-channel constant becomes
one conv (b' = b + c, b' = b - c, or W' = W * s and b' = b * s); matmul or gemm followed by add of a
constant that broadcasts to its output becomes a gemm with C (the exporters' Linear = MatMul + Add)."""

from __future__ import annotations

import dataclasses

import numpy as np

from .ir import Graph
from .op_params import Gemm

F32 = np.dtype(np.float32)


def _per_channel(c: np.ndarray, out_shape: tuple):
    """c as a vector of out_shape[1] values if it varies only along axis 1 of out_shape, else None."""
    rank = len(out_shape)
    if c.ndim > rank or c.dtype != F32:
        return None
    shape = (1,) * (rank - c.ndim) + tuple(c.shape)
    if any(shape[i] != 1 for i in range(rank) if i != 1) or shape[1] not in (1, out_shape[1]):
        return None
    return np.broadcast_to(c.reshape(shape[1]), (out_shape[1],)).astype(F32)


def _keeps_channels(g: Graph, copy) -> bool:
    a, b = g.value(copy.inputs[0]).shape, g.value(copy.outputs[0]).shape
    return len(a) >= 2 and len(b) >= 2 and tuple(a[:2]) == tuple(b[:2])


def scale_out_channels(conv, w: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """The weight of a conv or convtranspose node with output channel m scaled by vec[m]: W[M, C/g, ...]
    for conv, W[C, M/g, ...] (channel m of group m // (M/g) at dim 1) for convtranspose."""
    if conv.op == "conv":
        return w * vec.reshape(-1, *([1] * (w.ndim - 1)))
    groups, c, mg = conv.params.group, w.shape[0], w.shape[1]
    grouped = w.reshape(groups, c // groups, mg, *w.shape[2:])
    return (grouped * vec.reshape(groups, 1, mg, *([1] * (w.ndim - 2)))).reshape(w.shape)


def _fold_into_conv(g: Graph, conv, node, const: np.ndarray, out_shape) -> bool:
    vec = _per_channel(const, out_shape)
    if vec is None:
        return False
    w = g.value(conv.inputs[1]).const
    has_b = len(conv.inputs) > 2 and conv.inputs[2] is not None
    b = g.value(conv.inputs[2]).const if has_b else np.zeros(out_shape[1], F32)
    if node.op == "add":
        new_w, new_b = None, b + vec
    elif node.op == "sub":
        new_w, new_b = None, b - vec
    else:
        new_w, new_b = scale_out_channels(conv, w, vec), b * vec
    if new_w is not None:
        conv.inputs[1] = g.add_const(new_w.astype(F32), f"{conv.inputs[1]}_scaled")
    bias = g.add_const(new_b.astype(F32), f"{conv.name or conv.outputs[0]}_bias_folded")
    conv.inputs = conv.inputs[:2] + [bias]
    return True


def _fold_into_gemm(g: Graph, mm, node, const: np.ndarray) -> bool:
    if node.op != "add":
        return False
    out_shape = g.value(mm.outputs[0]).shape
    if len(out_shape) != 2 or const.dtype != F32:
        return False
    try:
        if tuple(np.broadcast_shapes(const.shape, out_shape)) != tuple(out_shape):
            return False
    except ValueError:
        return False
    if mm.op == "matmul":
        a, b = (g.value(i).shape for i in mm.inputs)
        if len(a) != 2 or len(b) != 2:
            return False
        mm.op, mm.params = "gemm", Gemm(trans_a=0, trans_b=0, alpha=1.0, beta=1.0)
        mm.inputs = mm.inputs[:2] + [g.add_const(const, f"{mm.name or mm.outputs[0]}_bias")]
        return True
    # gemm: C' = beta * C + c, beta' = 1
    beta = mm.params.beta
    if len(mm.inputs) > 2 and mm.inputs[2] is not None:
        c_old = g.value(mm.inputs[2])
        if not c_old.is_const:
            return False
        new_c = (np.float32(beta) * c_old.const + const).astype(F32)
    else:
        new_c = const
    mm.params = dataclasses.replace(mm.params, beta=1.0)
    mm.inputs = mm.inputs[:2] + [g.add_const(new_c, f"{mm.name or mm.outputs[0]}_bias")]
    return True


def fold_bias_and_scale(g: Graph) -> None:
    outputs = set(g.outputs)
    producers, consumers = g.producers(), g.consumers()
    removed = set()
    for node in g.nodes:
        if node.op not in ("add", "sub", "mul") or node.act != 0:
            continue
        x, c = node.inputs
        if node.op != "sub" and g.is_const(x) and not g.is_const(c):
            x, c = c, x
        if not g.is_const(c) or g.is_const(x):
            continue
        if x in outputs or len(consumers.get(x, [])) != 1:
            continue
        if g.value(node.outputs[0]).shape != g.value(x).shape:
            continue
        # Walk back through reshapes that keep dims 0 and 1 (a 1-D conv lowered to 2-D).
        chain, p = [], producers.get(x)
        while p is not None and p.op == "copy" and _keeps_channels(g, p):
            nxt = p.inputs[0]
            if nxt in outputs or len(consumers.get(nxt, [])) != 1:
                p = None
                break
            chain.append(p)
            p = producers.get(nxt)
        if p is None or p.act != 0 or (chain and p.op not in ("conv", "convtranspose")):
            continue
        const = g.value(c).const
        if p.op in ("conv", "convtranspose"):
            done = _fold_into_conv(g, p, node, const, g.value(x).shape)
        elif p.op in ("matmul", "gemm"):
            done = _fold_into_gemm(g, p, node, const)
        else:
            done = False
        if not done:
            continue
        last = chain[0] if chain else p
        last.outputs = [node.outputs[0]]
        producers[node.outputs[0]] = last
        consumers.pop(x, None)
        removed.add(id(node))
    g.nodes = [n for n in g.nodes if id(n) not in removed]
