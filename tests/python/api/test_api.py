"""The public Python API, end to end: module functions, Device, Model, TensorInfo, DeviceTensor, run,
run_async, the error classes, numerics against onnxruntime."""
from __future__ import annotations

import concurrent.futures
import os
import pathlib

import numpy as np
import onnx
import pytest

import accel
from conftest import DEVICE_URI, NCHW, buffer_protocol, make_tiny, ort_run, rand

ALL_DTYPES = [np.float32, np.float16, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
              np.int64, np.uint64, np.bool_]


# ---------------------------------------------------------------------------------------------------
# module level
# ---------------------------------------------------------------------------------------------------

def test_frontend_is_the_selected_one():
    assert accel.frontend == os.environ.get("ACCEL_FRONTEND", "pybind")
    assert accel.frontend in ("pybind", "cffi")


def test_frontend_features_describe_the_buffer_protocol():
    feats = accel.frontend_features
    assert isinstance(feats, dict)
    # the pybind11 core has the buffer protocol; the cffi core declares __array_interface__ instead
    assert feats["buffer_protocol"] is (accel.frontend == "pybind")
    assert feats["array_interface"] is (accel.frontend == "cffi")
    assert feats["dlpack"] is True


def test_backends_lists_the_emulator():
    b = accel.backends()
    assert isinstance(b, list) and all(isinstance(s, str) for s in b)
    assert "emu" in b


def test_version():
    assert isinstance(accel.__version__, str) and accel.__version__.count(".") >= 1


def test_abi_and_library_version():
    import re

    v = accel.abi_version()
    assert isinstance(v, int) and v >> 16 == 1
    assert re.fullmatch(r"\d+\.\d+\.\d+", accel.library_version())


# ---------------------------------------------------------------------------------------------------
# Device
# ---------------------------------------------------------------------------------------------------

def test_open_info_reflects_the_uri():
    with accel.open("emu:cores=2,pool=64M,max_inflight=8") as d:
        info = d.info
        assert info.backend == "emu"
        assert isinstance(info.name, str) and info.name
        assert info.cores == 2
        assert info.max_inflight == 8
        assert info.pool_bytes == 64 << 20
        assert info.alignment == 64
        assert info.debug is False


def test_open_debug_mode():
    with accel.open("emu:cores=1,debug=1") as d:
        assert d.info.debug is True
        t = d.empty((3, 5), np.float32)
        np.asarray(t)[...] = 1
        assert float(np.asarray(t).sum()) == 15.0


def test_info_is_a_dataclass():
    import dataclasses

    with accel.open(DEVICE_URI) as d:
        assert dataclasses.is_dataclass(d.info)
        fields = {f.name for f in dataclasses.fields(d.info)}
        assert {"name", "backend", "cores", "max_inflight", "debug", "alignment", "pool_bytes"} <= fields


def test_context_manager_closes():
    with accel.open(DEVICE_URI) as d:
        assert isinstance(d, accel.Device)
        assert d.closed is False
    assert d.closed is True


def test_close_is_idempotent():
    d = accel.open(DEVICE_URI)
    d.close()
    d.close()
    assert d.closed


def test_open_returns_device_without_with():
    d = accel.open("emu")
    try:
        assert d.info.backend == "emu"
        assert d.info.cores >= 1
    finally:
        d.close()


def test_stats_keys_and_counting(dev):
    s0 = dev.stats()
    keys = {"bytes_in_use", "peak_bytes_in_use", "live_buffers", "allocations", "bytes_copied",
            "jobs_submitted", "jobs_completed"}
    assert keys <= set(s0)
    assert all(isinstance(s0[k], int) for k in keys)
    t = dev.empty((256, 256), np.float32)
    s1 = dev.stats()
    assert s1["live_buffers"] == s0["live_buffers"] + 1
    assert s1["allocations"] == s0["allocations"] + 1
    assert s1["bytes_in_use"] >= s0["bytes_in_use"] + t.nbytes
    assert s1["peak_bytes_in_use"] >= s1["bytes_in_use"]
    del t
    import gc

    gc.collect()
    s2 = dev.stats()
    assert s2["live_buffers"] == s0["live_buffers"]
    assert s2["bytes_in_use"] == s0["bytes_in_use"]
    assert s2["peak_bytes_in_use"] >= s1["bytes_in_use"]


