"""A ctypes binding of libaccel written the way a user would write one: the baseline column of
bench_frontends.py.

It loads the installed package's ``accel/lib/libaccel.so`` with ``ctypes.CDLL`` (which releases the GIL
around every call), declares the argtypes and restypes it uses from ``libaccel/include/accel/accel.h``,
and wraps the handles in small classes whose ``__del__`` drops the reference. It never imports the
``accel`` package (that would load a front-end core): it only borrows the package's lib folder, and
its ``_blas.preload()`` (loaded from its file), which makes the emulator driver's OpenBLAS loadable
where the driver's RUNPATH does not reach it (a virtualenv over the system's site-packages).
"""
from __future__ import annotations

import ctypes
import importlib.util
import itertools
import math
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, byref, c_char, c_char_p, c_float, c_int32, c_int64,
                    c_size_t, c_uint8, c_uint32, c_uint64, c_void_p)
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

MAX_DIMS = 8
DTYPES = {1: np.float32, 2: np.float16, 3: np.int8, 4: np.uint8, 5: np.int16, 6: np.int32, 7: np.int64,
          8: np.uint16, 9: np.uint32, 10: np.uint64, 11: np.bool_}


class Quantization(Structure):
    _fields_ = [("type", c_int32), ("axis", c_int32), ("count", c_uint32), ("reserved", c_uint32),
                ("scales", POINTER(c_float)), ("zero_points", POINTER(c_int32)), ("shifts", POINTER(c_uint8))]


class TensorInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("dtype", c_int32), ("layout", c_int32), ("ndim", c_uint32),
                ("name", c_char_p), ("shape", c_int64 * MAX_DIMS), ("strides", c_int64 * MAX_DIMS),
                ("byte_size", c_uint64), ("quant", Quantization)]


JobCallback = CFUNCTYPE(None, c_void_p, c_int32, c_void_p)


class RunOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("priority", c_int32), ("core_mask", c_uint64),
                ("timeout_us", c_int64), ("flags", c_uint32), ("reserved", c_uint32),
                ("callback", JobCallback), ("user_data", c_void_p)]


def _package_dir() -> str:
    spec = importlib.util.find_spec("accel")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the accel package is not installed")
    return next(iter(spec.submodule_search_locations))


def _preload_blas(pkg: str) -> None:
    spec = importlib.util.spec_from_file_location("_accel_blas_for_ctypes", os.path.join(pkg, "runtime", "_blas.py"))
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.preload()


def _load() -> ctypes.CDLL:
    pkg = _package_dir()
    _preload_blas(pkg)
    lib = ctypes.CDLL(os.path.join(pkg, "lib", "libaccel.so"))
    handle_out = POINTER(c_void_p)
    handles = POINTER(c_void_p)
    signatures = {
        "accel_status_name": ([c_int32], c_char_p),
        "accel_last_error_message": ([], c_char_p),
        "accel_device_open": ([c_char_p, handle_out], c_int32),
        "accel_device_release": ([c_void_p], None),
        "accel_buffer_alloc": ([c_void_p, c_uint64, handle_out], c_int32),
        "accel_buffer_release": ([c_void_p], None),
        "accel_buffer_host_ptr": ([c_void_p, POINTER(c_void_p)], c_int32),
        "accel_buffer_size": ([c_void_p, POINTER(c_uint64)], c_int32),
        "accel_buffer_write": ([c_void_p, c_uint64, c_void_p, c_uint64], c_int32),
        "accel_buffer_write_strided": ([c_void_p, c_uint64, c_void_p, c_uint32, POINTER(c_int64),
                                        POINTER(c_int64), c_uint32], c_int32),
        "accel_model_load_memory": ([c_void_p, c_char_p, c_uint64, handle_out], c_int32),
        "accel_model_release": ([c_void_p], None),
        "accel_model_input_count": ([c_void_p, POINTER(c_size_t)], c_int32),
        "accel_model_output_count": ([c_void_p, POINTER(c_size_t)], c_int32),
        "accel_model_input_info": ([c_void_p, c_size_t, POINTER(TensorInfo)], c_int32),
        "accel_model_output_info": ([c_void_p, c_size_t, POINTER(TensorInfo)], c_int32),
        "accel_run": ([c_void_p, handles, c_size_t, handles, c_size_t, POINTER(RunOptions)], c_int32),
        "accel_job_submit": ([c_void_p, handles, c_size_t, handles, c_size_t, POINTER(RunOptions),
                              handle_out], c_int32),
        "accel_job_wait": ([c_void_p, c_int64], c_int32),
        "accel_job_release": ([c_void_p], None),
    }
    for name, (argtypes, restype) in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = restype
    return lib


lib = _load()


class AccelError(RuntimeError):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{lib.accel_status_name(status).decode()}: {message}")
        self.status = status


def check(status: int) -> None:
    if status:
        raise AccelError(status, lib.accel_last_error_message().decode("utf-8", "replace"))


class Device:
    def __init__(self, uri: str = "emu") -> None:
        h = c_void_p()
        check(lib.accel_device_open(uri.encode(), byref(h)))
        self.handle = h.value

    def alloc(self, nbytes: int) -> Buffer:
        return Buffer(self, nbytes)

    def load(self, data: bytes) -> Model:
        return Model(self, data)

    def __del__(self) -> None:
        if getattr(self, "handle", None):
            lib.accel_device_release(self.handle)
            self.handle = None


