"""Device.wrap: a DeviceTensor over the memory of any buffer-protocol object (a camera or decoder frame),
zero copy (accel_buffer_import). Runs on it read the object's current bytes and copy nothing; the tensor
and every job using it keep the object alive; a read-only object gives a read-only tensor; a buffer that
cannot be used as it is (wrong size, not C-contiguous, misaligned, a backend that cannot import) is
refused with an error that says so and points to Device.tensor, which copies."""
from __future__ import annotations

import gc
import mmap
import time
import weakref

import numpy as np
import pytest

import accel
from conftest import BACKEND, EXACT_COPIES, IMPORTS_MEMORY, buffer_protocol

ALIGN = 64  # every backend's (accel.h: Device.info.alignment); checked in test_alignment_is_the_devices


def copied(dev):
    return dev.stats()["bytes_copied"]


def aligned_empty(shape, dtype, align=ALIGN, offset=0):
    """An uninitialized C-contiguous array whose data is `offset` bytes past an `align`-byte boundary."""
    dt = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dt.itemsize
    raw = np.empty(nbytes + 2 * align, np.uint8)
    start = (-raw.ctypes.data) % align + offset
    return raw[start:start + nbytes].view(dt).reshape(shape)


def aligned_bytes_like(make, data, tries=400):
    """`make(data)` (bytes, bytearray...) for one whose memory happens to be 64-byte aligned: their
    allocator aligns to 16 bytes only, so a few tries find one."""
    kept = []  # the misaligned ones stay alive, so that the next try gets another address
    for _ in range(tries):
        obj = make(bytearray(data))  # a new object each time (bytes(b) is b itself)
        if np.frombuffer(obj, np.uint8).ctypes.data % ALIGN == 0:
            return obj
        kept.append(obj)
    raise AssertionError(f"no 64-byte aligned {make.__name__} in {tries} tries")


def wrap_or_refused(dev, obj, **kwargs):
    """dev.wrap(obj, ...), or on a backend that cannot import, None once the refusal was checked."""
    if IMPORTS_MEMORY:
        return dev.wrap(obj, **kwargs)
    with pytest.raises(accel.UnsupportedError, match=f"backend '{BACKEND}' cannot use memory it did not allocate"):
        dev.wrap(obj, **kwargs)
    return None


def test_alignment_is_the_devices(dev):
    assert dev.info.alignment == ALIGN


# ---- zero copy ----------------------------------------------------------------------------------------


def test_shares_the_arrays_memory(dev):
    a = aligned_empty((4, 16), np.float32)
    a[:] = np.arange(64, dtype=np.float32).reshape(4, 16)
    c0 = copied(dev)
    t = wrap_or_refused(dev, a)
    if t is None:
        return
    assert (t.shape, t.dtype, t.layout, t.device) == ((4, 16), np.float32, None, dev)
    v = np.asarray(t)
    assert v.ctypes.data == a.ctypes.data and v.flags.writeable
    v[1, 2] = -5.0  # both ways: the tensor is the array's memory
    assert a[1, 2] == -5.0
    a[3, 3] = 9.0
    assert t.numpy()[3, 3] == 9.0
    assert copied(dev) == c0


def test_run_copies_nothing_and_matches_a_copy(dev, tiny):
    x = aligned_empty((1, 16), np.float32)
    x[:] = np.random.default_rng(5).standard_normal((1, 16))
    t = wrap_or_refused(dev, x)
    if t is None:
        return
    expected = tiny.run(dev.tensor(x.copy()))[0]
    out = dev.empty((1, 8), np.float32)
    c0 = copied(dev)
    for _ in range(3):
        got = tiny.run(t, outputs=[out])[0]
        np.testing.assert_array_equal(got, expected)
        got = tiny.run([t])[0]  # fresh outputs
        np.testing.assert_array_equal(got, expected)
    if EXACT_COPIES:  # vart copies into its runner's own buffers (conftest.EXACT_COPIES)
        assert copied(dev) == c0


