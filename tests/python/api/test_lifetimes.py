"""Lifetimes: outputs outlive their model, their device and close(); DeviceTensor views outlive the
tensor; futures are garbage-collected; nothing is freed while something still views it."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import accel
from conftest import DEVICE_URI, buffer_protocol, ort_run, rand, settle


def test_output_outlives_model(dev, tiny_path):
    x = rand((1, 16), 1)
    m = dev.load(str(tiny_path))
    (y,) = m.run(x)
    expected = y.copy()
    mref = weakref.ref(m)
    del m
    gc.collect()
    assert mref() is None
    np.asarray(dev.empty((1, 8), np.float32))[...] = -1.0  # reuse of freed memory would show
    assert np.array_equal(y, expected)
    np.testing.assert_allclose(y, ort_run(tiny_path, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_output_outlives_device_close(tiny_path):
    x = rand((1, 16), 2)
    d = accel.open(DEVICE_URI)
    (y,) = d.load(str(tiny_path)).run(x)
    expected = ort_run(tiny_path, {"x": x})[0]
    d.close()
    gc.collect()
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    y += 1  # still writable memory that belongs to us
    np.testing.assert_allclose(y, expected + 1, rtol=1e-5, atol=1e-5)


def test_output_outlives_everything(tiny_path):
    def make():
        with accel.open(DEVICE_URI) as d:
            m = d.load(str(tiny_path))
            return m.run(rand((1, 16), 3)), weakref.ref(d), weakref.ref(m)

    (y,), dref, mref = make()
    gc.collect()
    assert mref() is None and dref() is None  # the Python objects are gone...
    np.testing.assert_allclose(y, ort_run(tiny_path, {"x": rand((1, 16), 3)})[0], rtol=1e-5, atol=1e-5)
    del y  # ...the device memory goes with the last array (no crash, no leak report)
    gc.collect()


def test_output_keeps_its_buffer_counted(dev, tiny):
    gc.collect()
    base = dev.stats()["live_buffers"]
    outs = [tiny.run(rand((1, 16), i))[0] for i in range(10)]
    gc.collect()
    assert dev.stats()["live_buffers"] == base + 10
    del outs[:5]
    gc.collect()
    assert dev.stats()["live_buffers"] == base + 5
    derived = outs[0][:, 2:5]  # a view of a view still keeps it
    del outs
    gc.collect()
    assert dev.stats()["live_buffers"] == base + 1
    assert derived.shape == (1, 3)
    del derived
    gc.collect()
    assert dev.stats()["live_buffers"] == base


def test_view_outlives_tensor(dev):
    gc.collect()
    base = dev.stats()["live_buffers"]
    t = dev.empty((100,), np.int64)
    v = np.asarray(t)
    v[...] = np.arange(100)
    tref = weakref.ref(t)
    del t
    gc.collect()
    assert dev.stats()["live_buffers"] == base + 1
    np.asarray(dev.empty((100,), np.int64))[...] = -7  # would land on freed memory
    assert np.array_equal(v, np.arange(100, dtype=np.int64))
    del v
    gc.collect()
    assert tref() is None
    assert dev.stats()["live_buffers"] == base


def test_memoryview_and_dlpack_outlive_tensor(dev):
    gc.collect()
    base = dev.stats()["live_buffers"]
    t = dev.empty((16,), np.int32)
    np.asarray(t)[...] = np.arange(16)
    mv = memoryview(t) if buffer_protocol() else memoryview(np.asarray(t))
    dl = np.from_dlpack(t)
    cap = dev.empty((4,), np.float32).__dlpack__()
    del t
    gc.collect()
    assert dev.stats()["live_buffers"] == base + 2
    assert list(mv.cast("B").cast("i")) == list(range(16))
    assert np.array_equal(dl, np.arange(16))
    mv.release()
    del mv, dl, cap
    gc.collect()
    assert dev.stats()["live_buffers"] == base


def test_tensor_outlives_close(tiny_path):
    d = accel.open(DEVICE_URI)
    t = d.empty((1, 16), np.float32)
    np.asarray(t)[...] = 4.0
    m = d.load(str(tiny_path))
    d.close()
    assert d.closed and t.device is d
    assert np.all(np.asarray(t) == 4.0)
    np.asarray(t)[...] = 5.0
    assert np.all(t.numpy() == 5.0)
    with pytest.raises(accel.ClosedError):
        m.run(t)
    del t, m
    gc.collect()


def test_model_keeps_device_alive(tiny_path):
    d = accel.open(DEVICE_URI)
    m = d.load(str(tiny_path))
    dref = weakref.ref(d)
    del d
    gc.collect()
    x = rand((1, 16), 4)
    np.testing.assert_allclose(m.run(x)[0], ort_run(tiny_path, {"x": x})[0], rtol=1e-5, atol=1e-5)
    del m
    gc.collect()
    assert dref() is None


def test_device_without_close_is_collected(tiny_path):
    d = accel.open(DEVICE_URI)
    d.load(str(tiny_path)).run(rand((1, 16), 5))
    dref = weakref.ref(d)
    del d
    gc.collect()
    assert dref() is None


def test_future_completes_after_model_and_device_are_dropped(slow_path):
    x = rand((512, 512), 6)
    d = accel.open(DEVICE_URI)
    m = d.load(str(slow_path))
    expected = m.run(x)[0].copy()
    f = m.run_async(x)
    del m
    d.close()
    del d
    gc.collect()
    assert np.array_equal(f.result(timeout=30)[0], expected)


def test_future_is_collected_after_result(dev, tiny):
    f = tiny.run_async(rand((1, 16), 7))
    (y,) = f.result(timeout=10)
    fref = weakref.ref(f)
    del f
    gc.collect()
    assert fref() is None
    assert y.shape == (1, 8)  # the result outlives its future


def test_unwaited_future_is_collected(dev, tiny):
    gc.collect()
    base = dev.stats()
    refs = [weakref.ref(tiny.run_async(rand((1, 16), i))) for i in range(20)]
    s = settle(dev, base, timeout=10)
    gc.collect()
    assert all(r() is None for r in refs)
    assert s["live_buffers"] == base["live_buffers"]


def test_pending_future_keeps_its_inputs_alive(dev, slow):
    """The caller may drop the input tensor right after run_async: the job still reads valid memory."""
    x = rand((512, 512), 8)
    expected = slow.run(x)[0].copy()
    t = dev.tensor(x)
    f = slow.run_async(t)
    del t
    gc.collect()
    np.asarray(dev.empty((512, 512), np.float32))[...] = np.nan  # would overwrite freed memory
    assert np.array_equal(f.result(timeout=30)[0], expected)


def test_input_array_may_change_after_submit(slow):
    """A NumPy input is copied at submission: changing it afterwards does not change the result."""
    x = rand((512, 512), 9)
    expected = slow.run(x)[0].copy()
    f = slow.run_async(x)
    x[...] = 0
    assert np.array_equal(f.result(timeout=30)[0], expected)


def test_profile_object_outlives_device(tiny_path):
    with accel.open(DEVICE_URI) as d:
        m = d.load(str(tiny_path))
        with accel.profile() as p:
            m.run(rand((1, 16), 10))
    del m, d
    gc.collect()
    assert "count" in p.summary().lower()
