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


# -- numbers past what the model holds -------------------------------------------------------------------

X4 = rand((1, 2, 4, 4), 30)
W4 = rand((2, 2, 3, 3), 31)
EMPTY = np.zeros((0, 2), np.float32)
GEOMETRY = r"at most 2\*\*20 \(the largest window geometry the device compiles\), got "
INT64 = r"at most 2\*\*63 - 1 \(an int64\), got "
ELEMENTS = r"at most 2\*\*31 - 1 elements"
FLOAT32 = r"is past the float32 range \(magnitude at most 3.4028235e\+38\)"
HUGE = 10**400  # past float64 too
VAST = 10**5000  # its decimal digits are past what str() of an int gives

# (op, tensor arguments, other arguments, error, message)
HOSTILE = [
    *[("interpolate", [X4], dict(scale_factor=v), accel.InvalidArgumentError,
       r"^interpolate: scale_factor must be finite, got (inf|nan)$") for v in (float("inf"), float("nan"))],
    ("interpolate", [X4], dict(scale_factor=(1.0, float("-inf"))), accel.InvalidArgumentError,
     r"^interpolate: scale_factor must be finite, got -inf$"),
    ("interpolate", [X4], dict(scale_factor=-1.0), accel.InvalidArgumentError,
     r"^interpolate: scale_factor must be > 0, got -1.0$"),
    *[("interpolate", [X4], dict(scale_factor=v), accel.InvalidArgumentError,
       rf"^interpolate: scale_factor=.* {FLOAT32}$") for v in (1e300, HUGE, np.float64(1e39))],
    ("interpolate", [X4], dict(scale_factor=3e38), accel.InvalidArgumentError,
     rf"^interpolate: scale_factor 3e\+38 makes a result past float32 .*{ELEMENTS}"),
    ("interpolate", [X4], dict(scale_factor=1e10), accel.InvalidArgumentError,
     rf"^interpolate: scale_factor 10000000000.0 of input of shape \(1, 2, 4, 4\) makes a result of shape "
     rf"\(1, 2, 40000000000, 40000000000\) \(3200000000000000000000 elements\); {ELEMENTS}"),
    *[("interpolate", [X4], dict(size=v), accel.InvalidArgumentError, rf"^interpolate: size must be {INT64}")
      for v in (2**63, (4, HUGE), np.uint64(2**64 - 1))],
    ("interpolate", [X4], dict(size=2**40), accel.InvalidArgumentError,
     rf"^interpolate: size 1099511627776 makes a result of shape .*; {ELEMENTS}"),
    *[("conv2d", [X4], dict(weight=W4, **{name: v}), accel.InvalidArgumentError, rf"^conv2d: {name} must be {GEOMETRY}")
      for name in ("stride", "padding", "dilation") for v in (2**63, 2**62, (1, HUGE), 2**20 + 1)],
    ("conv2d", [X4], dict(weight=W4, padding=2**20), accel.InvalidArgumentError,
     rf"^conv2d: input of shape \(1, 2, 4, 4\) with padding 1048576\+1048576, 1048576\+1048576 makes a result of "
     rf"shape \(1, 2, 2097154, 2097154\) .*; {ELEMENTS}"),
    ("conv2d", [X4], dict(weight=W4, groups=2**63), accel.InvalidArgumentError, rf"^conv2d: groups must be {INT64}"),
    ("conv2d", [X4], dict(weight=W4, padding=np.array([1, 1])), TypeError,
     r"^conv2d: padding must be an int or a pair of ints, not array\(\[1, 1\]\)$"),
    *[(op, [X4], dict(kernel_size=2, **{name: v}), accel.InvalidArgumentError, rf"^{op}: {name} must be {GEOMETRY}")
      for op, name in (("max_pool2d", "stride"), ("max_pool2d", "dilation"), ("avg_pool2d", "stride"),
                       ("avg_pool2d", "padding")) for v in (2**63, 2**64)],
    ("max_pool2d", [X4], dict(kernel_size=HUGE), accel.InvalidArgumentError,
     rf"^max_pool2d: kernel_size must be {GEOMETRY}an int of 1329 bits$"),
    ("max_pool2d", [X4], dict(kernel_size=2, stride=np.array([1, 1])), TypeError,
     r"^max_pool2d: stride must be an int or a pair of ints"),
    *[(op, [X4], dict(other=v), accel.InvalidArgumentError, rf"^{op}: other=.* {FLOAT32}$")
      for op in ("add", "sub", "mul", "div") for v in (HUGE, 1e300, -1e39, 2**200, np.float64(1e300),
                                                         np.longdouble("1e4000"))],
    *[("leaky_relu", [X4], dict(negative_slope=v), accel.InvalidArgumentError,
       rf"^leaky_relu: negative_slope=.* {FLOAT32}$") for v in (HUGE, 1e300)],
    *[("layer_norm", [X4], dict(normalized_shape=4, eps=v), accel.InvalidArgumentError,
       r"^layer_norm: eps must be finite, got (inf|nan)$") for v in (float("inf"), float("nan"))],
    *[("layer_norm", [X4], dict(normalized_shape=4, eps=v), accel.InvalidArgumentError,
       rf"^layer_norm: eps=.* {FLOAT32}$") for v in (1e300, HUGE)],
    ("layer_norm", [X4], dict(normalized_shape=4, eps=1e-50), accel.InvalidArgumentError,
     r"^layer_norm: eps must be > 0 as a float32 \(at least 1.4e-45\), got 1e-50$"),
    ("layer_norm", [X4], dict(normalized_shape=(HUGE,)), accel.InvalidArgumentError,
     rf"^layer_norm: normalized_shape must be {INT64}an int of 1329 bits$"),
    *[("reshape", [EMPTY], dict(shape=s), accel.InvalidArgumentError, rf"^reshape: shape must be {INT64}")
      for s in ((2**63, 0), (2**70, -1), [VAST])],
    ("softmax", [X4], dict(dim=VAST), accel.InvalidArgumentError,
     r"^softmax: dim=an int of 16610 bits is out of range for input of shape \(1, 2, 4, 4\)"),
    ("gelu", [X4], dict(approximate=VAST), accel.InvalidArgumentError,
     r"^gelu: approximate must be 'none' or 'tanh', not an int of 16610 bits$"),
    ("add", [np.zeros((50000, 1), np.float32), np.zeros((1, 50000), np.float32)], {}, accel.InvalidArgumentError,
     rf"^add: broadcasting input of shape \(50000, 1\) with other of shape \(1, 50000\) makes a result of shape "
     rf"\(50000, 50000\) \(2500000000 elements\); {ELEMENTS}"),
    ("matmul", [np.zeros((50000, 1), np.float32), np.zeros((1, 50000), np.float32)], {}, accel.InvalidArgumentError,
     rf"^matmul: multiplying input of shape \(50000, 1\) by other of shape \(1, 50000\) makes a result .*{ELEMENTS}"),
    ("linear", [np.zeros((50000, 1), np.float32)], dict(weight=np.zeros((50000, 1), np.float32)),
     accel.InvalidArgumentError, rf"^linear: the call makes a result of shape \(50000, 50000\) .*{ELEMENTS}"),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[f"{c[0]}-{i}" for i, c in enumerate(HOSTILE)])
