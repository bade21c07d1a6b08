"""``accel.DeviceTensor``: a dense, C-order tensor in device memory, written once over the core's tensor base.

Each core exports a minimal ``CoreTensor`` (CORE_API.md): the CoreBuffer, the shape and dtype the fast path
compares, and the zero-copy export only a core can give (the pybind11 core's buffer protocol; the cffi core's
``__array_interface__``, and ``__buffer__`` from Python 3.12). This class subclasses it (pyzmq's sugar over a
backend): the checks with accel's words, the properties, ``numpy()``, DLPack and the repr. The run cores
recognize it as their base's subclass, by a type check, so the fast path costs what it did.
"""
from __future__ import annotations

import math
import operator
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

import numpy as np

from ._frontend import core
from .dtypes import SUPPORTED_DTYPES

__all__ = ["DeviceTensor", "TensorAPI", "tensor_class", "made_tensor"]

_MAX_DIMS = 64  # NumPy's limit
_ndarray = np.ndarray

if TYPE_CHECKING:
    from .._pybind import CoreTensor as _Base
else:
    _Base = core.CoreTensor


class TensorAPI:
    """What a DeviceTensor is, over either core's CoreTensor (which holds ``_buffer``, ``_shape``, ``_dtype``,
    ``_layout`` and ``_device``): a class made of this and a core's base, with its ``_SLOTS``, is the public
    DeviceTensor of that core (:func:`tensor_class`; tests build one over each core in one process)."""

    # _array: a NumPy view made once, of which numpy() gives views. Slots of the class made with a core's base
    # (a mixin of it cannot hold slots of its own).
    _SLOTS = ("_size", "_nbytes", "_array")
    if not TYPE_CHECKING:  # mypy would take the empty tuple for all the slots its instances have
        __slots__ = ()
    _buffer: Any
    _shape: Tuple[int, ...]
    _dtype: np.dtype
    _layout: Optional[str]
    _device: Any
    _size: int
    _nbytes: int
    _array: Optional[np.ndarray]

    def __init__(self, buffer: Any, shape: Any, dtype: Any, layout: Optional[str], device: Any) -> None:
        dt = np.dtype(dtype)
        if dt not in SUPPORTED_DTYPES:  # native byte order: a swapped dtype is another
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
        nbytes = getattr(buffer, "nbytes", None)
        if isinstance(nbytes, int) and size * dt.itemsize > nbytes:
            raise ValueError(f"DeviceTensor: shape {dims!r} of {dt} needs more than the buffer's {nbytes} bytes")
        super().__init__(buffer, dims, dt, layout, device)  # type: ignore[call-arg]  # the core's CoreTensor
        self._size = size
        self._nbytes = size * dt.itemsize
        self._array = None

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
    def buffer(self) -> Any:
        """The CoreBuffer holding the tensor's memory."""
        return self._buffer

    def numpy(self) -> np.ndarray:
        """The zero-copy NumPy view (np.asarray(t))."""
        # A view of a view made from the buffer's memory (a seventh of np.asarray's cost); it keeps that
        # memory alive, and the tensor need not be. Read-only over read-only memory, as np.asarray(t).
        a = self._array
        if a is None:
            a = self._array = _ndarray(self._shape, self._dtype, self._buffer.memory)
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
            # NumPy before 2.1 knows only `stream`: it then gives the legacy (unversioned) capsule, which the
            # DLPack protocol allows; a device other than the CPU is still refused.
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
        return f"DeviceTensor(shape={self._shape!r}, dtype={self._dtype}, layout={self._layout}, device={device})"


class DeviceTensor(TensorAPI, _Base):
    """A dense, C-order tensor in device memory (a view of a CoreBuffer)."""

    __slots__ = TensorAPI._SLOTS


def made_tensor(buffer: Any, shape: Tuple[int, ...], dtype: np.dtype, layout: Optional[str],
                device: Any) -> DeviceTensor:
    """A DeviceTensor of arguments its device has checked already as DeviceTensor() would (Device.empty and
    Device.wrap: normalize_shape, normalize_dtype, normalize_layout, the bytes within the buffer): those checks
    are not made twice, the base's (memory safety) are. Half the cost of Device.empty on pybind11."""
    t = DeviceTensor.__new__(DeviceTensor)
    _Base.__init__(t, buffer, shape, dtype, layout, device)
    t._size = size = math.prod(shape)
    t._nbytes = size * dtype.itemsize
    t._array = None
    return t


def tensor_class(base: type) -> type:
    """The public DeviceTensor's class over ``base`` (a core's CoreTensor): accel.DeviceTensor for the core
    in use, and for tests the same over the other core."""
    if base is _Base:
        return DeviceTensor
    return type("DeviceTensor", (TensorAPI, base), {"__slots__": TensorAPI._SLOTS, "__doc__": DeviceTensor.__doc__,
                                                     "__module__": __name__, "__qualname__": "DeviceTensor"})
