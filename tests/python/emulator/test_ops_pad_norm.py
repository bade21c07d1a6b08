"""Pad, DepthToSpace, SpaceToDepth, InstanceNormalization, GroupNormalization, Hardmax and LogSoftmax end to end
(ONNX -> accel.compiler -> the emulator) against onnxruntime, every element: Pad bit-exact on every dtype accel
has (all modes, positive and negative pads, pads on N and C, the axes input), the block shuffles and Hardmax
bit-exact, the normalizations and LogSoftmax within float rounding (NaN groups included); CompileErrors; the
kernels' load-time checks."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import conftest
from conftest import emu_outputs as run_accel
from conftest import rand_array, run_ort
from conftest import runtime_ops as ops
from onnx import helper, numpy_helper

import accel
from accel import compiler
from accel.compiler import accm

# The emulator's own ops: their semantics, not a device's (deselected on vendor devices).
pytestmark = pytest.mark.emulator

# This file's models: opset 19 (IR 9).
onnx_model = functools.partial(conftest.onnx_model, opset=19, ir_version=9)


rand = functools.partial(rand_array, scale=10)


ALL_DTYPES = ["float32", "float16", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
              "uint64", "bool"]


def check(dev, m, feeds, atol=None):
    """The emulator against onnxruntime: same dtypes and shapes; values bit-exact (atol None) or within
    atol (NaN where onnxruntime has NaN)."""
    got, want = run_accel(dev, m, feeds), run_ort(m, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if atol is None:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=0, atol=atol)
    return got


def pad_model(shape, pads, mode="constant", dtype="float32", value=None, axes=None, opset=19):
    inits = {"pads": np.asarray(pads, np.int64)}
    names = ["x", "pads"]
    if value is not None or axes is not None:
        names.append("" if value is None else "v")
        if value is not None:
            inits["v"] = np.asarray(value, dtype)
    if axes is not None:
        names.append("axes")
        inits["axes"] = np.asarray(axes, np.int64)
    node = helper.make_node("Pad", names, ["y"], mode=mode)
    return onnx_model([node], [("x", dtype, shape)], [("y", dtype)], inits, opset=opset)


# ---------------------------------------------------------------------------------------------------
# Pad
# ---------------------------------------------------------------------------------------------------

PAD_CASES = [  # (shape, pads): positive, negative (cropping), on N and C, mixed on one axis
    ((1, 3, 4, 5), [0, 0, 1, 2, 0, 0, 2, 1]),
    ((2, 3, 4, 5), [1, 2, 0, 0, 0, 1, 0, 0]),          # N and C
    ((2, 3, 4, 5), [0, 0, -1, 2, 0, 0, 1, -2]),        # crop and pad on one axis
    ((2, 3, 4, 5), [-1, 0, -1, -1, 0, -1, 0, -2]),     # crop only
    ((3, 4), [2, 1, 1, 3]),
    ((5,), [2, 4]),
    ((2, 1, 2, 1, 2, 1, 2, 3), [1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 0, 1, 2]),  # rank 8
]


def pad_ref(x, pads, mode, value=0):
    """onnxruntime's Pad where it refuses (reflect past an axis): negative pads crop first, then numpy pads
    (ONNX's reference)."""
    r = x.ndim
    crop = tuple(slice(max(-pads[i], 0), x.shape[i] - max(-pads[i + r], 0)) for i in range(r))
    widths = [(max(pads[i], 0), max(pads[i + r], 0)) for i in range(r)]
    if mode == "constant":
        return np.pad(x[crop], widths, mode=mode, constant_values=value)
    return np.pad(x[crop], widths, mode=mode)


def ort_pads_ok(shape, pads, mode):
    """onnxruntime reflects only within an axis (pads < its length after cropping)."""
    r = len(shape)
    left = [d - max(-pads[i], 0) - max(-pads[i + r], 0) for i, d in enumerate(shape)]
    return mode != "reflect" or all(max(pads[i], pads[i + r]) < left[i] for i in range(r))


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("shape,pads", PAD_CASES)
def test_pad_modes_match_onnxruntime(dev, mode, shape, pads):
    m = pad_model(shape, pads, mode)
    x = rand(shape, "float32")
    if ort_pads_ok(shape, pads, mode):
        check(dev, m, {"x": x})
    np.testing.assert_array_equal(run_accel(dev, m, {"x": x})[0], pad_ref(x, pads, mode))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "wrap"])
