"""An opened accelerator (or the emulator) as the runtime knows it: its state, memory and ``DeviceInfo``.

``accel.Device`` (accel/device.py) is this with what sits above the runtime: loading models, the ops."""
from __future__ import annotations

import itertools
import math
import threading
from dataclasses import dataclass
from typing import Any, Dict, Optional, Sequence, TypeVar, Union

import numpy as np

from ._frontend import core
from .capabilities import DeviceCapabilities, describe
from ..errors import AlignmentError, ClosedError, ShapeError, UnsupportedError
from .device_tensor import DeviceTensor, made_tensor
from .dtypes import normalize_dtype, normalize_layout, normalize_shape

# Numbers the Devices of this process in the order they were opened, from 1.
_DEVICE_NUMBERS = itertools.count(1)

__all__ = ["RuntimeDevice", "DeviceInfo"]

_Device = TypeVar("_Device", bound="RuntimeDevice")

_MAX_BYTES = (1 << 63) - 1

# accel_device_info.hint (accel_performance_hint) -> DeviceInfo.hint; 0 (not reported) and values a newer driver
# may add read as "".
_HINTS = {1: "latency", 2: "throughput"}


@dataclass(frozen=True)
class DeviceInfo:
    """What a device is.

    Attributes:
        name: the device's name, e.g. ``"accel emulator (float: avx512, int8: ort rules, avx512vnni)"`` (the emulator's
            says its int8 rules and the int8 code path its models take on this CPU).
        backend: the driver's URI scheme, e.g. ``"emu"``, ``"bpu"``, ``"vart"``.
        cores: compute cores (the emulator's worker threads).
        threads: host threads one job runs on per core (the emulator's ``threads`` option; 0 where it does not
            apply: the other drivers, or one built before ABI 1.1).
        max_inflight: most jobs submitted and not yet finished at once.
        debug: True if guard bytes around every buffer are checked (emulator debug mode).
        alignment: byte alignment of every device buffer.
        pool_bytes: size of the device memory pool in bytes (0 if unbounded).
        hint: the performance hint its cores and threads were chosen for (the emulator's ``hint`` option, as
            OpenVINO's performance modes): ``"latency"`` (one job at a time on every CPU) or ``"throughput"`` (one
            job per CPU); ``""`` where the driver reports none (the other drivers, or one built before ABI 1.5).
    """

    name: str
    backend: str
    cores: int
    threads: int
    max_inflight: int
    debug: bool
    alignment: int
    pool_bytes: int
    hint: str = ""