def test_stats_count_jobs(dev, tiny):
    s0 = dev.stats()
    for i in range(3):
        tiny.run(rand((1, 16), i))
    s1 = dev.stats()
    assert s1["jobs_submitted"] - s0["jobs_submitted"] == 3
    assert s1["jobs_completed"] - s0["jobs_completed"] == 3


# ---------------------------------------------------------------------------------------------------
# DeviceTensor
# ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, "float32", np.dtype("float32")])
def test_empty_accepts_dtype_spellings(dev, dtype):
    t = dev.empty((2, 3, 4), dtype)
    assert isinstance(t, accel.DeviceTensor)
    assert t.shape == (2, 3, 4)
    assert t.dtype == np.dtype(np.float32) and isinstance(t.dtype, np.dtype)
    assert t.nbytes == 2 * 3 * 4 * 4
    assert t.ndim == 3 and t.size == 24
    assert t.layout is None
    assert t.device is dev


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_empty_every_dtype(dev, dtype):
    t = dev.empty((5, 7), dtype)
    a = np.asarray(t)
    assert a.dtype == np.dtype(dtype) and a.shape == (5, 7)
    a[...] = np.arange(35).reshape(5, 7).astype(dtype)
    assert np.array_equal(t.numpy(), np.arange(35).reshape(5, 7).astype(dtype))


def test_empty_layout(dev):
    t = dev.empty((1, 3, 4, 4), np.float32, layout="NCHW")
    assert t.layout == "NCHW"
    u = dev.empty((1, 4, 4, 3), np.float32, layout="NHWC")
    assert u.layout == "NHWC"


def test_empty_list_shape_and_scalar(dev):
    t = dev.empty([3, 2], np.int32)
    assert t.shape == (3, 2)
    s = dev.empty((), np.float32)
    assert s.shape == () and s.size == 1 and s.nbytes == 4
    np.asarray(s)[()] = 2.5
    assert float(np.asarray(s)) == 2.5


def test_empty_with_a_zero_dimension(dev):
    t = dev.empty((0, 3), np.float32)
    assert t.shape == (0, 3) and t.size == 0 and t.nbytes == 0
    assert np.asarray(t).shape == (0, 3)


def test_debug_device_guard_bytes_stay_intact(tiny_path, cnn_path):
    with accel.open("emu:cores=2,debug=1") as d:
        tiny, cnn = d.load(str(tiny_path)), d.load(str(cnn_path))
        for i in range(20):
            tiny.run(rand((1, 16), i))
            cnn.run_async(np.zeros((1, 3, 64, 64), np.float32)).result(timeout=10)
        t = d.empty((7,), np.uint8)
        np.asarray(t)[...] = 255  # writing the whole view is fine
        d.check()


def test_info_readable_after_close():
    d = accel.open("emu:cores=1")
    d.close()
    assert d.info.cores == 1 and d.closed


def test_empty_buffers_are_aligned(dev):
    for n in (1, 3, 17, 1000):
        t = dev.empty((n,), np.uint8)
        assert np.asarray(t).ctypes.data % dev.info.alignment == 0


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tensor_copies_array(dev, dtype):
    src = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    t = dev.tensor(src)
    assert t.shape == src.shape and t.dtype == src.dtype
    assert np.array_equal(np.asarray(t), src)
    assert not np.shares_memory(np.asarray(t), src)
    src[...] = 0  # the tensor is a copy
    assert np.array_equal(np.asarray(t), (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype))


def test_tensor_from_strided_array(dev):
    base = np.arange(10 * 12, dtype=np.float32).reshape(10, 12)
    view = base[::-2, 1::3].T
    t = dev.tensor(view)
    assert t.shape == view.shape
    assert np.array_equal(np.asarray(t), view)
    assert np.asarray(t).flags.c_contiguous


def test_tensor_repr(dev):
    t = dev.empty((1, 3, 8, 8), np.float32, layout="NCHW")
    r = repr(t)
    assert r.startswith("DeviceTensor(")
    assert "(1, 3, 8, 8)" in r and "float32" in r and "NCHW" in r and dev.info.backend in r


