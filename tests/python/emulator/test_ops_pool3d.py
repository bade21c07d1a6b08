"""3-D MaxPool and AveragePool, and AveragePool with dilations (1-D, 2-D, 3-D), on the pool3d op (83), one
node each against onnxruntime (one thread) element by element: kernels, strides, dilations, pads, auto_pad,
ceil_mode and count_include_pad; NaN and infinities; the kernel's load-time checks."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from conftest import compile_error, emu_outputs, onnx_model, rand_array, run_ort
from conftest import runtime_ops as ops
from onnx import helper

import accel
from accel.compiler import accm

# The emulator's compiler and kernels (a board's toolchain compiles what it supports itself).
pytestmark = pytest.mark.emulator


@pytest.fixture(scope="module")
def dev():
    d = accel.open("emu:cores=2")
    yield d
    d.close()


def pool(op, x_shape, **attrs):
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    return onnx_model([node], [("x", "float32", x_shape)], [("y", "float32")], opset=19)


def check(dev, m, x, exact):
    got = emu_outputs(dev, m, {"x": x})[0]
    want = run_ort(m, {"x": x})[0]
    assert got.dtype == want.dtype and got.shape == want.shape, (got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    return got


X5 = (2, 3, 6, 7, 8)
# (kernel, strides, dilations, pads): plain, strided, dilated, padded, everything at once.
WINDOWS_3D = [([2, 2, 2], [1, 1, 1], [1, 1, 1], [0] * 6),
              ([3, 2, 3], [2, 1, 2], [1, 1, 1], [1, 0, 1, 1, 1, 0]),
              ([2, 2, 2], [1, 1, 1], [2, 3, 2], [0] * 6),
              ([3, 3, 3], [2, 2, 3], [2, 1, 2], [1, 1, 2, 2, 1, 1])]


@pytest.mark.parametrize("window", WINDOWS_3D, ids=str)
@pytest.mark.parametrize("ceil_mode", [0, 1])
@pytest.mark.parametrize("op,cip", [("MaxPool", 0), ("AveragePool", 0), ("AveragePool", 1)])
def test_pool_3d(dev, op, cip, ceil_mode, window):
    k, s, d, p = window
    attrs = dict(kernel_shape=k, strides=s, dilations=d, pads=p, ceil_mode=ceil_mode)
    if op == "AveragePool":
        attrs["count_include_pad"] = cip
    m = pool(op, X5, **attrs)
    check(dev, m, rand_array(X5, "float32", 1, scale=3.0), exact=op == "MaxPool")
    assert ops(m) == ["pool3d"]


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool_3d_auto_pad(dev, op, auto_pad):
    m = pool(op, X5, kernel_shape=[3, 2, 4], strides=[2, 2, 3], auto_pad=auto_pad)
    check(dev, m, rand_array(X5, "float32", 2, scale=3.0), exact=op == "MaxPool")


@pytest.mark.parametrize("x_shape,k,s,d,p", [((2, 3, 9, 10), [3, 2], [1, 2], [2, 3], [1, 1, 2, 0]),
                                             ((1, 2, 7, 7), [2, 2], [2, 2], [2, 2], [0, 0, 0, 0]),
                                             ((2, 3, 12), [3], [2], [3], [2, 1])], ids=str)
@pytest.mark.parametrize("cip,ceil_mode", list(itertools.product([0, 1], [0, 1])))
def test_avgpool_dilations(dev, x_shape, k, s, d, p, cip, ceil_mode):
    m = pool("AveragePool", x_shape, kernel_shape=k, strides=s, dilations=d, pads=p, count_include_pad=cip,
             ceil_mode=ceil_mode)
    check(dev, m, rand_array(x_shape, "float32", 3, scale=3.0), exact=False)
    assert "pool3d" in ops(m)


def test_pool_3d_infinities(dev):
    """Infinities win maxima and make sums infinite (or NaN: inf - inf), as in onnxruntime."""
    x = rand_array(X5, "float32", 4)
    x[0, 0, 1, 1, 1], x[0, 1, 2, 2, 2], x[1, 2, 3, 3, 3], x[1, 2, 3, 3, 4] = np.inf, -np.inf, np.inf, -np.inf
    for op in ("MaxPool", "AveragePool"):
        check(dev, pool(op, X5, kernel_shape=[2, 2, 2], strides=[1, 2, 2]), x, exact=True)


def test_maxpool_3d_nan_propagates(dev):
    """A NaN in a max window makes it NaN, as the 2-D maxpool op does (onnxruntime's 3-D loop skips it, a
    comparison that is false for NaN, or keeps it, by kernel); every other window is onnxruntime's."""
    x = rand_array(X5, "float32", 5)
    x[0, 0, 2, 3, 4] = np.nan
    m = pool("MaxPool", X5, kernel_shape=[2, 2, 2])
    got = emu_outputs(dev, m, {"x": x})[0]
    want = run_ort(m, {"x": x})[0]
    nan = np.zeros(got.shape, bool)
    nan[0, 0, 1:3, 2:4, 3:5] = True
    assert np.isnan(got[nan]).all()
    np.testing.assert_array_equal(got[~nan], want[~nan])