def test_a_run_sees_the_sources_current_bytes(dev, tiny):
    x = aligned_empty((1, 16), np.float32)
    rng = np.random.default_rng(6)
    x[:] = rng.standard_normal((1, 16))
    t = wrap_or_refused(dev, x)
    if t is None:
        return
    first = tiny.run(t)[0]
    np.testing.assert_array_equal(first, tiny.run(x.copy())[0])
    x[:] = rng.standard_normal((1, 16))  # written through the user's array, never copied in again
    second = tiny.run(t)[0]
    np.testing.assert_array_equal(second, tiny.run(x.copy())[0])
    assert not np.array_equal(first, second)


def test_wrapped_output_receives_the_result(dev, tiny):
    x = np.random.default_rng(7).standard_normal((1, 16)).astype(np.float32)
    y = aligned_empty((1, 8), np.float32)
    y[:] = np.nan
    t = wrap_or_refused(dev, y)
    if t is None:
        return
    tiny.run(x, outputs=[t])
    np.testing.assert_array_equal(y, tiny.run(x)[0])


def test_run_async_on_wrapped_memory(dev, tiny):
    x = aligned_empty((1, 16), np.float32)
    x[:] = np.random.default_rng(8).standard_normal((1, 16))
    t = wrap_or_refused(dev, x)
    if t is None:
        return
    futures = [tiny.run_async(t) for _ in range(4)]
    for f in futures:
        np.testing.assert_array_equal(f.result(timeout=30)[0], tiny.run(x.copy())[0])


# ---- what can be wrapped ------------------------------------------------------------------------------


def test_shape_and_dtype_defaults(dev):
    a = aligned_empty((2, 3, 4), np.int16)
    t = wrap_or_refused(dev, a)
    if t is None:
        return
    assert (t.shape, t.dtype) == ((2, 3, 4), np.int16)  # a NumPy array keeps its own
    t = dev.wrap(a, shape=(6, 4), dtype=np.int16)
    assert t.shape == (6, 4)
    t = dev.wrap(a, dtype=np.uint8)  # another dtype: 1-D, its bytes
    assert (t.shape, t.dtype) == ((48,), np.uint8)
    t = dev.wrap(memoryview(a))  # any other buffer: 1-D bytes unless a shape is given
    assert (t.shape, t.dtype) == ((48,), np.uint8)
    t = dev.wrap(memoryview(a), dtype=np.float32)
    assert (t.shape, t.dtype) == ((12,), np.float32)
    t = dev.wrap(memoryview(a), shape=(1, 3, 4, 4), dtype=np.uint8, layout="NCHW")
    assert (t.shape, t.layout) == ((1, 3, 4, 4), "NCHW")
    assert np.asarray(t).ctypes.data == a.ctypes.data


def test_memoryview_bytearray_and_mmap(dev):
    data = bytes(range(256)) * 4
    for obj in (aligned_bytes_like(bytearray, data), memoryview(aligned_bytes_like(bytearray, data))):
        t = wrap_or_refused(dev, obj, shape=(4, 256))
        if t is None:
            return
        v = np.asarray(t)
        assert v.flags.writeable and v[1, 255] == 255
        v[0, 0] = 77
        assert bytes(obj)[0] == 77
    with mmap.mmap(-1, 4096) as m:  # anonymous mappings are page-aligned
        m[:4] = b"\x01\x02\x03\x04"
        t = dev.wrap(m, shape=(1024,), dtype=np.uint32)
        assert np.asarray(t)[0] == int.from_bytes(b"\x01\x02\x03\x04", "little")
        with pytest.raises(BufferError):
            m.close()  # exported while the tensor lives
        del t
        gc.collect()