def test_numpy_view_and_memoryview(dev):
    t = dev.empty((4, 6), np.float32)
    a = t.numpy()
    b = np.asarray(t)
    assert np.shares_memory(a, b)
    a[...] = 3.0
    assert np.all(b == 3.0)
    if buffer_protocol():
        m = memoryview(t)
        assert m.format == "f" and m.shape == (4, 6) and not m.readonly
        assert m.strides == (24, 4) and m.nbytes == 96
    else:
        with pytest.raises(TypeError):
            memoryview(t)
        ai = t.__array_interface__
        assert ai["shape"] == (4, 6) and ai["typestr"].endswith("f4") and ai["data"][1] is False


def test_dlpack(dev):
    t = dev.empty((3, 4), np.float32)
    np.asarray(t)[...] = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert tuple(t.__dlpack_device__()) == (1, 0)
    d = np.from_dlpack(t)
    assert np.shares_memory(d, np.asarray(t))
    assert np.array_equal(d, np.arange(12, dtype=np.float32).reshape(3, 4))


# ---------------------------------------------------------------------------------------------------
# Model loading and metadata
# ---------------------------------------------------------------------------------------------------

def test_tensor_info_fields(tiny):
    assert isinstance(tiny, accel.Model)
    (x,) = tiny.inputs
    (y,) = tiny.outputs
    assert isinstance(x, accel.TensorInfo)
    assert x.name == "x" and x.shape == (1, 16) and x.dtype == np.dtype(np.float32)
    assert isinstance(x.dtype, np.dtype)
    assert x.layout is None and x.quant is None
    assert x.strides == (64, 4) and x.nbytes == 64
    assert y.name == "y" and y.shape == (1, 8) and y.dtype == np.dtype(np.float32)
    assert y.strides == (32, 4) and y.nbytes == 32


def test_tensor_info_cnn_layout(cnn):
    (x,) = cnn.inputs
    assert x.name == "image" and x.shape == (1, 3, 64, 64) and x.layout == NCHW
    assert cnn.outputs[0].shape == (1, 10)


def test_tensor_info_two_io(two_io):
    assert [t.name for t in two_io.inputs] == ["a", "b"]
    assert [t.name for t in two_io.outputs] == ["conv_out", "mm_out"]
    assert two_io.inputs[0].layout == NCHW
    assert two_io.inputs[1].layout is None
    assert two_io.outputs[0].shape == (1, 4, 8, 8) and two_io.outputs[1].shape == (2, 5)


def test_load_spellings_agree(dev, tiny_path, tiny_accm):
    x = rand((1, 16), 5)
    expected = ort_run(tiny_path, {"x": x})[0]
    for src in (str(tiny_path), pathlib.Path(tiny_path), tiny_path.read_bytes(), str(tiny_accm),
                pathlib.Path(tiny_accm), tiny_accm.read_bytes()):
        m = dev.load(src)
        (y,) = m.run(x)
        np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_load_input_shapes_fixes_symbolic_dims(dev, symbolic_path):
    m = dev.load(str(symbolic_path), input_shapes={"x": (3, 16)})
    assert m.inputs[0].shape == (3, 16) and m.outputs[0].shape == (3, 4)
    x = rand((3, 16), 1)
    (y,) = m.run(x)
    np.testing.assert_allclose(y, ort_run(symbolic_path, {"x": x})[0], rtol=1e-5, atol=1e-5)
    m5 = dev.load(str(symbolic_path), input_shapes={"x": (5, 16)})
    assert m5.inputs[0].shape == (5, 16)


def test_load_cache_is_keyed_by_content(dev, tmp_path):
    """Same path, new content: the cache must not give the old model back."""
    p = tmp_path / "m.onnx"
    m1 = make_tiny()
    onnx.save(m1, str(p))
    x = rand((1, 16), 3)
    y1 = dev.load(str(p)).run(x)[0].copy()
    m2 = make_tiny()
    for init in m2.graph.initializer:
        if init.name == "b":
            arr = onnx.numpy_helper.to_array(init) + 100.0
            init.CopyFrom(onnx.numpy_helper.from_array(arr.astype(np.float32), "b"))
    onnx.save(m2, str(p))
    y2 = dev.load(str(p)).run(x)[0].copy()
    np.testing.assert_allclose(y2, ort_run(p, {"x": x})[0], rtol=1e-5, atol=1e-4)
    assert not np.allclose(y1, y2)
    # and the first content again gives the first answer
    onnx.save(m1, str(p))
    np.testing.assert_allclose(dev.load(str(p)).run(x)[0], y1, rtol=0, atol=0)


