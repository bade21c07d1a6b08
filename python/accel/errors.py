"""The exceptions of accel: one class per C status code of libaccel (``accel.h``).

Every error raised by the C ABI reaches Python as ``from_status(status, message)``: an instance of the
``AccelError`` subclass of that status, carrying the status code and libaccel's message. Checks made in
Python before a call reaches C raise the same classes with the same status codes, so a ``ShapeError``
always has ``status == 2`` whichever layer found the problem.

Where a Python built-in exception fits, the class derives from it too: ``ShapeError`` is a
``ValueError``, ``DTypeError`` a ``TypeError``, ``TimeoutError`` the built-in ``TimeoutError``, and so on.
"""
from __future__ import annotations

import builtins
from typing import Dict, Optional, Type

__all__ = [
    "AccelError", "InvalidArgumentError", "ShapeError", "DTypeError", "AlignmentError",
    "ModelFormatError", "OutOfMemoryError", "BusyError", "TimeoutError", "UnsupportedError",
    "DeviceError", "NotFoundError", "CancelledError", "NotReadyError", "AbiMismatchError",
    "MemoryCorruptionError", "ClosedError", "InternalError", "from_status", "status_name",
]

#: accel_status codes (accel.h) and their C names, as ``accel_status_name`` spells them.
STATUS_NAMES: Dict[int, str] = {
    0: "ACCEL_OK",
    1: "ACCEL_ERR_INVALID_ARGUMENT",
    2: "ACCEL_ERR_SHAPE",
    3: "ACCEL_ERR_DTYPE",
    4: "ACCEL_ERR_ALIGNMENT",
    5: "ACCEL_ERR_MODEL_FORMAT",
    6: "ACCEL_ERR_OUT_OF_MEMORY",
    7: "ACCEL_ERR_BUSY",
    8: "ACCEL_ERR_TIMEOUT",
    9: "ACCEL_ERR_UNSUPPORTED",
    10: "ACCEL_ERR_DEVICE",
    11: "ACCEL_ERR_NOT_FOUND",
    12: "ACCEL_ERR_CANCELLED",
    13: "ACCEL_ERR_NOT_READY",
    14: "ACCEL_ERR_ABI_MISMATCH",
    15: "ACCEL_ERR_MEMORY_CORRUPTION",
    16: "ACCEL_ERR_CLOSED",
    17: "ACCEL_ERR_INTERNAL",
}


def status_name(status: int) -> str:
    """The C name of a status code (``"ACCEL_ERR_SHAPE"``); ``"ACCEL_ERR_UNKNOWN"`` for unknown codes."""
    return STATUS_NAMES.get(status, "ACCEL_ERR_UNKNOWN")


class AccelError(Exception):
    """Base class of every accel error.

    Attributes:
        status: the libaccel status code (``accel_status``); each subclass has its own default.
        status_name: the C name of ``status``, e.g. ``"ACCEL_ERR_SHAPE"``.
        message: the error message (libaccel's ``accel_last_error_message()`` for errors from C).
    """

    #: The status code instances of this class carry unless one is given.
    default_status: int = -1

    status: int
    message: str

    def __init__(self, message: str = "", status: Optional[int] = None) -> None:
        """An error with ``message``; ``status`` defaults to the class's own status code."""
        super().__init__(message)
        self.message = message
        self.status = self.default_status if status is None else int(status)

    @property
    def status_name(self) -> str:
        """The C name of :attr:`status`, e.g. ``"ACCEL_ERR_SHAPE"``."""
        return status_name(self.status)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # type: ignore[no-untyped-def]
        # Exceptions cross process boundaries (multiprocessing, concurrent.futures): keep the status.
        return (_rebuild, (type(self), self.message, self.status))


def _rebuild(cls: Type[AccelError], message: str, status: int) -> AccelError:
    return cls(message, status)


class InvalidArgumentError(AccelError, ValueError):
    """A bad argument: a value out of range, an unknown option or name (``ACCEL_ERR_INVALID_ARGUMENT``)."""

    default_status = 1