def test_pad_every_dtype(dev, dtype, mode):
    """Bit-exact against numpy on every dtype, and against onnxruntime on those its Pad kernel has."""
    shape, pads = (2, 3, 4), [0, 1, 2, 1, -1, 3]
    value = None if mode != "constant" or dtype == "bool" else np.asarray(7, dtype)
    m = pad_model(shape, pads, mode, dtype=dtype, value=value)
    x = rand(shape, dtype)
    got = run_accel(dev, m, {"x": x})[0]
    want = pad_ref(x, pads, mode, 0 if value is None else value)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    if dtype not in ("int16", "uint16", "uint32", "uint64", "float16") and not (dtype == "bool" and mode != "constant"):
        check(dev, m, {"x": x})


@pytest.mark.parametrize("value", [2.5, -0.0, float("nan"), float("-inf")])
def test_pad_constant_value(dev, value):
    m = pad_model((2, 3), [1, 1, 1, 1], value=value)
    check(dev, m, {"x": rand((2, 3), "float32")})


def test_pad_runtime_constant_value(dev):
    node = helper.make_node("Pad", ["x", "pads", "v"], ["y"])
    m = onnx_model([node], [("x", "int32", (2, 3)), ("v", "int32", ())], [("y", "int32")],
                   {"pads": np.array([1, 0, 2, 3], np.int64)})
    check(dev, m, {"x": rand((2, 3), "int32"), "v": np.array(-5, np.int32)})


@pytest.mark.parametrize("axes,pads", [([1, 3], [1, 2, 3, 0]), ([-1], [2, -1]), ([0, -2], [1, 1, 0, 2])])
def test_pad_axes_input(dev, axes, pads):
    m = pad_model((2, 3, 4, 5), pads, "edge", axes=axes, opset=18)
    check(dev, m, {"x": rand((2, 3, 4, 5), "float32")})


@pytest.mark.parametrize("opset,attr", [(2, "pads"), (1, "paddings")])
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad_attribute_opsets(dev, opset, attr, mode):
    """Opsets 1 and 2 give the pads (and value) as attributes (onnxruntime runs opset 2 and up)."""
    node = helper.make_node("Pad", ["x"], ["y"], mode=mode, value=1.5, **{attr: [0, 1, 2, 0, 2, 1]})
    m = onnx_model([node], [("x", "float32", (2, 3, 4))], [("y", "float32")], opset=opset)
    x = rand((2, 3, 4), "float32")
    want = np.pad(x, [(0, 0), (1, 2), (2, 1)], mode=mode, **({"constant_values": 1.5} if mode == "constant" else {}))
    np.testing.assert_array_equal(run_accel(dev, m, {"x": x})[0], want)
    if opset >= 2:
        check(dev, m, {"x": x})


def test_pad_reflect_past_the_axis_follows_numpy(dev):
    """ONNX's reference is numpy's pad: reflect keeps mirroring past the axis's length (onnxruntime refuses
    such pads), and an axis of one element repeats it."""
    x = rand((2, 3, 1), "float32")
    m = pad_model((2, 3, 1), [0, 7, 2, 0, 5, 3], "reflect")
    np.testing.assert_array_equal(run_accel(dev, m, {"x": x})[0], np.pad(x, [(0, 0), (7, 5), (2, 3)], "reflect"))


def test_pad_lowers_to_one_op(dev):
    assert ops(pad_model((1, 3, 4, 4), [0, 0, 1, 1, 0, 0, 1, 1], "reflect")) == ["pad"]
    assert ops(pad_model((1, 3, 4, 4), [0, 0, -1, 1, 0, 0, 1, 1], "edge")) == ["slice", "pad"]
    assert ops(pad_model((1, 3, 4, 4), [0, 0, -1, 0, 0, 0, 0, -1], "edge")) == ["slice"]


