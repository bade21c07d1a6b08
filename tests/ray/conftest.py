"""The Ray suite (tox -e ray): one local Ray cluster for the session, started here with 2 CPUs and one unit of a
made-up board resource ("board"), as a board's node would declare "bpu"; Ray Data keeping row order, with its
progress bars off. Models: the shipped tiny CNN, and two made here (a batch of 4; a slow one)."""
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


def write_model(folder, name, nodes, x_shape, y_shape, inits):
    """An ONNX model x -> y (float32, of the shapes given) written to ``folder/name.onnx``; its path."""
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))],
                          [numpy_helper.from_array(a, k) for k, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = folder / f"{name}.onnx"
    path.write_bytes(m.SerializeToString())
    return path


@pytest.fixture(scope="session")
def batch4_path(tmp_path_factory):
    """x[4, 16] -> y[4, 8] = relu(x @ W)."""
    w = np.random.default_rng(1).standard_normal((16, 8)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Relu", ["m"], ["y"])]
    return write_model(tmp_path_factory.mktemp("models"), "batch4", nodes, (4, 16), (4, 8), {"w": w})


@pytest.fixture(scope="session")
def slow_path(tmp_path_factory):
    """x[1, 256, 256] -> x @ Q @ Q ... (8 MatMuls by one orthogonal Q): about 10 ms a row on one CPU, so that a run
    of a few hundred rows outlasts starting an actor."""
    q, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((256, 256)))
    nodes = [helper.make_node("MatMul", ["x" if i == 0 else f"h{i - 1}", "q"], ["y" if i == 7 else f"h{i}"])
             for i in range(8)]
    return write_model(tmp_path_factory.mktemp("models"), "slow", nodes, (1, 256, 256), (1, 256, 256),
                       {"q": q.astype(np.float32)})
