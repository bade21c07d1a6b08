"""CoreTensor: the core's tensor base, a dense C-order view of a CoreBuffer exported zero-copy as a NumPy array
(``__array_interface__``; the buffer protocol itself on Python 3.12+, where a Python class can define
``__buffer__``). accel.DeviceTensor (python/accel/runtime/device_tensor.py) subclasses it, checks its arguments
first and writes the API (shape, dtype, numpy(), DLPack, repr) once for both cores; this base keeps what the
fast path reads (``_buffer_handle``, ``_checked``) and the export only a core can give."""
from __future__ import annotations

import sys
from typing import Any, Dict, Optional, Set, Tuple

import numpy as np

from .buffer import CoreBuffer

__all__ = ["CoreTensor", "TENSOR_TYPES"]

#: Every class made from CoreTensor (accel.DeviceTensor), not the bare base (which has no numpy()): run_tensors
#: recognizes a tensor by ``type(x) in TENSOR_TYPES``, a hash of the type, where isinstance would walk the MRO.
TENSOR_TYPES: Set[type] = set()


class CoreTensor:
    """The core's tensor base (a dense, C-order view of a CoreBuffer); accel.DeviceTensor subclasses it."""

    # _checked: the fast path's spec this tensor last matched (a tensor never changes, so once is enough);
    # _interface: __array_interface__, made once.
    __slots__ = ("_buffer", "_buffer_handle", "_shape", "_dtype", "_layout", "_device", "_interface", "_checked",
                 "__weakref__")
    _buffer: CoreBuffer
    _buffer_handle: Any  # its accel_buffer *
    _shape: Tuple[int, ...]
    _dtype: np.dtype[Any]
    _layout: Optional[str]
    _device: Any
    _interface: Optional[Dict[str, Any]]
    _checked: Any

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        TENSOR_TYPES.add(cls)

    def __init__(self, buffer: CoreBuffer, shape: Any, dtype: Any, layout: Optional[str], device: Any) -> None:
        # What memory safety needs: the memory is a CoreBuffer's and the shape lies within it.
        if type(buffer) is not CoreBuffer:
            raise TypeError(f"buffer must be a CoreBuffer, not {type(buffer).__name__}")
        dims = tuple(int(d) for d in shape)
        dt = np.dtype(dtype)
        size = 1
        for d in dims:
            if d < 0:
                raise ValueError(f"CoreTensor: negative dimension in shape {dims!r}")
            size *= d
        if size * dt.itemsize > buffer.nbytes:
            raise ValueError(f"CoreTensor: shape {dims!r} of {dt} needs more than the buffer's {buffer.nbytes} bytes")
        self._buffer = buffer
        self._buffer_handle = buffer._handle  # its accel_buffer*, kept by the buffer
        self._shape = dims
        self._dtype = dt
        self._layout = layout
        self._device = device
        self._interface = None
        self._checked = None

    @property
    def __array_interface__(self) -> Dict[str, Any]:
        # Made once: NumPy reads it on every np.asarray(t), and the array it makes keeps t alive.
        if self._interface is None:
            self._interface = {"version": 3, "shape": self._shape, "typestr": self._dtype.str,
                               "data": (self._buffer.address, self._buffer._readonly), "strides": None}
        return self._interface

    if sys.version_info >= (3, 12):
        def __buffer__(self, flags: int) -> memoryview:
            return memoryview(np.asarray(self))

