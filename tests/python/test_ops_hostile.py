"""Device.ops and fusion scopes under hostile use: constants that differ only where a sample would not
look, a fusion scope ended on another thread, and numbers past what a float32, an int64 or the device's
tensors hold (each an accel error naming the op, the argument and the limit, never a raw traceback)."""
from __future__ import annotations

import gc
import threading

import numpy as np
import ops_reference as ref
import pytest
from conftest import rand

import accel

pytestmark = pytest.mark.emulator


def assert_every_element(got, want, what):
    got = np.asarray(got)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, reference {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.max(np.abs(want)))),
                               err_msg=what)


# -- constants are told apart by all of their bytes ------------------------------------------------------

N = 1 << 15  # 128 KiB of float32: past the 64 KiB that a constant once had to be to be hashed whole


def twins(shape, seed):
    """Two float32 arrays of ``shape`` (2**15 elements) equal at every 8th element, the ones a strided
    sample of 4096 reads, and different everywhere else."""
    a = (rand(shape, seed) * 0.3).astype(np.float32)
    b = a.copy()
    flat = b.reshape(-1)
    unsampled = np.arange(flat.size) % 8 != 0
    flat[unsampled] = 0.5 - flat[unsampled]
    assert a.size == N and np.array_equal(a.reshape(-1)[::8], flat[::8]) and not np.array_equal(a, b)
    return a, b


def test_layer_norm_keeps_a_bias_that_differs_from_the_weight_only_where_a_sample_does_not_look(dev):
    weight, bias = twins((N,), 1)
    x = rand((2, N), 2)
    got = dev.ops.layer_norm(x, (N,), weight=weight, bias=bias)
    assert_every_element(got, ref.layer_norm(x, (N,), weight, bias), "layer_norm with its own bias")


def test_two_linears_in_one_fusion_scope_keep_their_own_weights(dev):
    w1, w2 = twins((128, 256), 3)
    x = rand((4, 256), 4)
    with dev.fusion_scope():
        y1 = dev.ops.linear(x, w1)
        y2 = dev.ops.linear(x, w2)
    assert_every_element(y1, ref.linear(x, w1), "the first linear")
    assert_every_element(y2, ref.linear(x, w2), "the second linear")


def test_eager_linears_with_such_weights_each_load_their_own_model(dev):
    w1, w2 = twins((128, 256), 5)
    x = rand((3, 256), 6)
    ops = dev.ops
    assert_every_element(ops.linear(x, w1), ref.linear(x, w1), "the first weight")
    loads = ops.cache_info()["loads"]
    assert_every_element(ops.linear(x, w2), ref.linear(x, w2), "the second weight")
    assert_every_element(ops.linear(x, w1), ref.linear(x, w1), "the first weight again")
    assert ops.cache_info()["loads"] == loads + 1  # the first weight's model was found again, not rebuilt


def test_equal_constants_are_still_one_constant_of_the_model(dev):
    import onnx

    w1, _ = twins((128, 256), 7)
    x = rand((4, 256), 8)
    with dev.fusion_scope() as scope:
        y1 = dev.ops.linear(x, w1)
        y2 = dev.ops.linear(x, w1.copy())  # another array, the same bytes
    graph = onnx.load_from_string(scope.onnx()).graph
    assert len(graph.initializer) == 1
    assert_every_element(y2, np.asarray(y1), "the second linear")


# -- a fusion scope ended on another thread --------------------------------------------------------------

X = rand((2, 3), 20)


def scope_in_a_generator(dev):
    """A generator holding a fusion scope open, advanced into it; and the result recorded there."""
    def body():
        with dev.fusion_scope():
            yield dev.ops.relu(X)

    g = body()
    return g, next(g)


def on_another_thread(fn):
    errors = []

    def run():
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - handed to the test
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert not errors, errors


def assert_the_thread_works(dev):
    """Ops on this thread run at once, and a new scope opens, records and runs."""
    eager = dev.ops.sigmoid(X)
    assert_every_element(eager, ref.UNARY["sigmoid"](X), "an eager op after the scope")
    with dev.fusion_scope() as scope:
        y = dev.ops.relu(X)
    assert scope.model is not None
    assert_every_element(y, np.maximum(X, 0), "a new scope's result")


def test_a_scope_closed_on_another_thread_leaves_the_opening_thread_working(dev):
    g, pending = scope_in_a_generator(dev)
    on_another_thread(g.close)
    assert_the_thread_works(dev)
    with pytest.raises(accel.InvalidArgumentError, match="ended with GeneratorExit"):
        np.asarray(pending)


def test_a_scope_collected_on_another_thread_leaves_the_opening_thread_working(dev):
    g, pending = scope_in_a_generator(dev)
    holder = [g]
    del g
    on_another_thread(lambda: (holder.clear(), gc.collect()))  # the last reference dropped there
    assert_the_thread_works(dev)
    with pytest.raises(accel.InvalidArgumentError, match="ended with GeneratorExit"):
        np.asarray(pending)


def test_an_op_whose_scope_ends_on_another_thread_while_it_is_called_says_so(dev):
    g, _ = scope_in_a_generator(dev)

    class EndsTheScope(float):
        """A slope that closes the scope's generator on another thread while the op checks it."""

        def __float__(self):
            on_another_thread(g.close)
            return 0.25

    with pytest.raises(accel.InvalidArgumentError, match=r"leaky_relu: the fusion scope it was called in ended"):
        dev.ops.leaky_relu(X, EndsTheScope(0.25))
    assert_the_thread_works(dev)