@pytest.mark.parametrize("kw,match", [
    (dict(shape=(2, 3), pads=[0, -3, 0, 2]), "cropped to nothing"),
    (dict(shape=(2, 3), pads=[0, -3, 0, 0]), "would be empty"),
    (dict(shape=(2, 3), pads=[0, 1, 0]), "3 pads for 2 axes"),
    (dict(shape=(2, 3), pads=[1, 1], axes=[1, 1], opset=18), "repeated axes"),
    (dict(shape=(2, 3), pads=[1, 1, 1, 1], mode="wrap", opset=18), "opset 19"),
    (dict(shape=(2, 3), pads=[1, 1, 1, 1], mode="mirror"), "mode 'mirror'"),
])
def test_pad_compile_errors(kw, match):
    with pytest.raises(compiler.CompileError, match=match):
        compiler.compile_model(pad_model(**kw))


def test_pad_runtime_pads_are_refused():
    node = helper.make_node("Pad", ["x", "p"], ["y"])
    m = onnx_model([node], [("x", "float32", (2, 3)), ("p", "int64", (4,))], [("y", "float32")])
    with pytest.raises(compiler.CompileError, match=r"pads .* must be a constant"):
        compiler.compile_model(m)


F32, I64 = accm.dtype_code(np.float32), accm.dtype_code(np.int64)


def accm_pad(x_dims, y_dims, ints, v=None):
    tensors = [accm.Tensor("x", F32, accm.KIND_INPUT, x_dims), accm.Tensor("y", F32, accm.KIND_OUTPUT, y_dims)]
    inputs = [0]
    if v is not None:
        tensors.append(accm.Tensor("v", accm.dtype_code(v.dtype), accm.KIND_CONSTANT, v.shape, data=v))
        inputs.append(2)
    return accm.write(tensors, [accm.Node(accm.OPS["pad"], inputs, [1], name="n1", ints=list(ints))], [0], [1])


@pytest.mark.parametrize("x,y,ints,v,match", [
    ((2, 3), (2, 3, 1), [0] * 9, None, "output rank 3 differs"),
    ((2, 3), (3, 3), [2] + [0] * 8, None, "axis 0: 2 elements before an input of 2 do not fit an output of 3"),
    ((2, 3), (3, 3), [-1] + [0] * 8, None, "axis 0: -1 elements"),
    ((2, 3), (3, 3), [0, 0, 1] + [0] * 6, None, "begin of axis 2 is 1"),
    ((2, 3), (3, 3), [0] * 8 + [4], None, "mode 4 is not"),
    ((2, 3), (3, 3), [0] * 8 + [2], np.zeros(1, np.float32), "mode is not constant"),
    ((2, 3), (3, 3), [0] * 9, np.zeros(2, np.float32), "2 elements, not 1"),
    ((2, 3), (3, 3), [0] * 9, np.zeros(1, np.int64), "dtype int64 differs"),
])
def test_pad_kernel_refuses_bad_nodes_at_load(dev, x, y, ints, v, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*pad: .*{match}"):
        dev.load(accm_pad(x, y, ints, v))


# ---------------------------------------------------------------------------------------------------
# DepthToSpace and SpaceToDepth
# ---------------------------------------------------------------------------------------------------

def d2s_ref(x, b, mode):
    n, c, h, w = x.shape
    if mode == "DCR":
        return x.reshape(n, b, b, c // b // b, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(n, c // b // b, h * b, w * b)
    return x.reshape(n, c // b // b, b, b, h, w).transpose(0, 1, 4, 2, 5, 3).reshape(n, c // b // b, h * b, w * b)


def s2d_ref(x, b):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4).reshape(n, c * b * b, h // b, w // b)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8"])
@pytest.mark.parametrize("mode", ["DCR", "CRD"])
@pytest.mark.parametrize("shape,b", [((1, 8, 2, 3), 2), ((2, 18, 3, 2), 3), ((1, 4, 2, 2), 1)])
def test_depth_to_space(dev, dtype, mode, shape, b):
    """Bit-exact against numpy's reshape-transpose-reshape, and against onnxruntime on its dtypes."""
    m = onnx_model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=b, mode=mode)],
                   [("x", dtype, shape)], [("y", dtype)], opset=13)
    x = rand(shape, dtype)
    np.testing.assert_array_equal(run_accel(dev, m, {"x": x})[0], d2s_ref(x, b, mode))
    if dtype != "int64":  # onnxruntime's DepthToSpace has no int64
        check(dev, m, {"x": x})


