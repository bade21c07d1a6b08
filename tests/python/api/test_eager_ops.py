"""Device.ops: every op against a NumPy reference (ops_reference.py) on a few shapes, with NumPy and
DeviceTensor inputs; the per-device model cache; the errors of bad calls (op, argument and shapes named,
nothing run); the backends that cannot compile."""
from __future__ import annotations

import dataclasses
import re
import threading

import numpy as np
import ops_reference as ref
import pytest
from conftest import rand

import accel

pytestmark = pytest.mark.emulator


def w(shape, seed=1, scale=0.3):
    return (rand(shape, seed) * scale).astype(np.float32)


X4 = rand((2, 4, 9, 11), 0)
X4B = rand((1, 6, 16, 16), 2)
XS = rand((3, 5, 7), 3)
A23 = rand((2, 3), 4)
B3 = rand((3,), 5)
W84 = w((8, 4, 3, 3))
W_G = w((6, 3, 3, 3), 6)
W_LIN = w((8, 7), 7)
W_LIN2 = w((5, 3), 8)
LN_W, LN_B = w((5, 7), 9), w((5, 7), 10)

# (id, op, tensor arguments (NumPy), other arguments, reference)
CASES = [
    ("conv2d", "conv2d", [X4], dict(weight=W84, bias=w((8,), 2)), ref.conv2d),
    ("conv2d-nobias-stride-pad", "conv2d", [X4], dict(weight=W84, stride=2, padding=1), ref.conv2d),
    ("conv2d-dilation-rect", "conv2d", [X4], dict(weight=w((3, 4, 2, 3), 3), stride=(1, 2), padding=(2, 1),
                                                  dilation=(2, 1)), ref.conv2d),
    ("conv2d-groups", "conv2d", [X4B], dict(weight=W_G, bias=w((6,), 4), padding=1, groups=2), ref.conv2d),
    ("conv2d-depthwise", "conv2d", [X4B], dict(weight=w((6, 1, 3, 3), 5), groups=6, stride=2), ref.conv2d),
    ("conv2d-same", "conv2d", [X4], dict(weight=w((4, 4, 4, 2), 11), padding="same", dilation=2), ref.conv2d),
    ("conv2d-valid", "conv2d", [X4], dict(weight=W84, padding="valid"), ref.conv2d),
    ("linear-2d", "linear", [rand((4, 7), 1)], dict(weight=W_LIN, bias=w((8,), 3)), ref.linear),
    ("linear-3d", "linear", [rand((2, 3, 7), 2)], dict(weight=W_LIN, bias=w((8,), 3)), ref.linear),
    ("linear-nobias", "linear", [rand((3, 7), 3)], dict(weight=W_LIN), ref.linear),
    ("matmul", "matmul", [A23, rand((3, 4), 6)], {}, np.matmul),
    ("matmul-batch", "matmul", [rand((2, 1, 3, 4), 7), rand((3, 4, 5), 8)], {}, np.matmul),
    ("matmul-vec", "matmul", [rand((2, 3, 4), 9), rand((4,), 10)], {}, np.matmul),
    *[(op, op, [A23, B3], {}, fn) for op, fn in ref.BINARY.items() if op != "matmul"],
    ("add-scalar", "add", [A23], dict(other=2.5), lambda x, other: x + other),
    ("mul-int", "mul", [A23], dict(other=3), lambda x, other: x * other),
    ("div-broadcast-both", "div", [rand((3, 1), 11), rand((1, 4), 12) + 3], {}, np.divide),
    *[(op, op, [XS * 4], {}, fn) for op, fn in ref.UNARY.items()],
    ("gelu-tanh", "gelu", [XS], dict(approximate="tanh"), ref.gelu),
    ("leaky_relu-slope", "leaky_relu", [XS], dict(negative_slope=0.2), ref.UNARY["leaky_relu"]),
    ("max_pool2d", "max_pool2d", [X4], dict(kernel_size=2), ref.max_pool2d),
    ("max_pool2d-pad-stride", "max_pool2d", [X4], dict(kernel_size=3, stride=2, padding=1), ref.max_pool2d),
    ("max_pool2d-dilation", "max_pool2d", [X4], dict(kernel_size=(2, 3), stride=1, dilation=2), ref.max_pool2d),
    ("max_pool2d-ceil", "max_pool2d", [X4], dict(kernel_size=2, ceil_mode=True), ref.max_pool2d),
    ("avg_pool2d", "avg_pool2d", [X4], dict(kernel_size=3), ref.avg_pool2d),
    ("avg_pool2d-pad", "avg_pool2d", [X4], dict(kernel_size=3, stride=2, padding=1), ref.avg_pool2d),
    ("avg_pool2d-pad-exclude", "avg_pool2d", [X4], dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
     ref.avg_pool2d),
    ("avg_pool2d-ceil", "avg_pool2d", [X4], dict(kernel_size=2, ceil_mode=True), ref.avg_pool2d),
    ("avg_pool2d-ceil-pad", "avg_pool2d", [X4], dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
     ref.avg_pool2d),
    ("adaptive_avg_pool2d", "adaptive_avg_pool2d", [X4], dict(output_size=1), ref.adaptive_avg_pool2d),
    ("adaptive_avg_pool2d-pair", "adaptive_avg_pool2d", [X4], dict(output_size=(1, 1)), ref.adaptive_avg_pool2d),
    ("softmax", "softmax", [XS], dict(dim=-1), ref.softmax),
    ("softmax-dim1", "softmax", [XS], dict(dim=1), ref.softmax),
    ("concat", "concat", [[A23, rand((4, 3), 13)]], dict(dim=0), lambda t, dim: np.concatenate(t, dim)),
    ("cat-dim-1", "cat", [[XS, rand((3, 5, 2), 14), XS]], dict(dim=-1), lambda t, dim: np.concatenate(t, dim)),
    ("reshape", "reshape", [XS], dict(shape=(5, -1)), lambda x, shape: x.reshape(shape)),
    ("permute", "permute", [XS], dict(dims=(2, 0, 1)), lambda x, dims: x.transpose(dims)),
    ("permute-neg", "permute", [X4], dict(dims=(0, -1, 1, 2)), lambda x, dims: x.transpose(dims)),
    ("flatten", "flatten", [X4], {}, ref.flatten),
    ("flatten-1", "flatten", [X4], dict(start_dim=1), ref.flatten),
    ("flatten-mid", "flatten", [X4], dict(start_dim=1, end_dim=2), ref.flatten),
    ("interp-nearest-size", "interpolate", [X4], dict(size=(18, 5)), ref.interpolate),
    ("interp-nearest-scale", "interpolate", [X4], dict(scale_factor=2.0), ref.interpolate),
    ("interp-nearest-3d", "interpolate", [XS], dict(size=11), ref.interpolate),
    ("interp-bilinear-size", "interpolate", [X4], dict(size=(14, 20), mode="bilinear"), ref.interpolate),
    ("interp-bilinear-down", "interpolate", [X4], dict(size=(4, 5), mode="bilinear"), ref.interpolate),
    ("interp-bilinear-scale", "interpolate", [X4], dict(scale_factor=(2.0, 1.5), mode="bilinear"), ref.interpolate),
    ("interp-bilinear-align", "interpolate", [X4], dict(size=(17, 21), mode="bilinear", align_corners=True),
     ref.interpolate),
    ("layer_norm", "layer_norm", [rand((2, 5, 7), 15)], dict(normalized_shape=(5, 7), weight=LN_W, bias=LN_B),
     ref.layer_norm),
    ("layer_norm-last", "layer_norm", [rand((3, 7), 16)], dict(normalized_shape=7, eps=1e-3),
     lambda x, normalized_shape, eps: ref.layer_norm(x, (normalized_shape,), eps=eps)),
]