def test_avgpool_3d_nan(dev):
    x = rand_array(X5, "float32", 6)
    x[1, 1, 0, 0, 0] = np.nan
    check(dev, pool("AveragePool", X5, kernel_shape=[2, 3, 2], pads=[1, 1, 1, 1, 1, 1]), x, exact=False)


def test_pool_3d_refusals():
    compile_error(maxpool_with_indices(X5, kernel_shape=[2, 2, 2], storage_order=2), r"unsupported storage_order")
    compile_error(pool("MaxPool", (1, 1, 2, 2, 2, 2), kernel_shape=[2, 2, 2, 2]),
                  r"unsupported input rank 6 \(1-D, 2-D and 3-D pooling\)")
    compile_error(pool("AveragePool", X5, kernel_shape=[2, 2]), r"kernel_shape")


F32 = accm.dtype_code(np.float32)


def pool3d_accm(x_dims, y_dims, ints):
    tensors = [accm.Tensor("x", F32, accm.KIND_INPUT, x_dims), accm.Tensor("y", F32, accm.KIND_OUTPUT, y_dims)]
    node = accm.Node(accm.OPS["pool3d"], [0], [1], name="n1", ints=list(ints))
    return accm.write(tensors, [node], [0], [1])


GOOD = [0, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]


def _with(**changes):
    ints = list(GOOD)
    for slot, v in changes.items():
        ints[int(slot[1:])] = v
    return ints


@pytest.mark.parametrize("dims,ints,match", [
    (((1, 1, 4, 4, 4), (1, 1, 3, 3, 3)), _with(s0=3), r"mode 3 is not 0..2"),
    (((1, 1, 4, 4, 4), (1, 1, 3, 3, 3)), _with(s2=0), r"axis h: kernel 0"),
    (((1, 1, 4, 4, 4), (1, 1, 3, 3, 3)), _with(s9=0), r"axis w: .*dilation 0"),
    (((1, 1, 4, 4, 4), (1, 1, 3, 3, 3)), _with(s10=-1), r"axis d: .*pads -1, 0"),
    (((1, 1, 4, 4, 4), (1, 1, 5, 3, 3)), GOOD, r"axis d: output size 5 has a window starting past input size 4"),
    (((1, 1, 4, 4), (1, 1, 3, 3)), GOOD, r"ranks 4, 4 are not 5"),
    (((1, 1, 4, 4, 4), (1, 2, 3, 3, 3)), GOOD, r"changes N or C"),
])
def test_pool3d_kernel_refuses_bad_nodes_at_load(dev, dims, ints, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*pool3d: .*{match}"):
        dev.load(pool3d_accm(*dims, ints))


def test_pool3d_work_follows_the_input_whatever_the_kernel(dev):
    # A hostile file's kernel of 2^40 over an axis of one element: the loops visit the taps inside the input
    # alone (one), so the run ends at once with the mean of that element; a kernel past 2^40 is refused.
    model = dev.load(pool3d_accm((1, 1, 1, 4, 4), (1, 1, 1, 3, 3), _with(s0=1, s1=1 << 40)))
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 1, 4, 4)
    (got,) = model.run(x)
    want = (x[..., :-1, :-1] + x[..., 1:, :-1] + x[..., :-1, 1:] + x[..., 1:, 1:]) / 4
    np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(accel.AccelError, match=r"axis d: kernel 1099511627777.* must be 1 .. 2\^40"):
        dev.load(pool3d_accm((1, 1, 1, 4, 4), (1, 1, 1, 3, 3), _with(s0=1, s1=(1 << 40) + 1)))