class RuntimeDevice:
    """An opened device as the runtime knows it (the base of :class:`accel.Device`, which models refer to); a
    context manager that closes it on exit.

    It makes tensors in device memory (:meth:`empty`, :meth:`tensor`, :meth:`wrap`) and reports memory and job
    counters (:meth:`stats`). After :meth:`close`, every method of the device and
    of its models raises :class:`~accel.ClosedError`; arrays and DeviceTensors made earlier stay valid.
    """

    def __init__(self, uri: str = "emu") -> None:
        """Opens the device at ``uri`` (see :func:`accel.open`)."""
        if not isinstance(uri, str):
            raise TypeError(f"uri must be a str such as 'emu', not {type(uri).__name__}")
        self._uri = uri
        # Two devices opened with one URI are told apart by their number (in repr and error messages).
        self._number = next(_DEVICE_NUMBERS)
        self._closed = True  # until the core device exists: a failed open leaves a closed object
        self._lock = threading.Lock()
        # First: its checks of the URI (a NUL, no scheme) are the package's, and its driver's of the options
        # those of opening.
        self._capabilities = describe(uri)
        self._core = core.CoreDevice(uri)
        i = self._core.info()
        self._info = DeviceInfo(name=str(i["name"]), backend=str(i["backend"]), cores=int(i["cores"]),
                                threads=int(i["threads"]),
                                max_inflight=int(i["max_inflight"]), debug=bool(i["debug"]),
                                alignment=int(i["alignment"]), pool_bytes=int(i["pool_bytes"]),
                                hint=_HINTS.get(int(i.get("hint", 0)), ""))
        self._closed = False

    # -- state -----------------------------------------------------------------------------------------

    @property
    def uri(self) -> str:
        """The URI the device was opened with, e.g. ``"emu:cores=2"``."""
        return self._uri

    @property
    def info(self) -> DeviceInfo:
        """What the device is (read at open; still readable after :meth:`close`)."""
        return self._info

    @property
    def capabilities(self) -> DeviceCapabilities:
        """What the device loads and how it computes, as its driver says (:class:`accel.DeviceCapabilities`:
        model format and file suffixes, int8 rules, node timings, image formats); read at open."""
        return self._capabilities

    @property
    def closed(self) -> bool:
        """True once :meth:`close` has been called."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError(f"device {self._uri!r} is closed")

    def close(self) -> None:
        """Ends new work on the device; idempotent.

        Jobs in flight finish. Afterwards every method of the device and of its models raises
        ClosedError. Memory still viewed by arrays or held by DeviceTensors, models or jobs stays valid
        until they are gone; the device itself goes with the last of them.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._core.close()

    def __enter__(self: _Device) -> _Device:
        self._check_open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        i = self._info if hasattr(self, "_info") else None
        if i is None:
            return f"<accel.Device #{getattr(self, '_number', '?')} {self._uri!r}{state}>"
        return (f"<accel.Device #{self._number} {self._uri!r}{state}: {i.name}, backend {i.backend!r}, {i.cores} "
                f"cores, pool {i.pool_bytes} bytes>")

    # -- memory ----------------------------------------------------------------------------------------

    def stats(self) -> Dict[str, int]:
        """Counters of the device: ``bytes_in_use``, ``peak_bytes_in_use``, ``live_buffers``,
        ``allocations``, ``bytes_copied`` (copies made by the runtime on your behalf, e.g. NumPy inputs),
        ``jobs_submitted`` and ``jobs_completed``."""
        self._check_open()
        return {k: int(v) for k, v in self._core.stats().items()}

    def check(self) -> None:
        """Checks every live buffer's guard bytes (debug mode); raises MemoryCorruptionError naming a
        buffer written past its end. Does nothing outside debug mode."""
        self._check_open()
        self._core.check()

    def empty(self, shape: Union[int, Sequence[int]], dtype: Any = np.float32,
              layout: Optional[str] = None) -> DeviceTensor:
        """A new :class:`~accel.DeviceTensor` in device memory (contents unspecified).

        Args:
            shape: an int or a sequence of ints >= 0 (at most 8 dimensions).
            dtype: anything ``numpy.dtype`` accepts, of a supported type: float32, float16, int8,
                uint8, int16, uint16, int32, uint32, int64, uint64, bool.
            layout: None, or ``"NCHW"``/``"NHWC"`` for a 4-D tensor.

        ``numpy.asarray(t)`` is then a zero-copy view of its memory. Raises DTypeError for an
        unsupported dtype, ShapeError for a negative dimension or a byte size past 2**63 - 1, TypeError
        for a shape that is not ints, InvalidArgumentError for a bad layout, OutOfMemoryError when the
        pool cannot hold it.
        """
        self._check_open()
        dims = normalize_shape(shape)
        dt = normalize_dtype(dtype)
        lay = normalize_layout(layout, len(dims))
        nbytes = math.prod(dims) * dt.itemsize
        if nbytes > _MAX_BYTES:  # past what the ABI's sizes (uint64) and any device can hold
            raise ShapeError(f"shape {tuple(dims)} of {dt.name} is {nbytes} bytes, more than a device can "
                             f"address (at most 2**63 - 1)")
        buf = self._core.alloc(max(nbytes, 1))
        return made_tensor(buf, dims, dt, lay, self)

    def tensor(self, array: Any, layout: Optional[str] = None) -> DeviceTensor:
        """A new :class:`~accel.DeviceTensor` holding a copy of ``array`` (exactly one copy into device
        memory, counted in ``stats()["bytes_copied"]``).

        ``array`` is a NumPy array (any strides) or anything ``numpy.asarray`` turns into one; its dtype
        must be supported (never cast: a list of Python floats is float64, which is not supported; use
        ``numpy.asarray(x, dtype=numpy.float32)``). ``layout`` as in :meth:`empty`.
        """
        self._check_open()
        a = array if isinstance(array, np.ndarray) else np.asarray(array)
        t = self.empty(a.shape, a.dtype, layout)
        if a.size:
            t.buffer.write(a)
        return t

    def wrap(self, obj: Any, shape: Union[int, Sequence[int], None] = None, dtype: Any = None,
             layout: Optional[str] = None) -> DeviceTensor:
        """A :class:`~accel.DeviceTensor` over ``obj``'s own memory: zero copy (nothing is counted in
        ``stats()["bytes_copied"]``), e.g. a camera or decoder frame, to pass to :meth:`Model.run`.

        Args:
            obj: any object with the buffer protocol whose memory is C-contiguous: a NumPy array, bytes,
                bytearray, memoryview, mmap, a V4L2 or decoder frame. A read-only one (bytes) makes a
                read-only tensor (its NumPy view refuses writes; it cannot be a run's output).
            shape: the tensor's shape; default: a NumPy array's own, for any other buffer 1-D (its bytes,
                or its items of ``dtype``).
            dtype: default: a NumPy array's own, else uint8.
            layout: as in :meth:`empty`.

        The tensor keeps ``obj`` referenced (and exported: a bytearray cannot be resized) while it, or a
        job using it, lives; a job reads the memory as it is when the job runs, so do not change or reuse
        it until the run is over. Raises ShapeError if the shape's bytes differ from the buffer's, or the
        buffer is empty; ValueError if it is not C-contiguous; AlignmentError if its address is not
        aligned to ``info.alignment``; UnsupportedError where the backend cannot use memory it did not
        allocate (BPU); in each case :meth:`tensor` copies the data instead. ClosedError: the device is
        closed.
        """
        self._check_open()
        kind = type(obj).__name__
        try:
            m = memoryview(obj)
        except TypeError:
            raise TypeError(f"wrap() takes an object with the buffer protocol (a NumPy array, bytes, bytearray, "
                            f"memoryview, mmap...), not {kind}") from None
        with m:
            nbytes, contiguous, strides = m.nbytes, m.c_contiguous, m.strides
            address = np.frombuffer(m.cast("B"), np.uint8).ctypes.data if contiguous and nbytes else 0
        if not contiguous:
            raise ValueError(f"wrap(): the {kind}'s memory is not C-contiguous (strides {strides}); pass a contiguous "
                             f"array (numpy.ascontiguousarray), or use Device.tensor, which copies it")
        if nbytes == 0:
            raise ShapeError(f"wrap(): the {kind} is empty (0 bytes): there is no memory to wrap")
        array = obj if isinstance(obj, np.ndarray) else None
        dt = normalize_dtype(dtype if dtype is not None else array.dtype if array is not None else np.uint8)
        if shape is not None:
            dims = normalize_shape(shape)
        elif array is not None and dt == array.dtype:
            dims = normalize_shape(array.shape)
        elif nbytes % dt.itemsize:
            raise ShapeError(f"wrap(): the {kind}'s {nbytes} bytes are not a whole number of {dt.name} items; "
                             f"give the shape")
        else:
            dims = (nbytes // dt.itemsize,)
        lay = normalize_layout(layout, len(dims))
        need = math.prod(dims) * dt.itemsize
        if need != nbytes:
            raise ShapeError(f"wrap(): shape {tuple(dims)} of {dt.name} is {need} bytes, but the {kind} holds "
                             f"{nbytes} bytes")
        alignment = self._info.alignment
        if alignment > 1 and address % alignment:
            raise AlignmentError(f"wrap(): the {kind}'s memory at 0x{address:x} is not aligned to {alignment} bytes, "
                                 f"as device {self._uri!r} needs to use it without a copy; Device.tensor copies it "
                                 f"instead")
        try:
            buf = self._core.import_buffer(obj)
        except UnsupportedError as e:
            raise UnsupportedError(f"wrap(): backend {self._info.backend!r} cannot use memory it did not allocate; "
                                   f"Device.tensor copies it instead (the driver says: {e.message})",
                                   e.status) from None
        return made_tensor(buf, dims, dt, lay, self)
