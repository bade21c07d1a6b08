"""Device.fusion_scope(): the ops called inside run as ONE job of ONE model when the block ends, fused as the
compiler fuses (conv + bias + relu one node when the conv's result is dropped); results are PendingTensors,
unreadable inside the scope and DeviceTensor-like after it; an exception inside runs nothing."""
from __future__ import annotations

import gc
import re
import threading

import numpy as np
import ops_reference as ref
import pytest
from conftest import rand

import accel
from accel import compiler

pytestmark = pytest.mark.emulator

X = rand((1, 16, 32, 32), 0)
W = (rand((16, 16, 3, 3), 1) * 0.2).astype(np.float32)
B = rand((16,), 2)


def jobs(dev):
    return dev.stats()["jobs_submitted"]


def runtime_nodes(scope):
    """(op, fused activation) per node of the model the scope compiled."""
    nodes = compiler.accm.read(compiler.compile_model(scope.onnx()))["nodes"]
    return [(n["op_name"], n["activation_name"]) for n in nodes]


def eager_seed(dev):
    ops = dev.ops
    conv = ops.conv2d(X, W, B, padding=1)
    relu = ops.relu(conv)
    return np.asarray(conv), np.asarray(relu), np.asarray(ops.max_pool2d(relu, 2))


def test_the_seed_sequence_runs_as_one_job_and_equals_eager(dev):
    _, _, want = eager_seed(dev)
    ops = dev.ops
    before = jobs(dev)
    with dev.fusion_scope() as scope:
        conv = ops.conv2d(X, W, B, padding=1)
        relu = ops.relu(conv)
        pool = ops.max_pool2d(relu, 2)
        del conv, relu  # only the pool is wanted: the compiler may fuse the rest away
        assert jobs(dev) == before  # recorded, not run
    assert jobs(dev) - before == 1
    assert isinstance(pool, accel.PendingTensor) and pool.done
    assert pool.shape == (1, 16, 16, 16) and pool.dtype == np.float32 and pool.device is dev
    np.testing.assert_allclose(np.asarray(pool), want, rtol=1e-5, atol=1e-5)
    assert runtime_nodes(scope) == [("conv", "relu"), ("maxpool", "none")]
    assert len(scope.model.outputs) == 1


def test_a_dropped_intermediate_fuses_conv_bias_relu_into_one_node(dev):
    ops = dev.ops
    with dev.fusion_scope() as scope:
        y = ops.relu(ops.conv2d(X, W, B, padding=1))
    assert runtime_nodes(scope) == [("conv", "relu")]
    np.testing.assert_allclose(np.asarray(y), eager_seed(dev)[1], rtol=1e-5, atol=1e-5)


def test_kept_intermediates_are_outputs_with_their_values(dev):
    conv_want, relu_want, pool_want = eager_seed(dev)
    ops = dev.ops
    before = jobs(dev)
    with dev.fusion_scope() as scope:
        conv = ops.conv2d(X, W, B, padding=1)
        relu = ops.relu(conv)
        pool = ops.max_pool2d(relu, 2)
    assert jobs(dev) - before == 1
    assert len(scope.model.outputs) == 3
    for got, want in ((conv, conv_want), (relu, relu_want), (pool, pool_want)):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    # The conv's output is wanted, so the relu is not fused into it.
    assert ("conv", "none") in runtime_nodes(scope)


def test_a_pending_tensor_is_zero_copy_and_forwards_to_its_device_tensor(dev):
    with dev.fusion_scope():
        y = dev.ops.relu(X)
    t = y.tensor
    assert type(t) is accel.DeviceTensor and t.shape == y.shape
    a = np.asarray(y)
    a[0, 0, 0, 0] = 123.0
    assert np.asarray(t)[0, 0, 0, 0] == 123.0 and y.numpy()[0, 0, 0, 0] == 123.0
    assert np.array(y)[0, 0, 0, 0] == 123.0  # __array__ (a copy)
    del y, t
    gc.collect()
    assert a[0, 0, 0, 0] == 123.0  # the view keeps the memory alive


def test_reading_inside_the_scope_raises(dev, tiny):
    with dev.fusion_scope():
        y = dev.ops.relu(rand((1, 16)))
        readers = {"np.asarray": np.asarray, "np.array": np.array, "numpy()": lambda p: p.numpy(),
                   "tensor": lambda p: p.tensor, "__array_interface__": lambda p: p.__array_interface__,
                   "__dlpack__": lambda p: p.__dlpack__(), "Model.run": tiny.run,
                   "Model.run list": lambda p: tiny.run([p])}
        for what, read in readers.items():
            with pytest.raises(accel.InvalidArgumentError, match="fusion-scope result, not computed until the "
                                                                 "scope ends") as e:
                read(y)
            assert isinstance(e.value, accel.AccelError), what
        assert not y.done


def test_an_exception_inside_discards_the_recording_and_runs_nothing(dev):
    before = jobs(dev)
    loads = dev.ops.cache_info()["loads"]
    with pytest.raises(RuntimeError, match="stop"), dev.fusion_scope() as scope:
        y = dev.ops.relu(dev.ops.conv2d(X, W, B, padding=1))
        raise RuntimeError("stop")
    assert jobs(dev) == before and dev.ops.cache_info()["loads"] == loads
    assert scope.model is None and scope.onnx() is None
    with pytest.raises(accel.InvalidArgumentError, match=r"its fusion scope ended with RuntimeError \(stop\), so "
                                                         r"nothing ran"):
        np.asarray(y)
    with pytest.raises(accel.InvalidArgumentError, match="fusion scope ended with RuntimeError"):
        dev.ops.relu(y)


