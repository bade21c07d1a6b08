"""The Ray suite (tox -e ray): one local Ray cluster for the session, started here with 2 CPUs and one unit of a
made-up board resource ("board"), as a board's node would declare "bpu"; Ray Data keeping row order, with its
progress bars off. Models: the shipped tiny CNN, and a model with a batch of 4 made here."""
from __future__ import annotations

import numpy as np
import pytest
import ray
from onnx import TensorProto, helper, numpy_helper

CPUS = 2


@pytest.fixture(scope="session", autouse=True)
def cluster():
    ray.init(num_cpus=CPUS, resources={"board": 1}, include_dashboard=False, configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.execution_options.preserve_order = True
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def batch4_path(tmp_path_factory):
    """x[4, 16] -> y[4, 8] = relu(x @ W)."""
    w = np.random.default_rng(1).standard_normal((16, 8)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])], "b4",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
                          [numpy_helper.from_array(w, "w")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path_factory.mktemp("models") / "batch4.onnx"
    path.write_bytes(m.SerializeToString())
    return path


@pytest.fixture(scope="session")
def slow_path(tmp_path_factory):
    """x[1, 256, 256] -> x @ Q @ Q ... (8 MatMuls by one orthogonal Q): about 10 ms a row on one CPU, so that a run
    of a few hundred rows outlasts starting an actor."""
    q, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((256, 256)))
    nodes, prev = [], "x"
    for i in range(8):
        out = "y" if i == 7 else f"h{i}"
        nodes.append(helper.make_node("MatMul", [prev, "q"], [out]))
        prev = out
    g = helper.make_graph(nodes, "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 256, 256])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256, 256])],
                          [numpy_helper.from_array(q.astype(np.float32), "q")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path_factory.mktemp("models") / "slow.onnx"
    path.write_bytes(m.SerializeToString())
    return path