def test_depth_to_space_opset1_is_dcr(dev):
    m = onnx_model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2)],
                   [("x", "float32", (1, 8, 2, 3))], [("y", "float32")], opset=1)
    x = rand((1, 8, 2, 3), "float32")
    np.testing.assert_array_equal(run_accel(dev, m, {"x": x})[0], d2s_ref(x, 2, "DCR"))


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
@pytest.mark.parametrize("shape,b", [((1, 3, 4, 6), 2), ((2, 2, 6, 3), 3), ((1, 2, 2, 2), 1)])
def test_space_to_depth(dev, dtype, shape, b):
    m = onnx_model([helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=b)],
                   [("x", dtype, shape)], [("y", dtype)], opset=13)
    x = rand(shape, dtype)
    np.testing.assert_array_equal(run_accel(dev, m, {"x": x})[0], s2d_ref(x, b))
    if dtype != "bool":  # onnxruntime's SpaceToDepth has no bool
        check(dev, m, {"x": x})


def test_block_shuffles_lower_to_a_transpose():
    m = onnx_model([helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD")],
                   [("x", "float32", (1, 8, 2, 3))], [("y", "float32")], opset=13)
    assert ops(m) == ["copy", "transpose", "copy"]


@pytest.mark.parametrize("op,shape,match", [
    ("DepthToSpace", (1, 6, 2, 2), "not a multiple of blocksize"),
    ("SpaceToDepth", (1, 6, 3, 2), "not multiples of blocksize"),
    ("SpaceToDepth", (6, 4, 4), "is not 4-D"),
])
def test_block_shuffle_compile_errors(op, shape, match):
    m = onnx_model([helper.make_node(op, ["x"], ["y"], blocksize=2)], [("x", "float32", shape)],
                   [("y", "float32")], opset=13)
    with pytest.raises(compiler.CompileError, match=match):
        compiler.compile_model(m)


# ---------------------------------------------------------------------------------------------------
# InstanceNormalization and GroupNormalization
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (1, 4, 9), (2, 2, 3, 4, 5), (1, 8, 64, 64)])
@pytest.mark.parametrize("eps", [1e-5, 0.1])
def test_instancenorm(dev, shape, eps):
    c = shape[1]
    inits = {"s": rand((c,), "float32", 1) / 10, "b": rand((c,), "float32", 2)}
    m = onnx_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=eps)],
                   [("x", "float32", shape)], [("y", "float32")], inits, opset=17)
    x = rand(shape, "float32") + 5
    check(dev, m, {"x": x}, atol=2e-5)
    assert ops(m) == ["groupnorm"]


def test_instancenorm_runtime_scale_and_nan(dev):
    """Scale and bias computed at run time; a NaN in one (n, c) makes that (n, c) NaN, and only it."""
    m = onnx_model([helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])],
                   [("x", "float32", (2, 3, 4, 4)), ("s", "float32", (3,)), ("b", "float32", (3,))],
                   [("y", "float32")], opset=17)
    x = rand((2, 3, 4, 4), "float32")
    x[1, 2, 3, 1] = np.nan
    got = check(dev, m, {"x": x, "s": rand((3,), "float32", 1), "b": rand((3,), "float32", 2)}, atol=2e-5)[0]
    assert np.isnan(got[1, 2]).all() and not np.isnan(got[:1]).any() and not np.isnan(got[1, :2]).any()