def test_bytearray_cannot_be_resized_while_wrapped(dev):
    ba = aligned_bytes_like(bytearray, bytes(1024))
    t = wrap_or_refused(dev, ba)
    if t is None:
        return
    with pytest.raises(BufferError):
        ba.extend(b"more")  # it would move the memory the tensor points at
    del t
    gc.collect()
    ba.extend(b"more")


def test_read_only_objects_give_read_only_tensors(dev, tiny):
    # 4 KiB: bytes that large come from malloc, 16-byte aligned, so a few tries find a 64-byte aligned one.
    data = np.random.default_rng(9).standard_normal(1024).astype(np.float32).tobytes()
    for obj in (aligned_bytes_like(bytes, data), memoryview(aligned_bytes_like(bytearray, data)).toreadonly()):
        t = wrap_or_refused(dev, obj, shape=(64, 16), dtype=np.float32)
        if t is None:
            return
        assert t.buffer.readonly
        for view in (np.asarray(t), t.numpy()):
            assert not view.flags.writeable
            with pytest.raises(ValueError, match="read-only"):
                view[0, 0] = 1.0
        if buffer_protocol():
            assert memoryview(t).readonly
        with pytest.raises(accel.InvalidArgumentError, match="read-only"):
            t.buffer.write(np.zeros(16, np.float32))
        # An input, yes (only read); an output, never.
        x = dev.wrap(memoryview(obj)[:64], shape=(1, 16), dtype=np.float32)
        assert x.buffer.readonly
        expected = tiny.run(np.frombuffer(data, np.float32)[:16].reshape(1, 16))[0]
        np.testing.assert_array_equal(tiny.run(x)[0], expected)
        out = dev.wrap(memoryview(obj)[64:96], shape=(1, 8), dtype=np.float32)
        with pytest.raises(accel.InvalidArgumentError, match=r"outputs\[0\] is read-only memory"):
            tiny.run(x, outputs=[out])
        with pytest.raises(accel.InvalidArgumentError, match=r"outputs\[0\] is read-only memory"):
            tiny.run_async(x, outputs=[out])
        assert bytes(obj) == data  # never written


def test_read_only_numpy_array(dev):
    a = aligned_empty((8,), np.float32)
    a[:] = 1.0
    a.flags.writeable = False
    t = wrap_or_refused(dev, a)
    if t is None:
        return
    assert t.buffer.readonly and not np.asarray(t).flags.writeable


# ---- refusals ---------------------------------------------------------------------------------------------


def test_misaligned_memory_is_refused(dev):
    a = aligned_empty((65,), np.uint8)
    a[:] = 0
    with pytest.raises(accel.AlignmentError) as e:
        dev.wrap(a[1:])  # one byte past the boundary
    message = str(e.value)
    assert f"0x{a[1:].ctypes.data:x}" in message and "64 bytes" in message and "Device.tensor" in message
    t = dev.tensor(a[1:])  # ... which copies it
    np.testing.assert_array_equal(np.asarray(t), a[1:])


def test_size_mismatch_is_refused(dev):
    a = aligned_empty((100,), np.uint8)
    with pytest.raises(accel.ShapeError, match=r"shape \(3, 32\) of uint8 is 96 bytes, but the ndarray holds 100"):
        dev.wrap(a, shape=(3, 32))
    with pytest.raises(accel.ShapeError, match=r"shape \(30,\) of float32 is 120 bytes, but the ndarray holds 100"):
        dev.wrap(a, shape=30, dtype=np.float32)
    with pytest.raises(accel.ShapeError, match="not a whole number of float32 items"):
        dev.wrap(memoryview(aligned_empty((10,), np.uint8)), dtype=np.float32)
    with pytest.raises(accel.ShapeError, match="empty"):
        dev.wrap(aligned_empty((0,), np.float32))


def test_non_contiguous_memory_is_refused(dev):
    a = aligned_empty((8, 8), np.float32)
    for view in (a[:, ::2], a.T, memoryview(a)[::2]):
        with pytest.raises(ValueError, match=r"not C-contiguous.*Device.tensor, which copies"):
            dev.wrap(view)


