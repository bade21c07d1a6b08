"""CoreBuffer: device memory (one accel_buffer reference) and one-copy writes into it."""
from __future__ import annotations

import functools
import sys
from typing import Any, Tuple

import numpy as np

from ._lib import check, error, ffi, last_message, lib, new_memory, new_owner

__all__ = ["CoreBuffer", "allocate", "import_memory"]

_BYTES = ffi.typeof("uint8_t[]")
_INT64S = ffi.typeof("int64_t[]")
_new_memory = new_memory
_target = lib.accel_cffi_memory_target
_memory_status = lib.accel_cffi_memory_status
_last_buffer = lib.accel_cffi_memory_last
_new = object.__new__
_buffer = ffi.buffer


class CoreBuffer:
    """Device memory (one accel_buffer reference); a writable 1-D uint8 buffer."""

    # _handle is the accel_buffer*; the reference it stands for is owned by the cffi array behind
    # _memory (_lib.new_memory; for an imported buffer, import_memory's owner of the exporter's view),
    # so the buffer goes when the last of this object and of the arrays made from its memory goes.
    __slots__ = ("_handle", "_memory", "_nbytes", "_readonly", "_imported", "__weakref__")
    _handle: Any  # accel_buffer *
    _memory: Any  # the cffi buffer over the host memory (a read-only memoryview of it if _readonly)
    _nbytes: int
    _readonly: bool  # imported from a read-only exporter (bytes...): nothing may write into it
    _imported: bool  # the memory of a Python object (CoreDevice.import_buffer)

    def __init__(self) -> None:
        raise TypeError("accel._cffi_core.CoreBuffer cannot be instantiated from Python: "
                        "CoreDevice.alloc makes them")

    @property
    def nbytes(self) -> int:
        """usable size in bytes (rounded up to the device alignment)"""
        return self._nbytes

    @property
    def address(self) -> int:
        """host pointer"""
        return int(ffi.cast("uintptr_t", ffi.from_buffer(self._memory)))

    @property
    def memory(self) -> Any:
        """The bytes as a buffer-protocol object (1-D; writable unless readonly) that keeps this buffer alive."""
        return self._memory

    @property
    def readonly(self) -> bool:
        """True for memory imported from a read-only object (bytes...): views are read-only, no job writes it"""
        return self._readonly

    @property
    def imported(self) -> bool:
        """True for memory imported from a Python object (CoreDevice.import_buffer)"""
        return self._imported

    def write(self, array: Any) -> None:
        """One copy of any strided array's bytes, C order, from offset 0 (accel_buffer_write_strided)."""
        if self._readonly:
            raise error(lib.ACCEL_ERR_INVALID_ARGUMENT, "write(): the buffer is read-only memory (imported from a "
                                                        "read-only object such as bytes)")
        a = array if type(array) is np.ndarray else _as_array(array)
        n = a.nbytes
        if n > self._nbytes:
            raise ValueError(f"the array holds {n} bytes, the buffer only {self._nbytes}")
        if n == 0:
            return
        handle = self._handle
        if a.flags.c_contiguous:
            check(lib.accel_buffer_write(handle, 0, ffi.from_buffer(a), n))  # read only: fine
            return
        data = a.__array_interface__["data"][0]  # the first element, wherever the strides lead
        check(lib.accel_buffer_write_strided(handle, 0, ffi.cast("void *", data), a.ndim, ffi.new(_INT64S, a.shape),
                                             ffi.new(_INT64S, a.strides), a.itemsize))

    def __repr__(self) -> str:
        return f"CoreBuffer(nbytes={self._nbytes}, address=0x{self.address:x})"

    if sys.version_info >= (3, 12):
        def __buffer__(self, flags: int) -> memoryview:
            return memoryview(self._memory)


def _as_array(obj: Any) -> np.ndarray:
    # Any buffer-protocol exporter, read as it is (no copy, no cast).
    try:
        memoryview(obj)
    except TypeError:
        raise TypeError(f"write(): array must support the buffer protocol, not {type(obj).__name__}") from None
    return np.asarray(obj)


def allocate_memory(device: Any, nbytes: int) -> Tuple[Any, Any]:
    """accel_buffer_alloc on ``device`` (an ``accel_device *``): its handle, and its bytes as a cffi
    buffer over the array that owns the reference (the buffer goes when the last object made from it
    goes). Allocation and owner are one step: no exception can come between them."""
    nbytes = max(nbytes, 1)
    align = _target(device, nbytes) or 1
    try:
        owner = _new_memory(_BYTES, -(-nbytes // align) * align)
    except MemoryError:
        status = _memory_status()
        if status:
            raise error(status, last_message()) from None
        raise
    return _last_buffer(), _buffer(owner)


def allocate(device: Any, nbytes: int) -> CoreBuffer:
    """accel_buffer_alloc on ``device`` (an ``accel_device *``) as a CoreBuffer."""
    handle, memory = allocate_memory(device, nbytes)
    buf = _new(CoreBuffer)
    buf._handle = handle
    buf._memory = memory
    buf._nbytes = len(memory)
    buf._readonly = False
    buf._imported = False
    return buf


def _release_imported(handle: Any, view: Any) -> None:
    # The destructor of import_memory's owner, called with the exporter's view (`view`) before the
    # owner drops it: the accel_buffer goes first, then the memory.
    lib.accel_buffer_release(handle)


def import_memory(device: Any, obj: Any) -> CoreBuffer:
    """accel_buffer_import of ``obj``'s own memory (any C-contiguous buffer-protocol object) on ``device``
    (an ``accel_device *``), as a CoreBuffer. Its memory is a cffi buffer over an owner of the
    exporter's view whose destructor releases the accel_buffer, so the object stays exported (alive,
    and a bytearray unresizable) until the buffer and every view of its memory are gone."""
    with memoryview(obj) as m:
        readonly, contiguous = m.readonly, m.c_contiguous
    if not contiguous:
        raise ValueError(f"import_buffer(): the {type(obj).__name__}'s memory is not C-contiguous")
    view = ffi.from_buffer(_BYTES, obj, require_writable=False)
    box = new_owner("buffer")  # owns the handle until the owner below takes it over
    check(lib.accel_buffer_import(device, view, len(view), box))
    size = ffi.new("uint64_t *")
    check(lib.accel_buffer_size(box[0], size))
    # The handle passes from the box to the owner (whose destructor gets the plain pointer: the box
    # may be finalized first when both are garbage of one collection). Cleared in the box first, so
    # that an interrupt between the two steps can only leak the handle, never release it twice.
    handle = box[0]
    box[0] = ffi.NULL
    owner = ffi.gc(view, functools.partial(_release_imported, handle))
    memory = _buffer(owner, min(int(size[0]), len(view)))
    buf = _new(CoreBuffer)
    buf._handle = handle
    buf._memory = memoryview(memory).toreadonly() if readonly else memory
    buf._nbytes = len(memory)
    buf._readonly = readonly
    buf._imported = True
    return buf
