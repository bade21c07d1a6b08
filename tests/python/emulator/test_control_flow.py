"""Control flow: an If whose condition is a constant (here computed from a shape, as exporters emit them) runs
the branch it takes, its own initializers, nested Ifs and reads of outer tensors included; an If deciding at run
time runs both branches and selects (one on a flag input compiles per value). Scan and Loop (of a constant trip
count) are unrolled and match onnxruntime; a Loop whose trip count is an input compiles per value of it through
Device.load; past the unroll bound, a clear refusal."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import onnx_model, run_ort
from onnx import TensorProto, helper, numpy_helper

from accel import compiler

pytestmark = pytest.mark.emulator


def branch(name, nodes, outputs, inits=()):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                                               for o in outputs],
                             [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits])


def shape_if_model(width, nested=False):
    """y = x * 2 + c_then if x's last dim is 4, else Relu(w) - x (w read only inside the branch); `nested`: the
    then branch holds another If on the same condition."""
    then_nodes = [helper.make_node("Mul", ["x", "two"], ["t0"]), helper.make_node("Add", ["t0", "c_then"], ["t1"])]
    then_out = "t1"
    if nested:
        inner = helper.make_node("If", ["cond"], ["t2"], name="inner",
                                 then_branch=branch("in_then", [helper.make_node("Neg", ["t1"], ["n0"])], ["n0"]),
                                 else_branch=branch("in_else", [helper.make_node("Abs", ["t1"], ["a0"])], ["a0"]))
        then_nodes.append(inner)
        then_out = "t2"
    then_g = branch("then", then_nodes, [then_out], [("two", [2.0]), ("c_then", [0.5])])
    else_g = branch("else", [helper.make_node("Relu", ["w"], ["e0"]), helper.make_node("Sub", ["e0", "x"], ["e1"])],
                    ["e1"])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "last"], ["d"], axis=0),
             helper.make_node("Equal", ["d", "four"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], name="the_if", then_branch=then_g, else_branch=else_g)]
    inits = {"last": np.array(-1, np.int64), "four": np.array(4, np.int64),
             "w": np.linspace(-1, 1, width).astype(np.float32)}
    return onnx_model(nodes, [("x", "float32", (3, width))], [("y", "float32")], inits, opset=17)


@pytest.mark.parametrize("width, nested", [(4, False), (5, False), (4, True)])
def test_an_if_of_a_constant_condition_runs_its_branch(dev, width, nested):
    m = shape_if_model(width, nested)
    x = np.random.default_rng(width).standard_normal((3, width)).astype(np.float32)
    (want,) = run_ort(m, {"x": x})
    (got,) = dev.load(m.SerializeToString()).run(x)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert [u.supported for u in compiler.coverage.of_model(m) if u.op == "If"] == [True]


def _run_time_if(then_nodes, then_out, else_nodes, else_out):
    then_g = branch("then", then_nodes, [then_out])
    else_g = branch("else", else_nodes, [else_out])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0), helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], name="decides", then_branch=then_g, else_branch=else_g)]
    return onnx_model(nodes, [("x", "float32", (2, 3))], [("y", "float32")], {"zero": np.array(0, np.float32)},
                      opset=17)


def test_an_if_deciding_at_run_time_runs_both_branches_and_selects(dev):
    m = _run_time_if([helper.make_node("Neg", ["x"], ["a"])], "a", [helper.make_node("Abs", ["x"], ["b"])], "b")
    model = dev.load(m.SerializeToString())
    for sign in (1, -1):
        x = (np.random.default_rng(5).random((2, 3)) * sign).astype(np.float32)
        (want,) = run_ort(m, {"x": x})
        (got,) = model.run(x)
        np.testing.assert_array_equal(np.asarray(got), want)
    assert [u.supported for u in compiler.coverage.of_model(m) if u.op == "If"] == [True]


def test_an_if_deciding_at_run_time_between_shapes_is_refused():
    flat = [helper.make_node("Flatten", ["x"], ["f"], axis=0)]
    m = _run_time_if([helper.make_node("Neg", ["x"], ["a"])], "a", flat, "f")
    with pytest.raises(compiler.CompileError, match=r"unsupported an If deciding at run time between outputs of other "
                                                    r"shapes or dtypes: then float32\(2, 3\), else float32\(1, 6\)"):
        compiler.compile_model(m)


def test_an_if_on_a_flag_input_compiles_per_value(dev):
    then_g = branch("then", [helper.make_node("Neg", ["x"], ["a"])], ["a"])
    else_g = branch("else", [helper.make_node("Abs", ["x"], ["b"])], ["b"])
    m = onnx_model([helper.make_node("If", ["flag"], ["y"], name="decides", then_branch=then_g, else_branch=else_g)],
                   [("x", "float32", (2, 3)), ("flag", "bool", ())], [("y", "float32")], opset=17)
    with pytest.raises(compiler.RunTimeConditionError, match=r"condition \('flag'\) must be a constant .* the inputs "
                                                             r"flag alone") as e:
        compiler.compile_model(m)
    assert e.value.condition == "flag"
    model = dev.load(m.SerializeToString())
    x = np.random.default_rng(6).standard_normal((2, 3)).astype(np.float32)
    for flag in (True, False):
        feeds = {"x": x, "flag": np.array(flag)}
        np.testing.assert_array_equal(np.asarray(model.run(feeds)[0]), run_ort(m, feeds)[0])
    assert model.value_inputs == ["flag"]


def _graph(name, nodes, inputs, outputs, inits=()):
    return helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                             [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
                             [numpy_helper.from_array(np.asarray(v), k) for k, v in inits])


F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def scan_model(in_axis=0, in_dir=0, out_axis=0, out_dir=0):
    """A running sum over the scan axis of x (3, 4, 5) with a state of one row, and each step's tanh(state * w) as
    a scan output."""
    body = _graph("body", [helper.make_node("Add", ["acc", "row"], ["acc1"]),
                           helper.make_node("Mul", ["acc1", "w"], ["m"]),
                           helper.make_node("Tanh", ["m"], ["out"])],
                  [("acc", F, None), ("row", F, None)], [("acc1", F), ("out", F)])
    node = helper.make_node("Scan", ["init", "x"], ["final", "ys"], body=body, num_scan_inputs=1,
                            scan_input_axes=[in_axis], scan_input_directions=[in_dir], scan_output_axes=[out_axis],
                            scan_output_directions=[out_dir])
    row = [d for k, d in enumerate((3, 4, 5)) if k != in_axis]
    return onnx_model([node], [("init", "float32", row), ("x", "float32", (3, 4, 5))],
                      [("final", "float32"), ("ys", "float32")], {"w": np.float32(0.3)}, opset=17)


@pytest.mark.parametrize("in_axis, in_dir, out_axis, out_dir", [(0, 0, 0, 0), (1, 1, 0, 0), (2, 0, -1, 1),
                                                                (0, 1, 1, 1)])
def test_scan_is_unrolled(dev, in_axis, in_dir, out_axis, out_dir):
    m = scan_model(in_axis, in_dir, out_axis, out_dir)
    rng = np.random.default_rng(in_axis)
    row = [d for k, d in enumerate((3, 4, 5)) if k != in_axis]
    feeds = {"init": rng.standard_normal(row).astype(np.float32),
             "x": rng.standard_normal((3, 4, 5)).astype(np.float32)}
    want = run_ort(m, feeds)
    got = dev.load(m.SerializeToString()).run(feeds)
    for g, w in zip(got, want):
        assert np.asarray(g).shape == w.shape
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)


def loop_model(trip=None):
    """for i in range(M): v = v * 0.5 + i; each iteration's v * v a scan output. M a constant (`trip`) or the
    input 'M'."""
    body = _graph("body", [helper.make_node("Cast", ["i"], ["fi"], to=F),
                           helper.make_node("Mul", ["v", "half"], ["h"]),
                           helper.make_node("Add", ["h", "fi"], ["v1"]),
                           helper.make_node("Mul", ["v1", "v1"], ["sq"]),
                           helper.make_node("Identity", ["go"], ["go_on"])],
                  [("i", I64, []), ("go", B, []), ("v", F, None)], [("go_on", B), ("v1", F), ("sq", F)],
                  [("half", np.float32(0.5))])
    node = helper.make_node("Loop", ["M", "", "v0"], ["v", "squares"], name="the_loop", body=body)
    inputs = [("v0", "float32", (2, 3))] + ([("M", "int64", ())] if trip is None else [])
    inits = {} if trip is None else {"M": np.array(trip, np.int64)}
    return onnx_model([node], inputs, [("v", "float32"), ("squares", "float32")], inits, opset=17)


def test_a_loop_of_a_constant_trip_count_is_unrolled(dev):
    m = loop_model(trip=3)
    v0 = np.random.default_rng(3).standard_normal((2, 3)).astype(np.float32)
    want = run_ort(m, {"v0": v0})
    got = dev.load(m.SerializeToString()).run({"v0": v0})
    assert np.asarray(got[1]).shape == (3, 2, 3)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)


def test_a_loop_whose_trip_count_is_an_input_compiles_per_value(dev):
    m = loop_model()
    with pytest.raises(compiler.RunTimeConditionError, match=r"trip count \('M'\) must be a constant") as e:
        compiler.compile_model(m)
    assert e.value.condition == "M"
    model = dev.load(m.SerializeToString())
    v0 = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    for trip in (2, 4):
        feeds = {"v0": v0, "M": np.array(trip, np.int64)}
        got = model.run(feeds)
        for g, w in zip(got, run_ort(m, feeds)):
            assert np.asarray(g).shape == w.shape
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)


def test_a_loop_that_may_stop_early_or_unrolls_too_far_is_refused():
    m = loop_model(trip=3)
    body = m.graph.node[0].attribute[0].g
    body.node[-1].CopyFrom(helper.make_node("Less", ["i", "M_inner"], ["go_on"]))
    body.initializer.append(numpy_helper.from_array(np.array(1, np.int64), "M_inner"))
    with pytest.raises(compiler.CompileError, match=r"unsupported a condition the body computes .*'the_loop'"):
        compiler.compile_model(m)
    from accel.compiler.lower import control
    m = loop_model(trip=control.MAX_UNROLLED_NODES)
    with pytest.raises(compiler.CompileError, match=r"unsupported 50000 iterations of 5 nodes \(unrolled, past 50000"):
        compiler.compile_model(m)


def test_a_run_time_if_of_scalars_on_a_one_element_condition(dev):
    # ONNX allows a condition of one element of any rank; where's operands may not outrank its output.
    then_g = helper.make_graph([helper.make_node("ReduceSum", ["x"], ["a"], keepdims=0)], "then", [],
                               [helper.make_tensor_value_info("a", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("ReduceMax", ["x"], ["b"], keepdims=0)], "else", [],
                               [helper.make_tensor_value_info("b", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("ReduceMin", ["x"], ["s"], keepdims=0),
             helper.make_node("Unsqueeze", ["s", "zero_axis"], ["s1"]),
             helper.make_node("Greater", ["s1", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    m = onnx_model(nodes, [("x", "float32", (2, 3))], [("y", "float32")],
                   {"zero": np.array([0], np.float32), "zero_axis": np.array([0], np.int64)}, opset=17)
    model = dev.load(m.SerializeToString())
    for shift in (1.0, -1.0):
        x = (np.random.default_rng(7).random((2, 3)) + shift).astype(np.float32)
        np.testing.assert_allclose(np.asarray(model.run(x)[0]), run_ort(m, {"x": x})[0], rtol=1e-6)
