"""Control flow known at compile time: an If whose condition is a constant (here computed from a shape, as
exporters emit them) runs the branch it takes, its own initializers, nested Ifs and reads of outer tensors
included; an If deciding at run time is refused, named in the one unsupported-ops error."""
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


def test_an_if_deciding_at_run_time_is_named_as_unsupported():
    then_g = branch("then", [helper.make_node("Neg", ["x"], ["a"])], ["a"])
    else_g = branch("else", [helper.make_node("Abs", ["x"], ["b"])], ["b"])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0), helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], name="decides", then_branch=then_g, else_branch=else_g),
             helper.make_node("NonZero", ["x"], ["nz"], name="nz")]
    m = onnx_model(nodes, [("x", "float32", (2, 3))], [("y", "float32"), ("nz", "int64")],
                   {"zero": np.array(0, np.float32)}, opset=17)
    with pytest.raises(compiler.UnsupportedOpsError, match=r"unsupported ops \(2\): 'If' \(node 'decides'\), "
                                                           r"'NonZero' \(node 'nz'\)"):
        compiler.compile_model(m)
    m.graph.node.pop()  # NonZero gone: the If alone, refused where it is lowered, saying why
    m.graph.output.pop()
    with pytest.raises(compiler.UnsupportedOpsError, match="'If' \\(node 'decides'\\)"):
        compiler.compile_model(m)
