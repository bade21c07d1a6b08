"""The compiled cffi module (``accel._cffi``) and how a failed call becomes accel's exception."""
from __future__ import annotations

from typing import Any

from accel._cffi import ffi, lib

__all__ = ["ffi", "lib", "error", "check", "last_message", "text", "CLOSED", "NOT_READY", "BUSY", "new_owner",
           "new_memory"]

OK = lib.ACCEL_OK
CLOSED = lib.ACCEL_ERR_CLOSED
NOT_READY = lib.ACCEL_ERR_NOT_READY
BUSY = lib.ACCEL_ERR_BUSY
CANCELLED = lib.ACCEL_ERR_CANCELLED

_from_status = None


def text(p: object) -> str:
    """A str from a UTF-8 C string; invalid sequences become U+FFFD rather than raising."""
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def last_message() -> str:
    """The calling thread's ``accel_last_error_message()``: call it right after the failure."""
    return text(lib.accel_last_error_message())


def error(status: int, message: str) -> BaseException:
    """``accel.errors.from_status(status, message)``; accel.errors is imported on the first error."""
    global _from_status
    if _from_status is None:
        from accel.errors import from_status

        _from_status = from_status
    return _from_status(status, message)


def check(status: int) -> None:
    """Raises the calling thread's last error if ``status`` is a failure."""
    if status:
        raise error(status, last_message())


def _allocator(alloc: Any, free: Any) -> Any:
    return ffi.new_allocator(alloc=alloc, free=free, should_clear_after_alloc=False)


# Owners made before the C call that fills them (cffi_helpers.h): a handle the call leaves in one is
# released when the owner goes (C code, no Python), so an exception (a KeyboardInterrupt) raised
# between the call and the object that keeps the owner leaks nothing. By kind: the allocator and the
# type, a one-handle array that the call takes as its out-parameter.
_OWNERS = {kind: (_allocator(lib.accel_cffi_owner_alloc, free), ffi.typeof(f"accel_{kind} *[1]"))
           for kind, free in (("device", lib.accel_cffi_free_device_box), ("model", lib.accel_cffi_free_model_box),
                              ("job", lib.accel_cffi_free_job_box), ("buffer", lib.accel_cffi_free_buffer_box))}


def new_owner(kind: str) -> Any:
    """An empty owner of a handle of `kind` ("device", "model", "job" or "buffer"); its handle is [0]."""
    allocate, ctype = _OWNERS[kind]
    return allocate(ctype)

# Device memory as a uint8_t[] that owns its buffer, allocated and wrapped in one step (on the device
# accel_cffi_memory_target named on this thread).
new_memory = _allocator(lib.accel_cffi_memory_alloc, lib.accel_cffi_memory_free)