def test_a_bad_call_caught_inside_leaves_no_trace(dev):
    with dev.fusion_scope() as scope:
        y = dev.ops.relu(X)
        with pytest.raises(accel.ShapeError):
            dev.ops.conv2d(y, rand((8, 3, 3, 3)))
        z = dev.ops.sigmoid(y)
    np.testing.assert_allclose(np.asarray(z), ref.sigmoid(np.maximum(X, 0)), rtol=1e-5, atol=1e-6)
    assert [op for op, _ in runtime_nodes(scope)] == ["activation", "activation"]


def test_a_pending_tensor_after_the_scope_feeds_model_run_and_ops(dev, tiny):
    x = rand((1, 16), 3)
    with dev.fusion_scope():
        y = dev.ops.mul(x, 2.0)
    want = tiny.run(x * 2)[0]
    np.testing.assert_allclose(tiny.run(y)[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tiny.run([y])[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tiny.run({tiny.inputs[0].name: y})[0], want, rtol=1e-5, atol=1e-6)
    z = dev.ops.add(y, 1.0)  # eager, after the scope
    np.testing.assert_allclose(np.asarray(z), x * 2 + 1, rtol=1e-6)
    with dev.fusion_scope():
        z2 = dev.ops.add(y, 1.0)  # a finished result is an input of a later scope
    np.testing.assert_allclose(np.asarray(z2), x * 2 + 1, rtol=1e-6)


def test_a_numpy_input_is_read_when_the_op_is_called(dev):
    x = X.copy()
    with dev.fusion_scope():
        y = dev.ops.relu(x)
        x[...] = -1.0
    np.testing.assert_array_equal(np.asarray(y), np.maximum(X, 0))


def test_a_weight_changed_inside_the_scope_after_the_call_is_not_seen(dev):
    w = W.copy()
    with dev.fusion_scope():
        y = dev.ops.conv2d(X, w, B, padding=1)
        w[...] = 0.0
    np.testing.assert_allclose(np.asarray(y), eager_seed(dev)[0], rtol=1e-5, atol=1e-5)


def test_the_fused_model_is_cached_by_its_graph(dev):
    def block():
        with dev.fusion_scope():
            pool = dev.ops.max_pool2d(dev.ops.relu(dev.ops.conv2d(X, W, B, padding=1)), 2)
        return pool

    block()
    info = dev.ops.cache_info()
    before = jobs(dev)
    p = block()
    after = dev.ops.cache_info()
    assert after["loads"] == info["loads"] and after["hits"] == info["hits"] + 1
    assert jobs(dev) - before == 1
    np.testing.assert_allclose(np.asarray(p), eager_seed(dev)[2], rtol=1e-5, atol=1e-5)


def test_an_mlp_in_a_scope(dev):
    x = rand((4, 32), 4)
    w1, b1 = (rand((64, 32), 5) * 0.2).astype(np.float32), rand((64,), 6)
    w2, b2 = (rand((10, 64), 7) * 0.2).astype(np.float32), rand((10,), 8)
    with dev.fusion_scope() as scope:
        h = dev.ops.gelu(dev.ops.linear(x, w1, b1))
        y = dev.ops.softmax(dev.ops.linear(h, w2, b2), dim=-1)
        del h
    want = ref.softmax(ref.linear(ref.gelu(ref.linear(x, w1, b1)), w2, b2), -1)
    np.testing.assert_allclose(np.asarray(y), want, rtol=1e-4, atol=1e-6)
    assert ("gemm", "gelu") in runtime_nodes(scope)


def test_an_empty_scope_and_a_scope_whose_results_were_all_dropped_run_nothing(dev):
    before = jobs(dev)
    with dev.fusion_scope() as scope:
        pass
    assert scope.model is None
    with dev.fusion_scope() as scope:
        dev.ops.relu(X)
    assert scope.model is None and jobs(dev) == before


def test_scopes_do_not_nest_and_run_once(dev):
    scope = dev.fusion_scope()
    with scope:
        y = dev.ops.relu(X)
        with pytest.raises(accel.InvalidArgumentError, match="fusion scopes do not nest"), dev.fusion_scope():
            pass
    assert y.done  # the outer scope still ran
    with pytest.raises(accel.InvalidArgumentError, match="a fusion scope runs once"), scope:
        pass


def test_tensors_of_another_device_inside_a_scope_name_both_devices(dev):
    with accel.open("emu") as other:
        t = other.tensor(X)
        with dev.fusion_scope():
            with pytest.raises(accel.InvalidArgumentError) as e:
                dev.ops.relu(t)
            mine = dev.ops.relu(X)
        msg = str(e.value)
        assert f"device #{other._number} 'emu'" in msg and f"device #{dev._number} '{dev.uri}'" in msg, msg
        with other.fusion_scope(), pytest.raises(accel.InvalidArgumentError,
                                                 match=re.escape(f"device #{dev._number}")):
            other.ops.relu(mine)


def test_a_pending_tensor_of_an_open_scope_is_refused_by_eager_ops_of_another_thread(dev):
    found = {}
    with dev.fusion_scope():
        y = dev.ops.relu(X)

        def other_thread():
            try:
                dev.ops.relu(y)
            except accel.InvalidArgumentError as e:
                found["error"] = str(e)
            found["eager"] = dev.ops.relu(X)  # not recorded: the scope is this thread's

        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert "not computed until the scope ends" in found["error"]
    assert type(found["eager"]) is accel.DeviceTensor
    np.testing.assert_array_equal(np.asarray(found["eager"]), np.asarray(y))