def groupnorm_model(shape, groups, opset, runtime=False, eps=1e-5):
    c = shape[1]
    count = groups if opset < 21 else c
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups, epsilon=eps)
    params = {"s": rand((count,), "float32", 1) / 10, "b": rand((count,), "float32", 2)}
    if runtime:
        return params, onnx_model([node], [("x", "float32", shape), ("s", "float32", (count,)),
                                           ("b", "float32", (count,))], [("y", "float32")], opset=opset)
    return {}, onnx_model([node], [("x", "float32", shape)], [("y", "float32")], params, opset=opset)


def groupnorm_ref(x, groups, s, b, eps):
    """GroupNormalization in float64 (s and b one per channel)."""
    n, c = x.shape[:2]
    g = x.astype(np.float64).reshape(n, groups, -1)
    y = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return y.reshape(x.shape) * s.reshape(shape) + b.reshape(shape)


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("runtime", [False, True])
@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 4), 3), ((1, 8, 7), 2), ((2, 4, 3, 3), 4), ((1, 6, 2, 2), 1),
                                          ((1, 32, 16, 16), 8)])
def test_groupnorm(dev, opset, runtime, shape, groups):
    feeds, m = groupnorm_model(shape, groups, opset, runtime)
    x = rand(shape, "float32") + 3
    feeds["x"] = x
    got = run_accel(dev, m, feeds)[0]
    params = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer} | feeds
    rep = 1 if opset >= 21 else shape[1] // groups
    s, b = (np.repeat(params[k].astype(np.float64), rep) for k in "sb")
    np.testing.assert_allclose(got, groupnorm_ref(x, groups, s, b, 1e-5), rtol=0, atol=2e-5)
    try:
        want = run_ort(m, feeds)[0]
    except Exception as e:  # noqa: BLE001 - an onnxruntime without this opset's GroupNormalization
        pytest.skip(f"onnxruntime cannot run GroupNormalization-{opset}: {e}")
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)


def test_groupnorm_nan_spoils_its_group_only(dev):
    _, m = groupnorm_model((2, 6, 3, 3), 3, 21)
    x = rand((2, 6, 3, 3), "float32")
    x[0, 3, 1, 1] = np.nan  # group 1 of batch 0: channels 2 and 3
    got = run_accel(dev, m, {"x": x})[0]
    nan = np.isnan(got)
    assert nan[0, 2:4].all() and nan.sum() == 2 * 9


@pytest.mark.parametrize("groups,match", [(4, "num_groups 4 does not divide the 6 channels"),
                                          (0, "num_groups 0 does not divide")])
def test_groupnorm_compile_errors(groups, match):
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=groups)
    m = onnx_model([node], [("x", "float32", (1, 6, 2, 2))], [("y", "float32")],
                   {"s": np.ones(6, np.float32), "b": np.zeros(6, np.float32)}, opset=21)
    with pytest.raises(compiler.CompileError, match=match):
        compiler.compile_model(m)


def test_groupnorm_wrong_scale_shape_is_refused():
    _, m = groupnorm_model((1, 6, 2, 2), 3, 21)
    m.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.ones(3, np.float32), "s"))
    with pytest.raises(compiler.CompileError, match=r"scale 's' has shape \(3,\), expected \(6,\)"):
        compiler.compile_model(m)


def accm_groupnorm(x_dims, groups, eps, s_len, b_len=None):
    c = np.ones(s_len, np.float32)
    tensors = [accm.Tensor("x", F32, accm.KIND_INPUT, x_dims), accm.Tensor("y", F32, accm.KIND_OUTPUT, x_dims),
               accm.Tensor("s", F32, accm.KIND_CONSTANT, c.shape, data=c),
               accm.Tensor("b", F32, accm.KIND_CONSTANT, (b_len or s_len,), data=np.zeros(b_len or s_len, np.float32))]
    node = accm.Node(accm.OPS["groupnorm"], [0, 2, 3], [1], name="n1", ints=[groups], floats=[eps])
    return accm.write(tensors, [node], [0], [1])


