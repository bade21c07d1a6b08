"""Model.run's two paths give one behaviour.

A core may offer a fast path for the common case (CORE_API.md, ``run_tensors``: DeviceTensors that
match the model exactly, in and out, or NumPy arrays to copy in whole); every other call, and every
error, goes through the Python path.
These tests hold the two to the same results and the same zero-copy guarantees, and check that the
fast path declines (does nothing, returns None) every call it must leave to the Python path.
"""
from __future__ import annotations

import numpy as np
import pytest

import accel
from conftest import EXACT_COPIES, ort_run


def _python_path(model, inputs, outputs=None):
    # A timeout is never taken by the fast path: this is the Python path with the same job.
    return model.run(inputs, outputs=outputs, timeout=3600.0)


def _inputs(dev, model, seed=0):
    r = np.random.default_rng(seed)
    arrays = [r.standard_normal(i.shape).astype(i.dtype) for i in model.inputs]
    return arrays, [dev.tensor(a) for a in arrays]


def test_both_paths_bit_identical(dev, two_io, two_io_path):
    arrays, tensors = _inputs(dev, two_io)
    fast = two_io.run(tensors)
    slow = _python_path(two_io, tensors)
    ref = ort_run(two_io_path, {"a": arrays[0], "b": arrays[1]})
    for f, s, r in zip(fast, slow, ref):
        assert f.dtype == s.dtype and f.shape == s.shape
        assert np.array_equal(f, s)
        np.testing.assert_allclose(f, r, rtol=1e-5, atol=1e-5)


def test_given_outputs_written_in_place_both_paths(dev, two_io):
    _, tensors = _inputs(dev, two_io)
    outs = [dev.empty(o.shape, o.dtype) for o in two_io.outputs]
    before = dev.stats()["bytes_copied"]
    fast = two_io.run(tensors, outputs=outs)
    slow = _python_path(two_io, tensors, outputs=outs)
    assert dev.stats()["bytes_copied"] == before  # DeviceTensors in and out: nothing copied
    for f, s, o in zip(fast, slow, outs):
        assert np.shares_memory(f, np.asarray(o)) and np.shares_memory(s, np.asarray(o))


def test_fresh_outputs_outlive_everything(tiny_path):
    d = accel.open("emu:cores=1")
    m = d.load(tiny_path)
    t = d.tensor(np.ones((1, 16), np.float32))
    out = m.run(t)[0]
    expected = _python_path(m, t)[0].copy()
    del m, t
    d.close()
    assert np.array_equal(out, expected)  # the array keeps its buffer (and the device memory) alive


def test_fast_path_allocates_nothing_else(dev, tiny):
    t = dev.tensor(np.ones((1, 16), np.float32))
    o = dev.empty((1, 8), np.float32)
    tiny.run(t, outputs=[o])
    base = dev.stats()
    for _ in range(100):
        tiny.run(t, outputs=[o])
    after = dev.stats()
    assert after["allocations"] == base["allocations"]
    assert after["live_buffers"] == base["live_buffers"]


def _core_fast(model):
    """The core's fast path, or None for a core that declares it has none (the declaration is checked)."""
    fast = getattr(model._core, "run_tensors", None)
    assert (fast is not None) == bool(accel.frontend_features.get("fast_run")), \
        f"accel.frontend_features['fast_run'] misdescribes the {accel.frontend} core"
    return fast


def test_fast_path_runs_matching_tensors(dev, tiny):
    fast = _core_fast(tiny)
    if fast is None:
        return  # Model.run is the Python path alone: every other test here covers it
    t = dev.tensor(np.ones((1, 16), np.float32))
    o = dev.empty((1, 8), np.float32)
    for inputs, outputs in ((t, [o]), ([t], (o,)), ((t,), None)):
        res = fast(inputs, outputs, 0)
        assert isinstance(res, list) and len(res) == 1
        assert np.array_equal(res[0], _python_path(tiny, t)[0])


@pytest.mark.parametrize("model_name", ["tiny", "two_io"])
def test_fast_path_copies_numpy_inputs_once(dev, model_name, request):
    model = request.getfixturevalue(model_name)
    fast = _core_fast(model)
    if fast is None:
        return
    arrays, tensors = _inputs(dev, model, seed=5)
    expected = _python_path(model, arrays)
    mixed = [arrays[0]] + tensors[1:]  # an array and (for two inputs) a DeviceTensor
    base = dev.stats()
    got = fast(mixed if len(mixed) > 1 else mixed[0], None, 0)
    after = dev.stats()
    assert got is not None and len(got) == len(expected)
    for g, e in zip(got, expected):
        assert np.array_equal(g, e)
    if EXACT_COPIES:
        assert after["bytes_copied"] - base["bytes_copied"] == arrays[0].nbytes  # one copy, of the array only
    else:  # the device tensors and outputs too when VART copies them
        bound = sum(a.nbytes for a in arrays) + sum(o.nbytes for o in model.outputs)
        assert after["bytes_copied"] - base["bytes_copied"] <= bound
    assert after["allocations"] - base["allocations"] == 1 + len(model.outputs)