class ShapeError(AccelError, ValueError):
    """A tensor's shape or byte size does not match what the model expects (``ACCEL_ERR_SHAPE``)."""

    default_status = 2


class DTypeError(AccelError, TypeError):
    """A tensor's element type does not match the model, or is not supported (``ACCEL_ERR_DTYPE``).

    accel never casts silently: convert explicitly, e.g. ``x.astype(np.float32)``."""

    default_status = 3


class AlignmentError(AccelError, ValueError):
    """A pointer or size is not aligned as the device requires (``ACCEL_ERR_ALIGNMENT``)."""

    default_status = 4


class ModelFormatError(AccelError, ValueError):
    """A model is corrupt, truncated, of an unknown version, or cannot be compiled
    (``ACCEL_ERR_MODEL_FORMAT``)."""

    default_status = 5


class OutOfMemoryError(AccelError, MemoryError):
    """Device (or host) memory is exhausted (``ACCEL_ERR_OUT_OF_MEMORY``)."""

    default_status = 6


class BusyError(AccelError):
    """``max_inflight`` jobs are already in flight and the call was not allowed to wait
    (``ACCEL_ERR_BUSY``)."""

    default_status = 7


class TimeoutError(AccelError, builtins.TimeoutError):
    """A job did not finish within its own timeout (``ACCEL_ERR_TIMEOUT``)."""

    default_status = 8


class UnsupportedError(AccelError, NotImplementedError):
    """The backend cannot do this: an op, dtype, model format or feature (``ACCEL_ERR_UNSUPPORTED``)."""

    default_status = 9


class DeviceError(AccelError):
    """The device or its vendor runtime failed (``ACCEL_ERR_DEVICE``)."""

    default_status = 10


class NotFoundError(AccelError, LookupError):
    """No driver for a URI scheme, no such file or tensor name (``ACCEL_ERR_NOT_FOUND``)."""

    default_status = 11


class CancelledError(AccelError):
    """The job was cancelled before it started (``ACCEL_ERR_CANCELLED``)."""

    default_status = 12


class NotReadyError(AccelError, builtins.TimeoutError):
    """A wait ended before the job finished (``ACCEL_ERR_NOT_READY``); the job itself goes on."""

    default_status = 13


class AbiMismatchError(AccelError):
    """A driver was built for an incompatible ABI version (``ACCEL_ERR_ABI_MISMATCH``)."""

    default_status = 14


class MemoryCorruptionError(AccelError):
    """A write past a buffer's end was detected, in debug mode (``ACCEL_ERR_MEMORY_CORRUPTION``)."""

    default_status = 15


class ClosedError(AccelError, RuntimeError):
    """The device was closed (``ACCEL_ERR_CLOSED``)."""

    default_status = 16


class InternalError(AccelError):
    """A bug in libaccel, a driver or accel itself; the message says where (``ACCEL_ERR_INTERNAL``)."""

    default_status = 17


_BY_STATUS: Dict[int, Type[AccelError]] = {
    cls.default_status: cls
    for cls in (InvalidArgumentError, ShapeError, DTypeError, AlignmentError, ModelFormatError,
                OutOfMemoryError, BusyError, TimeoutError, UnsupportedError, DeviceError, NotFoundError,
                CancelledError, NotReadyError, AbiMismatchError, MemoryCorruptionError, ClosedError,
                InternalError)
}


def from_status(status: int, message: str = "") -> AccelError:
    """The exception for a libaccel status code: an instance of the matching ``AccelError`` subclass
    (plain ``AccelError`` for a code this version does not know), carrying ``status`` and ``message``.

    The cores (``accel._pybind``, ``accel._cffi_core``) raise what this returns for every failed C call.
    """
    status = int(status)
    cls = _BY_STATUS.get(status, AccelError)
    if not message:
        message = status_name(status)
    return cls(message, status)
