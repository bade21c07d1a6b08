"""DeviceTensor: a dense C-order tensor viewing a CoreBuffer, exported zero-copy as a NumPy array
(``__array_interface__``; the buffer protocol itself on Python 3.12+, where a Python class can define
``__buffer__``) and through DLPack (delegated to that array)."""
from __future__ import annotations

import math
import operator
import sys
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .buffer import CoreBuffer

__all__ = ["DeviceTensor"]

# The dtypes accel has codes for, by numpy kind and item size, with their buffer-protocol format.
_FORMATS = {("f", 4): "f", ("f", 2): "e", ("i", 1): "b", ("i", 2): "h", ("i", 4): "i", ("i", 8): "q",
            ("u", 1): "B", ("u", 2): "H", ("u", 4): "I", ("u", 8): "Q", ("b", 1): "?"}
_MAX_DIMS = 64  # NumPy's limit
_ndarray = np.ndarray


def _format(dtype: np.dtype) -> str:
    if not dtype.isnative:
        return ""
    return _FORMATS.get((dtype.kind, dtype.itemsize), "")


class DeviceTensor:
    """A dense, C-order tensor in device memory (a view of a CoreBuffer)."""

    # _array: a NumPy view made once, of which numpy() gives views; _checked: the fast path's spec
    # this tensor last matched (a tensor never changes, so once is enough).
    __slots__ = ("_buffer", "_buffer_handle", "_shape", "_dtype", "_layout", "_device", "_nbytes", "_size",
                 "_interface", "_array", "_checked", "__weakref__")
    _buffer: CoreBuffer
    _buffer_handle: Any  # its accel_buffer *
    _shape: Tuple[int, ...]
    _dtype: np.dtype[Any]
    _layout: Optional[str]
    _device: Any
    _nbytes: int
    _size: int
    _interface: Optional[Dict[str, Any]]
    _array: Optional[np.ndarray]
    _checked: Any

    def __init__(self, buffer: CoreBuffer, shape: Any, dtype: Any, layout: Optional[str], device: Any) -> None:
        if type(buffer) is not CoreBuffer:
            raise TypeError(f"buffer must be a CoreBuffer, not {type(buffer).__name__}")
        dt = np.dtype(dtype)
        if not _format(dt):
            raise TypeError(f"DeviceTensor: unsupported dtype {dt} (float32, float16, int8..int64, "
                            f"uint8..uint64 or bool, native byte order)")
        if layout is not None and not isinstance(layout, str):
            raise TypeError("DeviceTensor: layout must be a str or None")
        dims = tuple(shape)
        if len(dims) > _MAX_DIMS:
            raise ValueError("DeviceTensor: more than 64 dimensions")
        for d in dims:
            if isinstance(d, float) or not hasattr(type(d), "__index__"):
                raise TypeError("DeviceTensor: shape must be a tuple of ints")
        dims = tuple(operator.index(d) for d in dims)
        if any(d < 0 for d in dims):
            raise ValueError(f"DeviceTensor: negative dimension in shape {dims!r}")
        size = math.prod(dims)
        if size * dt.itemsize > buffer.nbytes:
            raise ValueError(f"DeviceTensor: shape {dims!r} of {dt} needs more than the buffer's "
                             f"{buffer.nbytes} bytes")
        self._buffer = buffer
        self._buffer_handle = buffer._handle  # its accel_buffer*, kept by the buffer
        self._shape = dims
        self._dtype = dt
        self._layout = layout
        self._device = device
        self._size = size
        self._nbytes = size * dt.itemsize
        self._interface: Optional[Dict[str, Any]] = None
        self._array: Optional[np.ndarray] = None
        self._checked: Any = None

    @property
    def shape(self) -> Tuple[int, ...]:
        """The shape, a tuple of ints."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The element type, a numpy.dtype."""
        return self._dtype

    @property
    def layout(self) -> Optional[str]:
        """The image layout ("NCHW", "NHWC") or None."""
        return self._layout

    @property
    def nbytes(self) -> int:
        """Size in bytes: prod(shape) * dtype.itemsize."""
        return self._nbytes

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return self._size

    @property
    def device(self) -> Any:
        """The device the tensor belongs to, as given when it was made."""
        return self._device

    @property
    def buffer(self) -> CoreBuffer:
        """The CoreBuffer holding the tensor's memory."""
        return self._buffer

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        # Made once: NumPy reads it on every np.asarray(t), and the array it makes keeps t alive.
        if self._interface is None:
            self._interface = {"version": 3, "shape": self._shape, "typestr": self._dtype.str,
                               "data": (self._buffer.address, self._buffer._readonly), "strides": None}
        return self._interface

    def numpy(self) -> np.ndarray:
        """The zero-copy NumPy view (np.asarray(t))."""
        # A view of a view made from the buffer's memory (a seventh of np.asarray's cost); it keeps
        # that memory alive, and the tensor need not be.
        a = self._array
        if a is None:
            a = self._array = _ndarray(self._shape, self._dtype, self._buffer._memory)
        view: np.ndarray = a.view()
        return view

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        """DLPack export of the NumPy view; the capsule keeps the tensor alive. copy=True is refused."""
        if copy is not None and copy:
            raise BufferError("a DeviceTensor is never copied silently: __dlpack__(copy=True) refused")
        export = np.asarray(self).__dlpack__
        kwargs: Dict[str, Any] = {"stream": stream}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        if copy is not None:
            kwargs["copy"] = copy
        try:
            return export(**kwargs)
        except TypeError:
            # NumPy before 2.1 knows only `stream`: it then gives the legacy (unversioned) capsule,
            # which the DLPack protocol allows; a device other than the CPU is still refused.
            if len(kwargs) == 1 or (dl_device is not None and tuple(dl_device) != (1, 0)):
                raise
            return export(stream=stream)

    def __dlpack_device__(self) -> Tuple[int, int]:
        """(kDLCPU, 0)"""
        return (1, 0)

    def __repr__(self) -> str:
        d = self._device
        if isinstance(d, str):
            device = repr(d)
        elif hasattr(d, "uri"):
            device = repr(d.uri)
        else:
            device = repr(d)
        return (f"DeviceTensor(shape={self._shape!r}, dtype={self._dtype}, layout={self._layout}, "
                f"device={device})")

    if sys.version_info >= (3, 12):
        def __buffer__(self, flags: int) -> memoryview:
            return memoryview(np.asarray(self))
