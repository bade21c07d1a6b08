"""Zero-copy, both ways: DeviceTensor views (buffer protocol, DLPack), inputs given as DeviceTensors are
never copied, NumPy inputs are copied exactly once (counted in stats()["bytes_copied"]), and outputs are
NumPy arrays viewing device buffers."""
from __future__ import annotations

import gc
import time

import numpy as np
import pytest

from conftest import EXACT_COPIES, buffer_protocol, ort_run, rand


def copied(dev):
    return dev.stats()["bytes_copied"]


def test_views_share_memory(dev):
    t = dev.empty((8, 8), np.float32)
    raw = memoryview(t) if buffer_protocol() else memoryview(np.asarray(t)).cast("B")
    a, b, c = np.asarray(t), t.numpy(), np.frombuffer(raw, dtype=np.float32)
    assert np.shares_memory(a, b) and np.shares_memory(a, c)
    a[2, 3] = 42.0
    assert b[2, 3] == 42.0 and c[2 * 8 + 3] == 42.0
    assert a.ctypes.data == b.ctypes.data


def test_view_is_writable_and_dense(dev):
    t = dev.empty((2, 3, 5), np.int16)
    a = np.asarray(t)
    assert a.flags.writeable and a.flags.c_contiguous
    assert a.strides == (30, 10, 2)
    assert not a.flags.owndata


def test_making_views_copies_nothing(dev):
    t = dev.empty((512, 512), np.float32)
    c0 = copied(dev)
    for _ in range(100):
        np.asarray(t)
        t.numpy()
        if buffer_protocol():
            memoryview(t)
        np.from_dlpack(t)
    assert copied(dev) == c0


def test_dlpack_shares_memory(dev):
    t = dev.empty((4, 5), np.float32)
    d = np.from_dlpack(t)
    assert np.shares_memory(d, np.asarray(t))
    d[1, 1] = 7.0
    assert np.asarray(t)[1, 1] == 7.0


def test_dlpack_versioned_capsule(dev):
    t = dev.empty((4,), np.float32)
    cap = t.__dlpack__(max_version=(1, 0))
    assert type(cap).__name__ == "PyCapsule"
    assert "dltensor_versioned" in repr(cap)
    legacy = t.__dlpack__()
    assert "dltensor" in repr(legacy)


def test_dlpack_copy_true_refused(dev):
    t = dev.empty((4,), np.float32)
    with pytest.raises(BufferError):
        t.__dlpack__(copy=True)


def test_tensor_counts_one_copy(dev):
    a = rand((64, 64), 1)
    c0 = copied(dev)
    t = dev.tensor(a)
    assert copied(dev) - c0 == a.nbytes
    assert np.array_equal(np.asarray(t), a)
    strided = rand((64, 128), 2)[::-2, ::4]
    c1 = copied(dev)
    u = dev.tensor(strided)
    assert copied(dev) - c1 == strided.size * 4  # the dense bytes, once
    assert np.array_equal(np.asarray(u), strided)


