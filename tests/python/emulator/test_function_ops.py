"""Ops that ONNX defines by a function body and the compiler expands (lower/functions.py): RMSNormalization,
Attention, RotaryEmbedding, SwiGLU, MeanVarianceNormalization, the losses, against onnxruntime's own kernels
for them on one-node models; a body's unsupported op refused under the op's node; the coverage report counting
such ops as supported."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from accel import compiler
from accel.compiler import coverage

# The emulator's compiler and kernels (a board's toolchain compiles what it supports itself).
pytestmark = pytest.mark.emulator

F = TensorProto.FLOAT


def _model(node, inputs, outputs, opset):
    vis = [helper.make_tensor_value_info(n, t, list(s)) for n, t, s in inputs]
    outs = [helper.make_empty_tensor_value_info(o) for o in outputs]
    m = helper.make_model(helper.make_graph([node], "t", vis, outs),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def _rnd(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _both(dev, m, feeds):
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    want = s.run(None, feeds)
    model = dev.load(m.SerializeToString())
    got = [np.array(o) for o in model.run({t.name: feeds[t.name] for t in model.inputs})]
    return got, want


def _check(dev, m, feeds, rtol=1e-5, atol=1e-5):
    got, want = _both(dev, m, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        diff = np.abs(g.astype(np.float64) - w)
        print(f"max abs error {diff.max():.3g} over {w.size} elements")
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("axis, shape", [(-1, (2, 5, 16)), (1, (2, 5, 6)), (0, (3, 4))])
def test_rms_normalization(dev, axis, shape):
    x = _rnd(shape, 1)
    scale = _rnd(shape[axis % len(shape):], 2)
    node = helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=axis, epsilon=1e-4)
    m = _model(node, [("x", F, shape), ("s", F, scale.shape)], ["y"], 23)
    _check(dev, m, {"x": x, "s": scale})


def test_swiglu_and_mvn(dev):
    x = _rnd((2, 3, 4, 5), 3)
    m = _model(helper.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2, 3]),
               [("x", F, x.shape)], ["y"], 13)
    _check(dev, m, {"x": x})


@pytest.mark.parametrize("causal", [0, 1])
def test_attention_4d(dev, causal):
    q, k, v = _rnd((2, 3, 4, 8), 4), _rnd((2, 3, 6, 8), 5), _rnd((2, 3, 6, 8), 6)
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=causal)
    m = _model(node, [("q", F, q.shape), ("k", F, k.shape), ("v", F, v.shape)], ["y"], 23)
    _check(dev, m, {"q": q, "k": k, "v": v})


def test_attention_3d_heads_with_mask(dev):
    q, k, v = _rnd((2, 4, 16), 7), _rnd((2, 6, 16), 8), _rnd((2, 6, 16), 9)
    mask = _rnd((4, 6), 10)
    node = helper.make_node("Attention", ["q", "k", "v", "mask"], ["y"], q_num_heads=2, kv_num_heads=2)
    m = _model(node, [("q", F, q.shape), ("k", F, k.shape), ("v", F, v.shape), ("mask", F, mask.shape)], ["y"],
               23)
    _check(dev, m, {"q": q, "k": k, "v": v, "mask": mask})


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding(dev, interleaved):
    x = _rnd((2, 3, 4, 8), 11)  # batch, heads, sequence, head size
    cos, sin = _rnd((2, 4, 4), 12), _rnd((2, 4, 4), 13)
    node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], interleaved=interleaved)
    m = _model(node, [("x", F, x.shape), ("cos", F, cos.shape), ("sin", F, sin.shape)], ["y"], 23)
    _check(dev, m, {"x": x, "cos": cos, "sin": sin})


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_softmax_cross_entropy_loss(dev, reduction):
    scores = _rnd((3, 5, 2), 14)
    labels = np.array([[0, 4], [2, 1], [3, 3]], np.int64)
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["loss", "log_prob"], reduction=reduction)
    m = _model(node, [("x", F, scores.shape), ("t", TensorProto.INT64, labels.shape)], ["loss", "log_prob"], 13)
    _check(dev, m, {"x": scores, "t": labels})


def test_unsupported_op_in_a_body_is_named_under_the_node():
    # Bernoulli is random: its body is never expanded; DFT has no body. A body that reaches an op the compiler
    # lacks says which node of the body and under which node of the model.
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["loss"], name="loss_node")
    m = _model(node, [("x", F, (3, 5)), ("t", TensorProto.INT64, (3,))], ["loss"], 13)
    from accel.compiler.importer import OnnxNode
    from accel.compiler.lower import functions
    real = functions.body

    def with_unsupported(ctx, n):
        nodes = real(ctx, n)
        last = nodes[-1].proto
        last.op_type = "NoSuchOp"
        return nodes[:-1] + [OnnxNode(last, len(nodes))]

    functions.body = with_unsupported
    try:
        with pytest.raises(compiler.CompileError, match=r"unsupported op .NoSuchOp. \(node .loss_node/"):
            compiler.compile_model(m)
    finally:
        functions.body = real


def test_expanded_ops_count_as_supported_and_random_ones_do_not():
    assert {"RMSNormalization", "Attention", "RotaryEmbedding", "SwiGLU",
            "SoftmaxCrossEntropyLoss"} <= compiler.SUPPORTED_OPS
    assert "Bernoulli" not in compiler.SUPPORTED_OPS
    assert coverage.lowerable("RMSNormalization", "")
    assert not coverage.lowerable("RMSNormalization", "com.example")