def test_bad_arguments(dev):
    with pytest.raises(TypeError, match=r"buffer protocol.*not list"):
        dev.wrap([1, 2, 3])
    a = aligned_empty((16,), np.float64)
    with pytest.raises(accel.DTypeError):
        dev.wrap(a)  # float64 is not a device dtype
    with pytest.raises(accel.InvalidArgumentError):
        dev.wrap(a, shape=(2, 64), dtype=np.uint8, layout="NCHW")  # a layout needs 4-D


def test_closed_device(dev):
    dev.close()
    with pytest.raises(accel.ClosedError):
        dev.wrap(aligned_empty((64,), np.uint8))


def test_backend_refusal_is_clean(dev):
    a = aligned_empty((64,), np.uint8)
    if IMPORTS_MEMORY:
        assert dev.wrap(a).buffer.imported
    else:
        refusal = f"backend '{BACKEND}' cannot use memory it did not allocate; Device.tensor copies it instead"
        with pytest.raises(accel.UnsupportedError, match=refusal):
            dev.wrap(a)


# ---- lifetimes ------------------------------------------------------------------------------------------


def _wait_until_dead(ref, seconds=5.0):
    deadline = time.monotonic() + seconds
    while ref() is not None and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    return ref() is None


def test_tensor_keeps_the_object_alive(dev, tiny):
    x = aligned_empty((1, 16), np.float32)
    x[:] = np.random.default_rng(10).standard_normal((1, 16))
    expected = tiny.run(x.copy())[0]
    base = x.base  # what owns the memory
    ref = weakref.ref(base)
    t = wrap_or_refused(dev, x)
    if t is None:
        return
    del x, base
    gc.collect()
    assert ref() is not None
    np.testing.assert_array_equal(tiny.run(t)[0], expected)
    gc.collect()
    np.testing.assert_array_equal(tiny.run(t)[0], expected)
    del t
    assert _wait_until_dead(ref)


def slow_input(seed):
    """An input of the slow model, (512, 512) float32 in memory aligned for the device, small enough that its
    chained products stay bounded."""
    x = aligned_empty((512, 512), np.float32)
    x[:] = np.random.default_rng(seed).standard_normal((512, 512)) * 0.01
    return x


def test_job_keeps_the_object_alive(dev, slow):
    # slow runs for tens of milliseconds: the tensor and the array are dropped while it runs.
    x = slow_input(11)
    expected = slow.run(x.copy())[0]
    ref = weakref.ref(x.base)
    t = wrap_or_refused(dev, x)
    if t is None:
        return
    future = slow.run_async(t)
    del t, x
    gc.collect()
    np.testing.assert_allclose(future.result(timeout=60)[0], expected, rtol=0, atol=0)
    assert _wait_until_dead(ref)  # the job's hold goes with its completion


def test_sync_run_interrupted_keeps_memory_until_the_job_ends(dev, slow):
    # A KeyboardInterrupt while a run waits: the job may still be running, so the memory it reads must
    # outlive the Python objects; the next run (on fresh memory) is right.
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        raise AssertionError("needs the main thread")
    x = slow_input(12)
    expected = slow.run(x.copy())[0]
    ref = weakref.ref(x.base)
    t = wrap_or_refused(dev, x)
    if t is None:
        return
    timer = threading.Timer(0.005, lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT))
    finished = False
    try:
        timer.start()
        slow.run(t)
        finished = True
        timer.join()
        time.sleep(2)  # the run was faster than the timer: the interrupt comes here
    except KeyboardInterrupt:
        pass
    timer.join()
    assert not finished, "the run ended before the interrupt"
    del t, x
    gc.collect()
    assert _wait_until_dead(ref, 30)  # released once the job is over, not leaked
    y = slow_input(12)
    np.testing.assert_allclose(slow.run(dev.wrap(y))[0], expected, rtol=0, atol=0)