def test_a_number_past_what_the_model_holds_is_refused_naming_it_before_anything_runs(dev, case):
    op, tensors, kwargs, error, pattern = case
    before = dev.stats()
    loads = dev.ops.cache_info()["loads"]
    with pytest.raises(error, match=pattern):
        getattr(dev.ops, op)(*tensors, **kwargs)
    assert dev.stats()["jobs_submitted"] == before["jobs_submitted"]
    assert dev.ops.cache_info()["loads"] == loads


@pytest.mark.parametrize("case", HOSTILE[:4], ids=lambda c: f"{c[0]}-{c[2]}")
def test_a_number_past_what_the_model_holds_is_refused_inside_a_fusion_scope_too(dev, case):
    op, tensors, kwargs, error, pattern = case
    with dev.fusion_scope() as scope:
        with pytest.raises(error, match=pattern):
            getattr(dev.ops, op)(*tensors, **kwargs)
        y = dev.ops.relu(X4)  # the scope goes on
    assert scope.model is not None
    assert_every_element(y, np.maximum(X4, 0), "the scope's result")


@pytest.mark.parametrize("other", [float("inf"), float("-inf"), float("nan"), 3.4028235e38, np.uint64(2**64 - 1),
                                   np.float16("inf")], ids=repr)
def test_a_number_float32_holds_is_taken_as_it_is(dev, other):
    got = dev.ops.add(X4, other)
    with np.errstate(over="ignore", invalid="ignore"):
        want = X4 + np.float32(other)
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("size,scale", [(37, 3 / 37), (37, 39 / 37), (10, 2.3)])
def test_interpolate_plans_the_size_its_model_computes_from_a_float32_scale(dev, size, scale):
    # floor(size * scale) in float64 (torch) is one more or less than in float32 (ONNX Resize) for these.
    x = rand((1, 2, size, size), 32)
    out = int(np.floor(np.float32(scale) * np.float32(size)))
    got = dev.ops.interpolate(x, scale_factor=scale)
    assert_every_element(got, ref.interpolate(x, size=(out, out), scale_factor=scale), "interpolate")


def test_the_ops_limits_are_the_compilers():
    from accel.compiler import accm, importer
    from accel.ops import args

    assert args.GEOMETRY.value == importer.MAX_GEOMETRY
    assert args.ELEMENTS.value == accm.MAX_ELEMENTS
