"""Transformer encoders built with onnx.helper, no torch needed: a BERT-shaped one (post-LayerNorm layers, the
input x [1, seq, hidden] being the embeddings' output) for the dynamically quantized transformer's benchmark
(benchmarks/bench_transformer_int8.py) and tests (tests/python/emulator/test_transformer_int8.py), and a
ViT-B/16-shaped image classifier (patch embedding, class token, pre-LayerNorm layers, head) for the speed
table (benchmarks/bench_table.py). Layers of multi-head self-attention and an erf-GELU feed-forward; weights
N(0, 0.02) from a seed."""
from __future__ import annotations

from typing import List

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, FFN = 768, 12, 3072  # BERT-base, ViT-B
PATCH = 16  # ViT-B/16


class _Graph:
    """Nodes and initializers of one model, weights drawn from one seeded generator."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.inits: List[onnx.TensorProto] = []
        self.nodes: List[onnx.NodeProto] = []

    def const(self, name: str, arr) -> str:
        self.inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def weight(self, name: str, shape, scale: float = 0.02, mean: float = 0.0) -> str:
        return self.const(name, (mean + self.rng.standard_normal(shape) * scale).astype(np.float32))

    def node(self, op: str, ins: List[str], name: str, **attrs) -> str:
        self.nodes.append(helper.make_node(op, ins, [name], name=name, **attrs))
        return name

    def linear(self, x: str, p: str, n_in: int, n_out: int) -> str:
        mm = self.node("MatMul", [x, self.weight(f"{p}.w", (n_in, n_out))], f"{p}.mm")
        return self.node("Add", [mm, self.weight(f"{p}.b", n_out)], f"{p}.out")

    def layer_norm(self, x: str, p: str, hidden: int) -> str:
        g, b = self.weight(f"{p}.g", hidden, 0.1, 1.0), self.weight(f"{p}.beta", hidden, 0.1)
        return self.node("LayerNormalization", [x, g, b], f"{p}.out", axis=-1, epsilon=1e-12)

    def model(self, name: str, x: str, x_shape, y: str, y_shape) -> onnx.ModelProto:
        self.nodes.append(helper.make_node("Identity", [y], ["y"], name="output"))
        graph = helper.make_graph(self.nodes, name, [helper.make_tensor_value_info(x, TensorProto.FLOAT, x_shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _layers(g: _Graph, x: str, layers: int, seq: int, hidden: int, heads: int, ffn: int, pre_norm: bool) -> str:
    """`layers` encoder layers on x [1, seq, hidden]: post-LayerNorm (BERT) or pre-LayerNorm (ViT)."""
    dh = hidden // heads
    heads_shape = g.const("heads_shape", np.array([1, seq, heads, dh], np.int64))
    flat_shape = g.const("flat_shape", np.array([1, seq, hidden], np.int64))
    inv_sqrt = g.const("inv_sqrt_dh", np.array(1 / np.sqrt(dh), np.float32))
    half, one = g.const("half", np.array(0.5, np.float32)), g.const("one", np.array(1.0, np.float32))
    sqrt2 = g.const("sqrt2", np.array(np.sqrt(2.0), np.float32))
    for i in range(layers):
        p = f"l{i}"
        a = g.layer_norm(x, f"{p}.ln1", hidden) if pre_norm else x
        q, k, v = (g.node("Reshape", [g.linear(a, f"{p}.{t}", hidden, hidden), heads_shape], f"{p}.{t}.heads")
                   for t in "qkv")
        q = g.node("Transpose", [q], f"{p}.q.t", perm=[0, 2, 1, 3])
        k = g.node("Transpose", [k], f"{p}.k.t", perm=[0, 2, 3, 1])
        v = g.node("Transpose", [v], f"{p}.v.t", perm=[0, 2, 1, 3])
        scores = g.node("Mul", [g.node("MatMul", [q, k], f"{p}.qk"), inv_sqrt], f"{p}.scores")
        probs = g.node("Softmax", [scores], f"{p}.probs", axis=-1)
        ctx = g.node("Transpose", [g.node("MatMul", [probs, v], f"{p}.pv")], f"{p}.ctx.t", perm=[0, 2, 1, 3])
        ctx = g.node("Reshape", [ctx, flat_shape], f"{p}.ctx")
        x = g.node("Add", [g.linear(ctx, f"{p}.o", hidden, hidden), x], f"{p}.res1")
        if not pre_norm:
            x = g.layer_norm(x, f"{p}.ln1", hidden)
        h = g.linear(g.layer_norm(x, f"{p}.ln2", hidden) if pre_norm else x, f"{p}.ff1", hidden, ffn)
        erf = g.node("Erf", [g.node("Div", [h, sqrt2], f"{p}.gelu.div")], f"{p}.gelu.erf")
        gelu = g.node("Mul", [g.node("Mul", [h, g.node("Add", [erf, one], f"{p}.gelu.add")], f"{p}.gelu.mul"), half],
                      f"{p}.gelu")
        x = g.node("Add", [g.linear(gelu, f"{p}.ff2", ffn, hidden), x], f"{p}.res2")
        if not pre_norm:
            x = g.layer_norm(x, f"{p}.ln2", hidden)
    return x


def encoder(layers: int, seq: int, hidden: int = HIDDEN, heads: int = HEADS, ffn: int = FFN,
            seed: int = 0) -> onnx.ModelProto:
    """A post-LayerNorm BERT encoder of `layers` layers on input x [1, seq, hidden], weights N(0, 0.02)."""
    g = _Graph(seed)
    y = _layers(g, "x", layers, seq, hidden, heads, ffn, pre_norm=False)
    return g.model("encoder", "x", [1, seq, hidden], y, [1, seq, hidden])


def vit(layers: int = 12, image: int = 224, hidden: int = HIDDEN, heads: int = HEADS, ffn: int = FFN,
        classes: int = 1000, seed: int = 0) -> onnx.ModelProto:
    """A ViT-B/16-shaped classifier on x [1, 3, image, image]: a 16x16 stride-16 patch embedding, a class
    token and position embeddings, `layers` pre-LayerNorm layers, a final LayerNorm and a linear head on
    the class token; logits [1, classes]."""
    g = _Graph(seed)
    tokens = (image // PATCH) ** 2
    emb = g.node("Conv", ["x", g.weight("patch.w", (hidden, 3, PATCH, PATCH)), g.weight("patch.b", hidden)],
                 "patch", kernel_shape=[PATCH, PATCH], strides=[PATCH, PATCH])
    emb = g.node("Reshape", [emb, g.const("patch_shape", np.array([1, hidden, tokens], np.int64))], "patch.flat")
    emb = g.node("Transpose", [emb], "patch.t", perm=[0, 2, 1])
    x = g.node("Concat", [g.weight("cls", (1, 1, hidden)), emb], "tokens", axis=1)
    x = g.node("Add", [x, g.weight("pos", (1, tokens + 1, hidden))], "embed")
    x = g.layer_norm(_layers(g, x, layers, tokens + 1, hidden, heads, ffn, pre_norm=True), "final_ln", hidden)
    cls = g.node("Gather", [x, g.const("first", np.array(0, np.int64))], "cls_out", axis=1)
    logits = g.node("Gemm", [cls, g.weight("head.w", (classes, hidden)), g.weight("head.b", classes)], "head",
                    transB=1)
    return g.model("vit", "x", [1, 3, image, image], logits, [1, classes])
