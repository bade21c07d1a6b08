"""A BERT-shaped float encoder built with onnx.helper, for the dynamically quantized transformer's benchmark
(benchmarks/bench_transformer_int8.py) and tests (tests/python/emulator/test_transformer_int8.py): no torch
needed. Post-LayerNorm layers of multi-head self-attention and an erf-GELU feed-forward, MatMul weights
N(0, 0.02) from a seed; the input x [1, seq, hidden] is the embeddings' output."""
from __future__ import annotations

from typing import List

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, FFN = 768, 12, 3072  # BERT-base


def encoder(layers: int, seq: int, hidden: int = HIDDEN, heads: int = HEADS, ffn: int = FFN,
            seed: int = 0) -> onnx.ModelProto:
    """A post-LayerNorm BERT encoder of `layers` layers on input x [1, seq, hidden], weights N(0, 0.02)."""
    rng = np.random.default_rng(seed)
    inits: List[onnx.TensorProto] = []
    nodes: List[onnx.NodeProto] = []
    dh = hidden // heads

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, name, **attrs):
        nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def linear(x, p, n_in, n_out):
        w = const(f"{p}.w", (rng.standard_normal((n_in, n_out)) * 0.02).astype(np.float32))
        b = const(f"{p}.b", (rng.standard_normal(n_out) * 0.02).astype(np.float32))
        return node("Add", [node("MatMul", [x, w], f"{p}.mm"), b], f"{p}.out")

    def layer_norm(x, p):
        g = const(f"{p}.g", (1 + rng.standard_normal(hidden) * 0.1).astype(np.float32))
        b = const(f"{p}.beta", (rng.standard_normal(hidden) * 0.1).astype(np.float32))
        return node("LayerNormalization", [x, g, b], f"{p}.out", axis=-1, epsilon=1e-12)

    heads_shape = const("heads_shape", np.array([1, seq, heads, dh], np.int64))
    flat_shape = const("flat_shape", np.array([1, seq, hidden], np.int64))
    inv_sqrt = const("inv_sqrt_dh", np.array(1 / np.sqrt(dh), np.float32))
    half, one = const("half", np.array(0.5, np.float32)), const("one", np.array(1.0, np.float32))
    sqrt2 = const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    x = "x"
    for i in range(layers):
        p = f"l{i}"
        q, k, v = (node("Reshape", [linear(x, f"{p}.{t}", hidden, hidden), heads_shape], f"{p}.{t}.heads")
                   for t in "qkv")
        q = node("Transpose", [q], f"{p}.q.t", perm=[0, 2, 1, 3])
        k = node("Transpose", [k], f"{p}.k.t", perm=[0, 2, 3, 1])
        v = node("Transpose", [v], f"{p}.v.t", perm=[0, 2, 1, 3])
        scores = node("Mul", [node("MatMul", [q, k], f"{p}.qk"), inv_sqrt], f"{p}.scores")
        probs = node("Softmax", [scores], f"{p}.probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"{p}.pv")], f"{p}.ctx.t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, flat_shape], f"{p}.ctx")
        x = layer_norm(node("Add", [linear(ctx, f"{p}.o", hidden, hidden), x], f"{p}.res1"), f"{p}.ln1")
        h = linear(x, f"{p}.ff1", hidden, ffn)
        erf = node("Erf", [node("Div", [h, sqrt2], f"{p}.gelu.div")], f"{p}.gelu.erf")
        gelu = node("Mul", [node("Mul", [h, node("Add", [erf, one], f"{p}.gelu.add")], f"{p}.gelu.mul"), half],
                    f"{p}.gelu")
        x = layer_norm(node("Add", [linear(gelu, f"{p}.ff2", ffn, hidden), x], f"{p}.res2"), f"{p}.ln2")
    nodes.append(helper.make_node("Identity", [x], ["y"], name="output"))
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, seq, hidden]) for n in "xy"]
    graph = helper.make_graph(nodes, "encoder", io[:1], io[1:], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