@pytest.mark.parametrize("args,match", [
    (((1, 6, 2), 4, 1e-5, 6), "groups 4 does not divide the 6 channels"),
    (((1, 6, 2), 0, 1e-5, 6), "groups 0 does not divide"),
    (((1, 6, 2), 3, 0.0, 6), "epsilon 0 is not > 0"),
    (((1, 6, 2), 3, 1e-5, 3), r"scale shape \[3\] is not \[6\]"),
    (((1, 6, 2), 3, 1e-5, 6, 2), r"bias shape \[2\] is not \[6\]"),
    (((6,), 3, 1e-5, 6), "rank < 2"),
])
def test_groupnorm_kernel_refuses_bad_nodes_at_load(dev, args, match):
    with pytest.raises(accel.AccelError, match=f"'n1'.*groupnorm: .*{match}"):
        dev.load(accm_groupnorm(*args))


@pytest.mark.parametrize("op", ["GroupNormalization", "InstanceNormalization"])
def test_norm_then_silu_or_relu_is_one_node(dev, op):
    """The activation after a group or instance norm runs in the norm's node (SiLU as Sigmoid * x too)."""
    attrs = {"num_groups": 2} if op == "GroupNormalization" else {}
    nodes = [helper.make_node(op, ["x", "s", "b"], ["n"], **attrs),
             helper.make_node("Sigmoid", ["n"], ["sg"]), helper.make_node("Mul", ["n", "sg"], ["y"]),
             helper.make_node("Relu", ["n"], ["r"])]
    inits = {"s": rand((4,), "float32", 1) / 10, "b": rand((4,), "float32", 2)}
    m = onnx_model(nodes[:3], [("x", "float32", (2, 4, 5, 5))], [("y", "float32")], inits, opset=21)
    check(dev, m, {"x": rand((2, 4, 5, 5), "float32")}, atol=2e-5)
    assert ops(m) == ["groupnorm"]
    m = onnx_model(nodes[:1] + nodes[3:], [("x", "float32", (2, 4, 5, 5))], [("r", "float32")], inits, opset=21)
    check(dev, m, {"x": rand((2, 4, 5, 5), "float32")}, atol=2e-5)
    assert ops(m) == ["groupnorm"]


# ---------------------------------------------------------------------------------------------------
# Hardmax
# ---------------------------------------------------------------------------------------------------

def _np_hardmax(x, axis, legacy):
    """1 at the first largest element of each line (a line: the dims from axis on with legacy)."""
    lines = x.reshape(int(np.prod(x.shape[:axis])), -1) if legacy else np.moveaxis(x, axis, -1)
    hot = np.zeros_like(lines)
    np.put_along_axis(hot, np.argmax(lines, axis=-1)[..., None], 1.0, axis=-1)
    return hot.reshape(x.shape) if legacy else np.moveaxis(hot, -1, axis)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_hardmax_every_axis_first_of_ties(dev, opset, axis):
    """Small integers as values, so most lines have ties: the 1 goes to the first largest, as onnxruntime."""
    x = np.random.default_rng(5).integers(-3, 4, size=(3, 4, 5)).astype(np.float32)
    m = onnx_model([helper.make_node("Hardmax", ["x"], ["y"], axis=axis)], [("x", "float32", x.shape)],
                   [("y", "float32")], opset=opset)
    (got,) = check(dev, m, {"x": x})
    np.testing.assert_array_equal(got, _np_hardmax(x, axis % 3, opset < 13))
    assert {"argreduce", "onehot"} <= set(ops(m))