class Buffer:
    def __init__(self, device: Device, nbytes: int) -> None:
        h = c_void_p()
        check(lib.accel_buffer_alloc(device.handle, max(nbytes, 1), byref(h)))
        self.handle = h.value
        ptr = c_void_p()
        check(lib.accel_buffer_host_ptr(self.handle, byref(ptr)))
        self.address = ptr.value
        self.nbytes = nbytes

    def numpy(self, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
        """A zero-copy view; the ctypes array it views holds this Buffer, so the view keeps it alive."""
        dtype = np.dtype(dtype)
        count = math.prod(shape)
        raw = (c_char * (count * dtype.itemsize)).from_address(self.address)
        raw.owner = self
        return np.frombuffer(raw, dtype, count).reshape(shape)

    def write(self, array: np.ndarray) -> None:
        """One copy of the array's bytes in C order, from any strides."""
        if array.nbytes > self.nbytes:
            raise ValueError(f"{array.nbytes} bytes do not fit in a buffer of {self.nbytes}")
        if array.flags.c_contiguous:
            check(lib.accel_buffer_write(self.handle, 0, array.ctypes.data, array.nbytes))
            return
        nd = array.ndim
        shape = (c_int64 * nd)(*array.shape)
        strides = (c_int64 * nd)(*array.strides)
        check(lib.accel_buffer_write_strided(self.handle, 0, array.ctypes.data, nd, shape, strides,
                                             array.itemsize))

    def __del__(self) -> None:
        if getattr(self, "handle", None):
            lib.accel_buffer_release(self.handle)
            self.handle = None


class Spec:
    """One model input or output: what a caller needs to feed or read it."""

    def __init__(self, info: TensorInfo) -> None:
        self.name = info.name.decode()
        self.shape = tuple(info.shape[:info.ndim])
        self.dtype = np.dtype(DTYPES[info.dtype])
        self.byte_size = int(info.byte_size)


# Completion callbacks by job key: one C trampoline for every job (a CFUNCTYPE object must outlive
# every call made through it, so it is made once, here).
_callbacks: Dict[int, Callable[[int], None]] = {}
_keys = itertools.count(1)


def _on_done(job: int, status: int, user_data: int) -> None:
    _callbacks.pop(user_data)(status)


_on_done_c = JobCallback(_on_done)


class Job:
    def __init__(self, handle: int) -> None:
        self.handle = handle

    def wait(self) -> None:
        check(lib.accel_job_wait(self.handle, -1))

    def release(self) -> None:
        if self.handle:
            lib.accel_job_release(self.handle)
            self.handle = None

    __del__ = release


def _handles(buffers: Sequence[Buffer]):
    return (c_void_p * len(buffers))(*[b.handle for b in buffers])


class Model:
    def __init__(self, device: Device, data: bytes) -> None:
        h = c_void_p()
        check(lib.accel_model_load_memory(device.handle, data, len(data), byref(h)))
        self.handle = h.value
        self.device = device
        self.inputs = self._specs(lib.accel_model_input_count, lib.accel_model_input_info)
        self.outputs = self._specs(lib.accel_model_output_count, lib.accel_model_output_info)

    def _specs(self, count_fn, info_fn) -> List[Spec]:
        n = c_size_t()
        check(count_fn(self.handle, byref(n)))
        specs = []
        for i in range(n.value):
            info = TensorInfo(struct_size=ctypes.sizeof(TensorInfo))
            check(info_fn(self.handle, i, byref(info)))
            specs.append(Spec(info))
        return specs

    def run_buffers(self, inputs: Sequence[Buffer], outputs: Sequence[Buffer]) -> None:
        check(lib.accel_run(self.handle, _handles(inputs), len(inputs), _handles(outputs), len(outputs), None))

    def run(self, arrays: Sequence[np.ndarray]) -> List[np.ndarray]:
        """Copies NumPy inputs into fresh buffers, runs, and returns views of fresh output buffers."""
        if len(arrays) != len(self.inputs):
            raise ValueError(f"expected {len(self.inputs)} inputs, got {len(arrays)}")
        ins = []
        for spec, a in zip(self.inputs, arrays):
            if a.dtype != spec.dtype or a.shape != spec.shape:
                raise ValueError(f"input {spec.name!r}: expected {spec.dtype}{spec.shape}, "
                                 f"got {a.dtype}{a.shape}")
            buf = self.device.alloc(spec.byte_size)
            buf.write(a)
            ins.append(buf)
        outs = [self.device.alloc(s.byte_size) for s in self.outputs]
        self.run_buffers(ins, outs)
        return [b.numpy(s.shape, s.dtype) for b, s in zip(outs, self.outputs)]

    def submit(self, inputs: Sequence[Buffer], outputs: Sequence[Buffer],
               on_done: Callable[[int], None]) -> Job:
        """Submits one run; on_done(status) is called on the driver's completion thread."""
        key = next(_keys)
        _callbacks[key] = on_done
        opts = RunOptions(struct_size=ctypes.sizeof(RunOptions), callback=_on_done_c, user_data=key)
        job = c_void_p()
        status = lib.accel_job_submit(self.handle, _handles(inputs), len(inputs), _handles(outputs),
                                      len(outputs), byref(opts), byref(job))
        if status:
            _callbacks.pop(key, None)
            check(status)
        return Job(job.value)

    def __del__(self) -> None:
        if getattr(self, "handle", None):
            lib.accel_model_release(self.handle)
            self.handle = None