# ---- MaxPool with Indices (maxpoolidx, op 85) ---------------------------------------------------------

def maxpool_with_indices(x_shape, **attrs):
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    return onnx_model([node], [("x", "float32", x_shape)], [("y", "float32"), ("i", "int64")], opset=12)


INDEX_CASES = [((2, 3, 11), dict(kernel_shape=[3], strides=[2], pads=[1, 2], dilations=[2])),
               ((2, 3, 7, 8), dict(kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 1])),
               ((1, 2, 9, 9), dict(kernel_shape=[2, 3], dilations=[2, 2], ceil_mode=1, strides=[2, 3])),
               ((2, 2, 4, 5, 6), dict(kernel_shape=[2, 3, 2], strides=[1, 2, 2], pads=[1, 1, 0, 0, 1, 1])),
               ((1, 2, 5, 4, 6), dict(kernel_shape=[2, 2, 3], dilations=[2, 1, 2]))]


@pytest.mark.parametrize("storage_order", [0, 1])
@pytest.mark.parametrize("x_shape,attrs", INDEX_CASES, ids=str)
def test_maxpool_indices(dev, x_shape, attrs, storage_order):
    m = maxpool_with_indices(x_shape, storage_order=storage_order, **attrs)
    x = rand_array(x_shape, "float32", 11, scale=3.0)
    got = emu_outputs(dev, m, {"x": x})
    want = run_ort(m, {"x": x})
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert "maxpoolidx" in ops(m)


def test_maxpool_indices_ties_nan_and_infinities(dev):
    """Ties go to the first element in C order; a window's first element NaN stays, a later NaN never wins;
    -inf windows give -inf at their first element; as onnxruntime's loop gives."""
    x_shape = (1, 2, 6, 6)
    x = np.zeros(x_shape, np.float32)
    x[0, 0, 2:4, 2:4] = np.nan
    x[0, 0, 0, 0:2] = [np.nan, 5]
    x[0, 0, 4, 4:6] = [1, np.nan]
    x[0, 1] = -np.inf
    x[0, 1, 5, 5] = np.inf
    x[0, 1, 0, 1] = np.nan
    m = maxpool_with_indices(x_shape, kernel_shape=[2, 2], strides=[2, 2])
    got, want = emu_outputs(dev, m, {"x": x}), run_ort(m, {"x": x})
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


I64 = accm.dtype_code(np.int64)


def maxpoolidx_accm(x_dims, y_dims, ints, i_dtype=I64):
    tensors = [accm.Tensor("x", F32, accm.KIND_INPUT, x_dims), accm.Tensor("y", F32, accm.KIND_OUTPUT, y_dims),
               accm.Tensor("i", i_dtype, accm.KIND_OUTPUT, y_dims)]
    node = accm.Node(accm.OPS["maxpoolidx"], [0], [1, 2], name="n1", ints=list(ints))
    return accm.write(tensors, [node], [0], [1, 2])


IDX_GOOD = [2, 0, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, 0]


@pytest.mark.parametrize("x_dims,y_dims,ints,kw,match", [
    ((1, 1, 1, 4, 4), (1, 1, 1, 3, 3), [4] + IDX_GOOD[1:], {}, r"rank 4 is not 1..3"),
    ((1, 1, 1, 4, 4), (1, 1, 1, 3, 3), [2, 2] + IDX_GOOD[2:], {}, r"storage_order 2 is not 0 or 1"),
    ((1, 1, 2, 4, 4), (1, 1, 2, 3, 3), IDX_GOOD, {}, r"axis d is not one of the 2 pooled axes but has 2"),
    ((1, 1, 1, 4, 4), (1, 1, 1, 3, 3), IDX_GOOD, dict(i_dtype=F32), r"I is float32, not int64"),
    ((1, 1, 1, 4, 4), (1, 1, 1, 5, 3), IDX_GOOD, {}, r"axis h: output size 5 has a window starting past"),
])
def test_maxpoolidx_kernel_refuses_bad_nodes_at_load(dev, x_dims, y_dims, ints, kw, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*maxpoolidx: .*{match}"):
        dev.load(maxpoolidx_accm(x_dims, y_dims, ints, **kw))