def on_device(dev, x):
    if isinstance(x, list):
        return [dev.tensor(a) for a in x]
    return dev.tensor(x)


def assert_close(got, want, what):
    assert got.shape == want.shape, f"{what}: shape {got.shape}, reference {want.shape}"
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.max(np.abs(want)))),
                               err_msg=what)


def test_every_op_has_a_case():
    covered = {c[1] for c in CASES}
    assert set(accel.ops.table.OPS) | {"cat"} == covered


@pytest.mark.parametrize("inputs_on", ["numpy", "device"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op_matches_numpy(dev, case, inputs_on):
    name, op, tensors, kwargs, reference = case
    args = tensors if inputs_on == "numpy" else [on_device(dev, t) for t in tensors]
    before = dev.stats()
    out = getattr(dev.ops, op)(*args, **kwargs)
    after = dev.stats()
    assert type(out) is accel.DeviceTensor and out.device is dev and out.dtype == np.float32
    assert after["jobs_submitted"] - before["jobs_submitted"] == 1
    want = reference(*tensors, **kwargs)
    assert_close(np.asarray(out), np.asarray(want, dtype=np.float32), name)


def test_keyword_and_positional_arguments_as_torch(dev):
    x = X4
    a = dev.ops.conv2d(x, W84, None, 1, 1, 1, 1)
    b = dev.ops.conv2d(input=x, weight=W84, padding=1)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert tuple(dev.ops.max_pool2d(x, 3, 2, 1, 1, True).shape) == ref.max_pool2d(x, 3, 2, 1, 1, True).shape


def test_same_tensor_twice_is_one_input(dev):
    t = dev.tensor(A23)
    out = dev.ops.mul(t, t)
    np.testing.assert_allclose(np.asarray(out), A23 * A23, rtol=1e-6)
    (entry,) = list(dev.ops._cache._entries.values())
    assert len(entry.model.inputs) == 1


def test_numpy_input_is_copied_once_and_device_input_not_at_all(dev):
    before = dev.stats()["bytes_copied"]
    dev.ops.relu(X4)
    assert dev.stats()["bytes_copied"] - before == X4.nbytes
    t = dev.tensor(X4)
    before = dev.stats()["bytes_copied"]
    dev.ops.relu(t)
    assert dev.stats()["bytes_copied"] == before


def test_non_contiguous_numpy_input(dev):
    x = X4[:, ::2, :, ::-1]
    np.testing.assert_allclose(np.asarray(dev.ops.sigmoid(x)), ref.sigmoid(x), rtol=1e-5, atol=1e-6)


# ---- the model cache ---------------------------------------------------------------------------------


def test_a_second_call_with_the_same_signature_only_runs(dev):
    ops = dev.ops
    start = ops.cache_info()
    first = np.asarray(ops.conv2d(X4, W84, padding=1)).copy()
    assert ops.cache_info()["loads"] == start["loads"] + 1
    again = ops.conv2d(dev.tensor(X4 * 2), W84.copy(), padding=1)  # equal weights (a new array), other values
    info = ops.cache_info()
    assert (info["loads"], info["hits"]) == (start["loads"] + 1, start["hits"] + 1)
    np.testing.assert_allclose(np.asarray(again), first * 2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("change", ["weights", "attribute", "shape", "op"])
def test_a_new_signature_loads_a_new_model(dev, change):
    ops = dev.ops
    ops.conv2d(X4, W84, padding=1)
    loads = ops.cache_info()["loads"]
    if change == "weights":
        ops.conv2d(X4, W84 + 1, padding=1)
    elif change == "attribute":
        ops.conv2d(X4, W84, padding=0)
    elif change == "shape":
        ops.conv2d(X4[:1], W84, padding=1)
    else:
        ops.relu(X4)
    assert ops.cache_info()["loads"] == loads + 1


def test_a_large_weight_changed_in_one_element_is_seen(dev):
    # A constant's part of the cache key is a hash of all its bytes: one element changed is another model.
    weight = w((512, 256), 3)
    x = rand((2, 256), 4)
    ops = dev.ops
    ops.linear(x, weight)
    loads = ops.cache_info()["loads"]
    changed = weight.copy()
    changed.reshape(-1)[1] += 1.0
    got = ops.linear(x, changed)
    assert ops.cache_info()["loads"] == loads + 1
    assert_close(np.asarray(got), ref.linear(x, changed), "linear with the changed weight")
    np.testing.assert_allclose(np.asarray(ops.linear(x, changed)), np.asarray(got))
    assert ops.cache_info()["loads"] == loads + 1  # the changed weight's model is found again


def test_the_cache_is_bounded_least_recently_used_first(dev):
    ops = dev.ops
    cache = ops._cache
    cache._maxsize = 3
    for i in range(5):
        ops.add(A23, float(i))
    assert ops.cache_info()["size"] == 3
    loads = ops.cache_info()["loads"]
    ops.add(A23, 4.0)  # kept
    assert ops.cache_info()["loads"] == loads
    ops.add(A23, 0.0)  # dropped
    assert ops.cache_info()["loads"] == loads + 1
    ops.cache_clear()
    assert ops.cache_info()["size"] == 0


def test_ops_from_threads(dev):
    errors, results = [], {}

    def work(i):
        try:
            for _ in range(5):
                results[i] = np.asarray(dev.ops.mul(A23, float(i))).copy()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        np.testing.assert_allclose(results[i], A23 * i, rtol=1e-6)


# ---- errors ------------------------------------------------------------------------------------------

BAD_CALLS = [
    ("conv2d", [rand((1, 3, 32, 32))], dict(weight=rand((8, 4, 3, 3))), accel.ShapeError,
     r"^conv2d: weight of shape \(8, 4, 3, 3\) needs input with 4 \* groups = 4 channels; input has shape "
     r"\(1, 3, 32, 32\)$"),
    ("conv2d", [rand((3, 32, 32))], dict(weight=W84), accel.ShapeError, r"conv2d: input must be 4-D.*\(3, 32, 32\)"),
    ("conv2d", [X4], dict(weight=W84, bias=rand((4,))), accel.ShapeError, r"conv2d: bias must have shape \(8,\); "
     r"bias has shape \(4,\)"),
    ("conv2d", [X4], dict(weight=W84, groups=2), accel.ShapeError, r"conv2d: weight of shape \(8, 4, 3, 3\) needs "
     r"input with 4 \* groups = 8 channels"),
    ("conv2d", [X4], dict(weight=rand((8, 4, 12, 3))), accel.ShapeError, r"conv2d: kernel size 12 .*input height 9"),
    ("conv2d", [X4], dict(weight=W84.astype(np.float64)), accel.DTypeError, r"conv2d: weight has dtype float64"),
    ("conv2d", [X4], dict(weight=W84, padding="same", stride=2), accel.InvalidArgumentError, r"padding='same'"),
    ("conv2d", [X4], dict(weight=[[1.0]]), TypeError, r"conv2d: weight must be a numpy.ndarray"),
    ("relu", [X4.astype(np.float64)], {}, accel.DTypeError, r"relu: input has dtype float64; .*float32"),
    ("relu", [X4.astype(np.int32)], {}, accel.DTypeError, r"relu: input has dtype int32"),
    ("relu", [[1.0, 2.0]], {}, TypeError, r"relu: input must be an accel.DeviceTensor.*not list"),
    ("add", [A23, rand((4,))], {}, accel.ShapeError, r"add: input of shape \(2, 3\) and other of shape \(4,\) do not "
     r"broadcast"),
    ("add", [A23, "2"], {}, TypeError, r"add: other must be .* or a number, not str"),
    ("matmul", [A23, rand((2, 3))], {}, accel.ShapeError, r"matmul: input of shape \(2, 3\) and other of shape "
     r"\(2, 3\) cannot be multiplied"),
    ("linear", [rand((4, 6))], dict(weight=W_LIN), accel.ShapeError, r"linear: weight of shape \(8, 7\) needs input "
     r"with 7 features.*\(4, 6\)"),
    ("max_pool2d", [X4], dict(kernel_size=2, padding=2), accel.InvalidArgumentError, r"max_pool2d: padding \(2, 2\)"
     r" must be at most half of kernel_size"),
    ("max_pool2d", [X4], dict(kernel_size=0), accel.InvalidArgumentError, r"max_pool2d: kernel_size must be >= 1"),
    ("adaptive_avg_pool2d", [X4], dict(output_size=2), accel.UnsupportedError, r"adaptive_avg_pool2d: output_size 2 "
     r"is not supported; only 1"),
    ("softmax", [XS], dict(dim=3), accel.InvalidArgumentError, r"softmax: dim=3 is out of range for input of shape "
     r"\(3, 5, 7\)"),
    ("concat", [[A23, rand((3, 2))]], dict(dim=0), accel.ShapeError, r"concat: tensors\[1\] of shape \(3, 2\) does "
     r"not match tensors\[0\] of shape \(2, 3\)"),
    ("concat", [[]], {}, TypeError, r"concat: tensors must be a non-empty"),
    ("reshape", [XS], dict(shape=(4, -1)), accel.ShapeError, r"reshape: shape \(4, -1\) is invalid for input of "
     r"shape \(3, 5, 7\)"),
    ("permute", [XS], dict(dims=(0, 0, 1)), accel.InvalidArgumentError, r"permute: dims \(0, 0, 1\) is not a "
     r"permutation"),
    ("flatten", [XS], dict(start_dim=2, end_dim=1), accel.InvalidArgumentError, r"flatten: start_dim 2 comes after"),
    ("interpolate", [X4], dict(size=3, scale_factor=2.0), accel.InvalidArgumentError, r"exactly one of size and "
     r"scale_factor"),
    ("interpolate", [X4], dict(size=4, align_corners=True), accel.InvalidArgumentError, r"align_corners applies to "
     r"mode 'bilinear' only"),
    ("interpolate", [XS], dict(size=4, mode="bilinear"), accel.ShapeError, r"interpolate: mode 'bilinear' needs "
     r"input 4-D.*\(3, 5, 7\)"),
    ("interpolate", [X4], dict(size=4, mode="bicubic"), accel.InvalidArgumentError, r"mode must be 'nearest' or "
     r"'bilinear'"),
    ("gelu", [XS], dict(approximate="erf"), accel.InvalidArgumentError, r"gelu: approximate must be"),
    ("layer_norm", [XS], dict(normalized_shape=(5,)), accel.ShapeError, r"layer_norm: normalized_shape \(5,\) must "
     r"be the last dims of input; input has shape \(3, 5, 7\)"),
    ("layer_norm", [XS], dict(normalized_shape=7, weight=rand((5,))), accel.ShapeError, r"layer_norm: weight must "
     r"have shape \(7,\)"),
]


@pytest.mark.parametrize("case", BAD_CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(BAD_CALLS)])
def test_bad_call_raises_before_anything_runs(dev, case):
    op, tensors, kwargs, error, pattern = case
    before = dev.stats()
    loads = dev.ops.cache_info()["loads"]
    with pytest.raises(error, match=pattern):
        getattr(dev.ops, op)(*tensors, **kwargs)
    after = dev.stats()
    assert after["jobs_submitted"] == before["jobs_submitted"]
    assert after["bytes_copied"] == before["bytes_copied"]
    assert dev.ops.cache_info()["loads"] == loads


def test_a_tensor_of_another_device_is_refused_naming_both(dev):
    with accel.open("emu") as other:
        t = other.tensor(A23)
        with pytest.raises(accel.InvalidArgumentError) as e:
            dev.ops.relu(t)
        message = str(e.value)
        assert re.search(rf"relu: input is a tensor of device #{other._number} 'emu', but these ops run on "
                         rf"device #{dev._number} '{re.escape(dev.uri)}'", message), message


def test_a_device_tensor_of_another_dtype_is_refused(dev):
    with pytest.raises(accel.DTypeError, match=r"add: other has dtype int8"):
        dev.ops.add(A23, dev.tensor(np.zeros(3, np.int8)))


def test_closed_device(dev):
    ops = dev.ops
    dev.close()
    with pytest.raises(accel.ClosedError, match=r"relu: device .* is closed"):
        ops.relu(A23)


def test_a_backend_that_cannot_compile_refuses_ops_and_scopes(dev, monkeypatch):
    # The vendor drivers cannot compile ONNX; the ops ask what the device loads, so a device that says it
    # is a BPU loading .hbm stands in for one (the stand-in SDKs' devices are tested in the vendor CI job).
    monkeypatch.setattr(dev, "_info", dataclasses.replace(dev.info, backend="bpu"))
    monkeypatch.setattr(dev, "_capabilities", dataclasses.replace(dev.capabilities, model_format="hbm"))
    before = dev.stats()["jobs_submitted"]
    with pytest.raises(accel.UnsupportedError, match=r"conv2d: device ops and fusion scopes compile models on the fly, "
                                                     r"which backend 'bpu' cannot"):
        dev.ops.conv2d(X4, W84)
    with pytest.raises(accel.UnsupportedError, match=r"fusion_scope: .*backend 'bpu' cannot"), dev.fusion_scope():
        pass
    assert dev.stats()["jobs_submitted"] == before
