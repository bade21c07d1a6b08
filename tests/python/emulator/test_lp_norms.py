"""LRN, LpNormalization, MeanVarianceNormalization and LpPool (lower/lp_norms.py: written with the runtime's
elementwise, reduce and convolution ops) against onnxruntime, element by element within float rounding
(they are not bit for bit: the window sums are convolutions), NaN and zeros included, and their refusals."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import accel
from accel import compiler

pytestmark = pytest.mark.emulator

F = TensorProto.FLOAT


@pytest.fixture(scope="module")
def emu():
    with accel.open("emu") as d:
        yield d


def one_node(op, shape, opset=18, **attrs):
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="n1", **attrs)], "t",
                          [helper.make_tensor_value_info("x", F, list(shape))],
                          [helper.make_tensor_value_info("y", F, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m


def check(emu, m, x, rtol=2e-5, atol=1e-6):
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = np.asarray(emu.load(compiler.compile_model(m)).run({"x": x})[0])
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)  # NaN where onnxruntime has NaN
    return got, want


def rnd(shape, seed=0, scale=1.0, shift=0.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale + shift).astype(np.float32)


def lrn_reference(x, size, alpha, beta, bias):
    """The ONNX spec's LRN in float64: the window c - floor((size-1)/2) .. c + ceil((size-1)/2)."""
    xd = x.astype(np.float64)
    sq = np.zeros_like(xd)
    c = x.shape[1]
    for i in range(c):
        lo, hi = max(0, i - (size - 1) // 2), min(c - 1, i + size - 1 - (size - 1) // 2)
        sq[:, i] = (xd[:, lo:hi + 1] ** 2).sum(axis=1)
    return (xd / (bias + alpha / size * sq) ** beta).astype(np.float32)


LRN_PARAMS = [(1, 1e-4, 0.75, 1.0), (3, 2e-4, 0.5, 2.0), (5, 1e-4, 0.75, 1.0), (7, 1.0, 1.5, 3.0), (9, 0.1, 0.9, 0.5)]


@pytest.mark.parametrize("size,alpha,beta,bias", LRN_PARAMS)
@pytest.mark.parametrize("shape", [(2, 16, 6, 7), (1, 96, 13, 13), (1, 3, 4, 4)])
def test_lrn(emu, shape, size, alpha, beta, bias):
    x = rnd(shape, seed=size, scale=3.0)
    check(emu, one_node("LRN", shape, size=size, alpha=alpha, beta=beta, bias=bias), x)


@pytest.mark.parametrize("size,shape", [(2, (2, 8, 3, 3)), (4, (1, 6, 5, 4)), (3, (2, 7, 9)), (6, (1, 5, 11))])
def test_lrn_beyond_onnxruntime(emu, size, shape):
    """Even sizes and N x C x D inputs, which the spec defines and onnxruntime refuses: the spec's values."""
    x = rnd(shape, seed=size, scale=2.0)
    got = np.asarray(emu.load(compiler.compile_model(one_node("LRN", shape, size=size, alpha=0.01))).run({"x": x})[0])
    np.testing.assert_allclose(got, lrn_reference(x, size, 0.01, 0.75, 1.0), rtol=2e-5, atol=1e-6)


def test_lrn_nan_and_inf(emu):
    """A NaN or inf reaches the channels whose window holds it, as the spec says. onnxruntime's running sum
    carries a NaN on to every later channel (NaN - NaN): there accel keeps to the spec (the channels before and
    within the window agree with onnxruntime's)."""
    x = rnd((1, 6, 2, 2), seed=1)
    x[0, 2, 0, 0], x[0, 4, 1, 1] = np.nan, np.inf
    m = one_node("LRN", x.shape, size=3)
    got = np.asarray(emu.load(compiler.compile_model(m)).run({"x": x})[0])
    want = lrn_reference(x, 3, 1e-4, 0.75, 1.0)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    assert np.isnan(got[0, 1:4, 0, 0]).all() and not np.isnan(got[0, 4:, 0, 0]).any()
    ort_y = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got[0, :4], ort_y[0, :4], rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("shape,axis", [((4, 7), 1), ((4, 7), 0), ((2, 3, 5), -1), ((2, 3, 5), 1), ((6,), 0)])
def test_lp_normalization(emu, shape, axis, p):
    x = rnd(shape, seed=p, scale=2.0)
    check(emu, one_node("LpNormalization", shape, axis=axis, p=p), x)


@pytest.mark.parametrize("p", [1, 2])
def test_lp_normalization_zero_norms(emu, p):
    """A norm of 0 gives +0 (onnxruntime's rule), also where p = 2's squares underflow; NaN stays NaN."""
    x = np.array([[0, 0, 0], [0, -0.0, 0], [1e-45, 0, -1e-45], [np.nan, 1, 2], [3, 4, 0]], np.float32)
    got, want = check(emu, one_node("LpNormalization", x.shape, axis=1, p=p), x)
    np.testing.assert_array_equal(np.signbit(got[:2]), np.signbit(want[:2]))


@pytest.mark.parametrize("axes", [None, [1], [2, 3], [0, 1, 2, 3], [-1]], ids=str)
def test_mean_variance_normalization(emu, axes):
    shape = (3, 4, 5, 6)
    x = rnd(shape, seed=4, scale=2.0, shift=5.0)
    attrs = {} if axes is None else {"axes": axes}
    check(emu, one_node("MeanVarianceNormalization", shape, **attrs), x, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("attrs,shape", [
    (dict(kernel_shape=[2, 2], p=2), (1, 3, 8, 9)),
    (dict(kernel_shape=[3, 3], p=3, pads=[1, 2, 2, 1]), (2, 4, 7, 7)),
    (dict(kernel_shape=[5, 5], p=1, strides=[3, 2]), (1, 2, 12, 11)),
    (dict(kernel_shape=[2, 2], p=4, auto_pad="SAME_UPPER"), (1, 3, 7, 8)),
    (dict(kernel_shape=[3, 2], p=2, auto_pad="SAME_LOWER", strides=[2, 2]), (1, 3, 7, 8)),
    (dict(kernel_shape=[2, 2], p=2, dilations=[2, 2]), (1, 2, 6, 6)),
    (dict(kernel_shape=[3], p=3, strides=[2], pads=[1, 1]), (2, 3, 17)),
    (dict(kernel_shape=[2, 2], p=2, auto_pad="VALID"), (1, 1, 5, 5)),
])
def test_lp_pool(emu, attrs, shape):
    x = rnd(shape, seed=len(shape), scale=2.0)
    check(emu, one_node("LpPool", shape, **attrs), x, rtol=1e-5)


def test_lp_pool_nan(emu):
    x = rnd((1, 1, 4, 4), seed=2)
    x[0, 0, 1, 1] = np.nan
    check(emu, one_node("LpPool", x.shape, kernel_shape=[2, 2], p=3), x)


@pytest.mark.parametrize("op,shape,attrs,match", [
    ("LpPool", (1, 2, 4, 4, 4), dict(kernel_shape=[2, 2, 2]), "input rank 5 .*only 1-D and 2-D LpPool"),
    ("LpPool", (1, 2, 5, 5), dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1), "ceil_mode=1"),
    ("LpNormalization", (2, 3), dict(p=3), "p=3"),
    ("LRN", (1, 2, 2, 2, 2), dict(size=3), "input rank 5"),
])
def test_refusals_name_the_node(op, shape, attrs, match):
    with pytest.raises(compiler.CompileError, match=rf"unsupported {match}.*'{op}' \(node 'n1'\)"):
        compiler.compile_model(one_node(op, shape, **attrs))