def test_hardmax_of_a_vector_and_nan(dev):
    """A rank-1 input; a line holding NaN has its 1 at the first NaN (numpy's argmax)."""
    x = np.array([1.0, 5.0, np.nan, 5.0, np.nan, -np.inf], np.float32)
    m = onnx_model([helper.make_node("Hardmax", ["x"], ["y"])], [("x", "float32", x.shape)], [("y", "float32")])
    (got,) = run_accel(dev, m, {"x": x})
    np.testing.assert_array_equal(got, [0, 0, 1, 0, 0, 0])
    x = np.array([1.0, 5.0, -2.0, 5.0, np.inf, -np.inf], np.float32)
    check(dev, m, {"x": x})


# ---------------------------------------------------------------------------------------------------
# LogSoftmax
# ---------------------------------------------------------------------------------------------------

def _np_log_softmax(x, axis, legacy):
    """(x - max) - log(sum(exp(x - max))) in float64 over each line (the dims from axis on with legacy)."""
    x64 = x.astype(np.float64)
    lines = x64.reshape(int(np.prod(x.shape[:axis])), -1) if legacy else x64
    ax = -1 if legacy else axis
    d = lines - lines.max(axis=ax, keepdims=True)
    return (d - np.log(np.exp(d).sum(axis=ax, keepdims=True))).reshape(x.shape)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_log_softmax_every_axis(dev, opset, axis):
    """Lines along the last axis (contiguous rows) and along others (the strided kernel), against onnxruntime
    and against float64; an offset of 1000 makes log(softmax) lose every digit near the max, which
    (x - max) - log(sum) does not."""
    shape = (3, 4, 70)  # 70 lines of 3 or 4 along axes 0 and 1: vector loops and their tails
    x = np.random.default_rng(6).standard_normal(shape).astype(np.float32) * 4 + 1000
    m = onnx_model([helper.make_node("LogSoftmax", ["x"], ["y"], axis=axis)], [("x", "float32", shape)],
                   [("y", "float32")], opset=opset)
    (got,) = check(dev, m, {"x": x}, atol=2e-5)
    np.testing.assert_allclose(got, _np_log_softmax(x, axis % 3, opset < 13), rtol=2e-6, atol=2e-6)
    assert ops(m) == ["logsoftmax"]


def test_log_softmax_does_not_overflow_and_keeps_infinities(dev):
    """Lines spanning 1e4 (exp would overflow without the max), a line with -inf (log 0 = -inf there) and
    a NaN line, against onnxruntime and float64."""
    x = np.array([[1e4, -1e4, 0.0, 9990.0], [-np.inf, 2.0, 1.0, -np.inf], [1.0, np.nan, 0.0, 3.0]], np.float32)
    m = onnx_model([helper.make_node("LogSoftmax", ["x"], ["y"])], [("x", "float32", x.shape)],
                   [("y", "float32")])
    (got,) = check(dev, m, {"x": x}, atol=1e-6)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got, _np_log_softmax(x, 1, False), rtol=1e-6, atol=1e-6)
    assert np.isneginf(got[1, [0, 3]]).all() and np.isnan(got[2]).all()


def test_log_softmax_refuses_other_dtypes_by_name():
    m = onnx_model([helper.make_node("LogSoftmax", ["x"], ["y"], name="ls")], [("x", "float64", (2, 3))],
                   [("y", "float64")])
    conftest.compile_error(m, r"unsupported dtype float64 of input 'x'.*'LogSoftmax' \(node 'ls'\)")


@pytest.mark.parametrize("ints,y_dims,match", [
    ([2, 0], (2, 3), r"axis 2 outside 0..1"),
    ([1, 2], (2, 3), r"mode 2 is not 0"),
    ([1, 0], (3, 2), r"shape"),
])
def test_log_softmax_kernel_refuses_bad_nodes_at_load(dev, ints, y_dims, match):
    tensors = [accm.Tensor("x", F32, accm.KIND_INPUT, (2, 3)), accm.Tensor("y", F32, accm.KIND_OUTPUT, y_dims)]
    node = accm.Node(accm.OPS["logsoftmax"], [0], [1], name="n1", ints=ints)
    with pytest.raises(accel.AccelError, match=f"'n1'.*logsoftmax: .*{match}"):
        dev.load(accm.write(tensors, [node], [0], [1]))
