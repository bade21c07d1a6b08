"""The Reduce family's later forms against onnxruntime, element by element: ReduceLogSum (the log of ReduceSum,
over every axes combination of a rank-4 tensor, keepdims 0 and 1, the axes attribute of opset 13 and the input
of opset 18, noop_with_empty_axes, NaN, infinities and the log of a negative or zero sum), ReduceMax and
ReduceMin of bool (opset 20: any and all, exact), and the refusal of an empty reduction (a dim of 0: accel's
dims are >= 1)."""
from __future__ import annotations

import itertools

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
from accel import compiler

pytestmark = pytest.mark.emulator


@pytest.fixture(scope="module")
def emu():
    with accel.open("emu") as d:
        yield d


def reduce_model(op, shape, dtype, axes, keepdims=1, opset=18, noop=None):
    inputs, inits, attrs = ["x"], [], {"keepdims": keepdims}
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    if axes is not None:
        if opset >= 18:
            inputs.append("axes")
            inits.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        else:
            attrs["axes"] = list(axes)
    g = helper.make_graph([helper.make_node(op, inputs, ["y"], name="r1", **attrs)], "r",
                          [helper.make_tensor_value_info("x", dtype, list(shape))],
                          [helper.make_tensor_value_info("y", dtype, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    return m


def both(emu, m, x):
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = np.asarray(emu.load(compiler.compile_model(m)).run({"x": x})[0])
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape, got.dtype, want.dtype)
    return got, want


SHAPE = (2, 3, 4, 5)
AXES = [list(c) for r in range(1, 5) for c in itertools.combinations(range(4), r)] + [[-1], [-3, 3]]


@pytest.mark.parametrize("keepdims", [1, 0])
@pytest.mark.parametrize("axes", AXES, ids=str)
def test_reduce_log_sum(emu, axes, keepdims):
    x = np.random.default_rng(len(axes)).uniform(0.01, 3.0, SHAPE).astype(np.float32)
    got, want = both(emu, reduce_model("ReduceLogSum", SHAPE, TensorProto.FLOAT, axes, keepdims), x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_reduce_log_sum_is_one_reduce_with_log_fused():
    from accel.compiler import accm

    t = accm.read(compiler.compile_model(reduce_model("ReduceLogSum", SHAPE, TensorProto.FLOAT, [1, 2], 1)))
    assert [(n["op_name"], n["activation_name"]) for n in t["nodes"]] == [("reduce", "log")]


@pytest.mark.parametrize("opset", [13, 18])
def test_reduce_log_sum_default_axes_and_attribute_form(emu, opset):
    x = np.random.default_rng(3).uniform(0.0, 2.0, SHAPE).astype(np.float32)
    for axes, keep in ((None, 1), (None, 0), ([1, 3], 0), ([-2], 1)):
        got, want = both(emu, reduce_model("ReduceLogSum", SHAPE, TensorProto.FLOAT, axes, keep, opset), x)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)


def test_reduce_log_sum_noop_is_the_elementwise_log(emu):
    x = np.array([[0.5, 2.0, 0.0], [-1.0, np.inf, np.nan]], np.float32)
    got, want = both(emu, reduce_model("ReduceLogSum", x.shape, TensorProto.FLOAT, None, noop=1), x)
    np.testing.assert_array_equal(got, want)  # log(0) = -inf, log(-1) = NaN, as onnxruntime


def test_reduce_log_sum_nan_inf_and_non_positive_sums(emu):
    x = np.array([[1.0, 2.0, -3.0], [-1.0, -2.0, 0.5], [np.nan, 1.0, 1.0], [np.inf, 1.0, 1.0], [-np.inf, 1, 1],
                  [0.0, -0.0, 0.0]], np.float32)
    got, want = both(emu, reduce_model("ReduceLogSum", x.shape, TensorProto.FLOAT, [1], 0), x)
    np.testing.assert_array_equal(got, want)  # log(0) = -inf, log(< 0) and NaN give NaN, log(inf) = inf


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
@pytest.mark.parametrize("keepdims", [1, 0])
@pytest.mark.parametrize("axes", [[0], [1], [2], [0, 2], [0, 1, 2], None, [-1]], ids=str)
def test_bool_max_min(emu, op, axes, keepdims):
    shape = (3, 4, 5)
    rng = np.random.default_rng(5)
    x = rng.random(shape) < 0.7
    x[0] = True
    x[1, :, 0] = False
    got, want = both(emu, reduce_model(op, shape, TensorProto.BOOL, axes, keepdims, opset=20), x)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


def test_other_dtypes_are_refused_by_name():
    m = reduce_model("ReduceMax", (2, 3), TensorProto.INT32, [1], opset=20)
    with pytest.raises(compiler.CompileError, match=r"unsupported dtype int32.*'ReduceMax' \(node 'r1'\)"):
        compiler.compile_model(m)


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceLogSum", "ReduceMax"])
def test_empty_reduction_is_refused_by_name(op):
    """A reduction over a dim of 0 (the node tests' empty sets, their data a constant: accel's dims are >= 1; with
    constant axes too, the compiler computes it and the model is refused for having no runtime input)."""
    g = helper.make_graph([helper.make_node(op, ["e", "axes"], ["y"], name="r1", keepdims=1)], "r",
                          [helper.make_tensor_value_info("axes", TensorProto.INT64, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.zeros((2, 0, 4), np.float32), "e")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(compiler.CompileError, match=rf"unsupported empty reduction: input 'e' has shape \(2, 0, 4\)"
                                                    rf".*'{op}' \(node 'r1'\)"):
        compiler.compile_model(m)