def test_load_compiles_once_per_content(dev, tiny_path, monkeypatch):
    import accel.compiler as compiler

    dev.load(str(tiny_path))  # compiled (or found in the cache) once
    calls = []
    real = compiler.compile_model

    def counting(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(compiler, "compile_model", counting)
    for _ in range(3):
        dev.load(str(tiny_path))
    assert calls == []


def test_model_repr(tiny):
    r = repr(tiny)
    assert "Model" in r and "x" in r


# ---------------------------------------------------------------------------------------------------
# run
# ---------------------------------------------------------------------------------------------------

def test_run_numpy_matches_onnxruntime(tiny, tiny_path):
    x = rand((1, 16), 7)
    out = tiny.run(x)
    assert isinstance(out, list) and len(out) == 1
    (y,) = out
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (1, 8)
    np.testing.assert_allclose(y, ort_run(tiny_path, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_run_cnn_matches_onnxruntime(cnn, cnn_path):
    for seed in range(3):
        x = np.random.default_rng(seed).random((1, 3, 64, 64), dtype=np.float32)
        (y,) = cnn.run(x)
        ref = ort_run(cnn_path, {"image": x})[0]
        assert np.max(np.abs(y - ref)) <= 1e-4 * max(1.0, float(np.max(np.abs(ref))))


def test_run_two_io_list_and_dict(two_io, two_io_path):
    a, b = rand((1, 3, 8, 8), 1), rand((2, 8), 2)
    ref = ort_run(two_io_path, {"a": a, "b": b})
    for got in (two_io.run([a, b]), two_io.run((a, b)), two_io.run({"a": a, "b": b}),
                two_io.run({"b": b, "a": a})):
        assert len(got) == 2
        np.testing.assert_allclose(got[0], ref[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got[1], ref[1], rtol=1e-4, atol=1e-5)


def test_run_single_input_forms(dev, tiny, tiny_path):
    x = rand((1, 16), 8)
    ref = ort_run(tiny_path, {"x": x})[0]
    t = dev.tensor(x)
    for arg in (x, [x], {"x": x}, t, [t], {"x": t}):
        (y,) = tiny.run(arg)
        np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


def test_run_mixed_device_tensor_and_numpy(dev, two_io, two_io_path):
    a, b = rand((1, 3, 8, 8), 3), rand((2, 8), 4)
    ref = ort_run(two_io_path, {"a": a, "b": b})
    got = two_io.run([dev.tensor(a), b])
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-4, atol=1e-5)


def test_run_preallocated_outputs(dev, two_io, two_io_path):
    a, b = rand((1, 3, 8, 8), 5), rand((2, 8), 6)
    ref = ort_run(two_io_path, {"a": a, "b": b})
    o1 = dev.empty((1, 4, 8, 8), np.float32)
    o2 = dev.empty((2, 5), np.float32)
    got = two_io.run([a, b], outputs=[o1, o2])
    np.testing.assert_allclose(np.asarray(o1), ref[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(o2), ref[1], rtol=1e-4, atol=1e-5)
    assert np.shares_memory(got[0], np.asarray(o1)) and np.shares_memory(got[1], np.asarray(o2))


def test_run_outputs_by_name(dev, two_io, two_io_path):
    a, b = rand((1, 3, 8, 8), 15), rand((2, 8), 16)
    ref = ort_run(two_io_path, {"a": a, "b": b})
    o1, o2 = dev.empty((1, 4, 8, 8), np.float32), dev.empty((2, 5), np.float32)
    got = two_io.run({"a": a, "b": b}, outputs={"mm_out": o2, "conv_out": o1})
    np.testing.assert_allclose(np.asarray(o1), ref[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(o2), ref[1], rtol=1e-4, atol=1e-5)
    assert np.shares_memory(got[0], np.asarray(o1)) and np.shares_memory(got[1], np.asarray(o2))


def test_run_outputs_are_fresh_per_run(tiny):
    y1 = tiny.run(rand((1, 16), 1))[0]
    keep = y1.copy()
    y2 = tiny.run(rand((1, 16), 2))[0]
    assert not np.shares_memory(y1, y2)
    assert np.array_equal(y1, keep)


def test_run_options_accepted(tiny, tiny_path):
    x = rand((1, 16), 9)
    ref = ort_run(tiny_path, {"x": x})[0]
    for kw in ({"priority": 0}, {"priority": 255}, {"timeout": 10.0}, {"timeout": None},
               {"priority": 7, "timeout": 5}):
        np.testing.assert_allclose(tiny.run(x, **kw)[0], ref, rtol=1e-5, atol=1e-5)


def test_run_does_not_modify_the_input(tiny):
    x = rand((1, 16), 10)
    keep = x.copy()
    tiny.run(x)
    assert np.array_equal(x, keep)


def test_run_accepts_readonly_input(tiny, tiny_path):
    x = rand((1, 16), 11)
    x.flags.writeable = False
    np.testing.assert_allclose(tiny.run(x)[0], ort_run(tiny_path, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_run_async_returns_a_future(tiny, tiny_path):
    x = rand((1, 16), 12)
    f = tiny.run_async(x)
    assert isinstance(f, concurrent.futures.Future)
    assert isinstance(f, accel.Future)
    (y,) = f.result(timeout=10)
    np.testing.assert_allclose(y, ort_run(tiny_path, {"x": x})[0], rtol=1e-5, atol=1e-5)
    assert f.done() and not f.cancelled() and f.exception() is None


def test_run_async_preallocated_outputs(dev, tiny, tiny_path):
    x = rand((1, 16), 13)
    o = dev.empty((1, 8), np.float32)
    (y,) = tiny.run_async(x, outputs=[o], priority=3, timeout=10).result(timeout=10)
    assert np.shares_memory(y, np.asarray(o))
    np.testing.assert_allclose(np.asarray(o), ort_run(tiny_path, {"x": x})[0], rtol=1e-5, atol=1e-5)


def test_two_devices_are_independent(tiny_path):
    with accel.open("emu:cores=1") as d1, accel.open("emu:cores=1") as d2:
        m1, m2 = d1.load(str(tiny_path)), d2.load(str(tiny_path))
        x = rand((1, 16), 14)
        s2 = d2.stats()
        assert np.array_equal(m1.run(x)[0], m2.run(x)[0])
        m1.run(x)
        assert d2.stats()["jobs_submitted"] == s2["jobs_submitted"] + 1


# ---------------------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------------------

ERROR_CLASSES = ["AccelError", "ShapeError", "DTypeError", "AlignmentError", "ModelFormatError",
                 "OutOfMemoryError", "BusyError", "TimeoutError", "UnsupportedError", "DeviceError",
                 "NotFoundError", "ClosedError", "CancelledError"]


@pytest.mark.parametrize("name", ERROR_CLASSES)
def test_error_classes_exported(name):
    import accel.errors as errors

    cls = getattr(accel, name)
    assert cls is getattr(errors, name)
    assert issubclass(cls, accel.AccelError) and issubclass(cls, Exception)


def test_error_hierarchy():
    assert issubclass(accel.ShapeError, ValueError)
    assert issubclass(accel.DTypeError, TypeError)


@pytest.mark.parametrize("status,name", [(2, "ShapeError"), (3, "DTypeError"), (4, "AlignmentError"),
                                         (5, "ModelFormatError"), (6, "OutOfMemoryError"),
                                         (7, "BusyError"), (8, "TimeoutError"), (9, "UnsupportedError"),
                                         (10, "DeviceError"), (11, "NotFoundError"),
                                         (12, "CancelledError"), (16, "ClosedError")])
def test_from_status_maps_codes(status, name):
    from accel.errors import from_status

    e = from_status(status, "the message")
    assert type(e) is getattr(accel, name)
    assert e.status == status and e.message == "the message"
    assert "the message" in str(e)