def test_fast_path_declines_what_it_does_not_take(dev, dev1, tiny, two_io):
    fast = _core_fast(tiny)
    if fast is None:
        return
    t = dev.tensor(np.ones((1, 16), np.float32))
    o = dev.empty((1, 8), np.float32)
    other_device = dev1.tensor(np.ones((1, 16), np.float32))
    class Sub(np.ndarray):
        pass

    declined = {
        "numpy input of another dtype": (np.ones((1, 16), np.float64), None, 0),
        "numpy input of another shape": (np.ones((16,), np.float32), None, 0),
        "non-contiguous numpy input": (np.ones((1, 32), np.float32)[:, ::2], None, 0),
        "numpy subclass input": (np.ones((1, 16), np.float32).view(Sub), None, 0),
        "list input": ([[1.0] * 16], None, 0),
        "wrong dtype": (dev.tensor(np.ones((1, 16), np.int32)), None, 0),
        "wrong shape": (dev.tensor(np.ones((16,), np.float32)), None, 0),
        "other device": (other_device, None, 0),
        "dict input": ({"x": t}, None, 0),
        "two inputs": ([t, t], None, 0),
        "none input": (None, None, 0),
        "numpy output": (t, [np.empty((1, 8), np.float32)], 0),
        "dict outputs": (t, {"y": o}, 0),
        "bare output": (t, o, 0),
        "wrong output shape": (t, [dev.empty((8,), np.float32)], 0),
        "bool priority": (t, [o], True),
        "numpy priority": (t, [o], np.int64(1)),
        "priority too high": (t, [o], 256),
        "negative priority": (t, [o], -1),
    }
    for what, (inputs, outputs, priority) in declined.items():
        before = dev.stats()["jobs_submitted"]
        assert fast(inputs, outputs, priority) is None, what
        assert dev.stats()["jobs_submitted"] == before, what
    assert _core_fast(two_io)(t, None, 0) is None  # one tensor for a two-input model


def test_fast_path_declines_after_close(tiny_path):
    d = accel.open("emu:cores=1")
    m = d.load(tiny_path)
    t = d.tensor(np.ones((1, 16), np.float32))
    fast = _core_fast(m)
    d.close()
    assert fast is None or fast(t, None, 0) is None
    with pytest.raises(accel.ClosedError):
        m.run(t)


def test_errors_are_the_python_paths(dev, tiny):
    # What the fast path declines reaches the Python path's exact errors.
    with pytest.raises(accel.DTypeError, match=r"'x'.*float32.*int32"):
        tiny.run(dev.tensor(np.ones((1, 16), np.int32)))
    with pytest.raises(accel.ShapeError, match=r"'x'.*\(1, 16\).*\(16,\)"):
        tiny.run(dev.tensor(np.ones((16,), np.float32)))
    with pytest.raises(accel.ShapeError, match=r"'y'.*\(1, 8\).*\(8,\)"):
        tiny.run(dev.tensor(np.ones((1, 16), np.float32)), outputs=[dev.empty((8,), np.float32)])
    with pytest.raises(accel.InvalidArgumentError, match="priority"):
        tiny.run(dev.tensor(np.ones((1, 16), np.float32)), priority=256)
    with pytest.raises(TypeError, match="priority"):
        tiny.run(dev.tensor(np.ones((1, 16), np.float32)), priority=True)


def test_no_spin_device_gives_the_same_results(tiny_path):
    # spin=0: idle cores and waiting callers sleep at once (the slow hand-over, same numbers).
    x = np.random.default_rng(5).standard_normal((1, 16)).astype(np.float32)
    with accel.open("emu:cores=1,spin=0") as a, accel.open("emu:cores=1") as b:
        ya = a.load(tiny_path).run(x)[0]
        yb = b.load(tiny_path).run(x)[0]
        assert np.array_equal(ya, yb)
        fut = a.load(tiny_path).run_async(x)
        assert np.array_equal(fut.result(timeout=10)[0], yb)


def test_the_cross_device_error_tells_two_devices_of_one_uri_apart(tiny_path):
    with accel.open("emu:cores=1") as a, accel.open("emu:cores=1") as b:
        assert repr(a) != repr(b) and repr(a).startswith("<accel.Device #")
        m = a.load(tiny_path)
        with pytest.raises(accel.InvalidArgumentError) as e:
            m.run(b.tensor(np.ones((1, 16), np.float32)))
        assert repr(b) in str(e.value) and repr(a) in str(e.value), e.value