def test_device_tensor_input_is_not_copied(dev, tiny, tiny_path):
    x = rand((1, 16), 2)
    t = dev.tensor(x)
    o = dev.empty((1, 8), np.float32)
    c0 = copied(dev)
    for _ in range(10):
        tiny.run(t)
        tiny.run([t], outputs=[o])
        tiny.run({"x": t})
    if EXACT_COPIES:
        assert copied(dev) == c0
    else:  # at most each run's input and output copied by VART
        assert copied(dev) - c0 <= 30 * (x.nbytes + o.nbytes)
    np.testing.assert_allclose(np.asarray(o), ort_run(tiny_path, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_numpy_input_is_copied_exactly_once(dev, tiny):
    x = rand((1, 16), 3)
    c0 = copied(dev)
    tiny.run(x)
    assert copied(dev) - c0 == x.nbytes


def test_two_numpy_inputs_copied_once_each(dev, two_io):
    a, b = rand((1, 3, 8, 8), 4), rand((2, 8), 5)
    c0 = copied(dev)
    two_io.run({"a": a, "b": b})
    assert copied(dev) - c0 == a.nbytes + b.nbytes
    c1 = copied(dev)
    two_io.run([dev.tensor(a), b])  # tensor() copies a once, run copies b once
    assert copied(dev) - c1 == a.nbytes + b.nbytes


def _strided_variants():
    base = rand((32, 64), 6)
    yield "sliced", base[:2:2, ::4]
    yield "negative", base[:1, ::-4]
    yield "transposed", rand((16, 1), 7).T
    yield "fortran", np.asfortranarray(rand((1, 16), 8))
    zero = np.broadcast_to(rand((1, 1), 9), (1, 16))
    yield "zero-stride", zero
    ro = rand((1, 16), 10)
    ro.flags.writeable = False
    yield "readonly", ro
    big = rand((3, 40), 11)
    yield "offset-window", big[1:2, 7:23]


@pytest.mark.parametrize("kind,x", list(_strided_variants()), ids=[k for k, _ in _strided_variants()])
def test_any_strides_one_copy(dev, tiny, tiny_path, kind, x):
    assert x.shape == (1, 16), kind
    expected = ort_run(tiny_path, {"x": np.ascontiguousarray(x)})[0]
    keep = np.array(x, copy=True)
    c0 = copied(dev)
    (y,) = tiny.run(x)
    assert copied(dev) - c0 == 64  # exactly the dense bytes, once
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)
    assert np.array_equal(x, keep)  # never modified in place


def test_outputs_view_device_buffers(dev, tiny):
    t = dev.tensor(rand((1, 16), 12))
    gc.collect()
    s0 = dev.stats()
    (y,) = tiny.run(t)
    s1 = dev.stats()
    # the output lives in a device buffer that the array keeps: nothing was copied out
    assert s1["bytes_copied"] == s0["bytes_copied"]
    assert s1["live_buffers"] == s0["live_buffers"] + 1
    assert not y.flags.owndata
    assert y.ctypes.data % dev.info.alignment == 0
    del y
    gc.collect()
    assert dev.stats()["live_buffers"] == s0["live_buffers"]


def test_preallocated_outputs_are_written_in_place(dev, two_io):
    a, b = dev.tensor(rand((1, 3, 8, 8), 13)), dev.tensor(rand((2, 8), 14))
    o1, o2 = dev.empty((1, 4, 8, 8), np.float32), dev.empty((2, 5), np.float32)
    np.asarray(o1)[...] = np.nan
    gc.collect()
    s0 = dev.stats()
    y1, y2 = two_io.run([a, b], outputs=[o1, o2])
    s1 = dev.stats()
    assert s1["live_buffers"] == s0["live_buffers"]  # no new buffer
    assert s1["bytes_copied"] == s0["bytes_copied"]
    assert s1["allocations"] == s0["allocations"]
    assert np.shares_memory(y1, np.asarray(o1)) and np.shares_memory(y2, np.asarray(o2))
    assert not np.isnan(np.asarray(o1)).any()


def test_view_cost_independent_of_size(dev):
    small = dev.empty((64, 64), np.float32)
    large = dev.empty((2048, 2048), np.float32)

    def cost(t, n=2000):
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                np.asarray(t)
            best = min(best, (time.perf_counter() - t0) / n)
        return best

    cs, cl = cost(small), cost(large)
    dst = np.empty((2048, 2048), np.float32)
    src = np.asarray(large)
    t0 = time.perf_counter()
    for _ in range(5):
        np.copyto(dst, src)
    copy = (time.perf_counter() - t0) / 5
    assert cl < 3 * cs + 2e-6, (cs, cl)  # 1024x more bytes, same cost
    assert cl < 0.01 * copy, (cl, copy)
