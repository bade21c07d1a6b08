"""``accel.Device``: an opened accelerator (or the emulator), and ``DeviceInfo``."""
from __future__ import annotations

import itertools
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Sequence, Union

import numpy as np

from .. import compile_cache, front_ends
from ._frontend import core
from ..capabilities import DeviceCapabilities, describe
from .dtypes import has_buffer, normalize_dtype, normalize_layout, normalize_shape
from ..errors import AccelError, AlignmentError, ClosedError, InvalidArgumentError, ShapeError, UnsupportedError
from ..front_end import LoadRequest
from .model import Model

# Numbers the Devices of this process in the order they were opened, from 1.
_DEVICE_NUMBERS = itertools.count(1)

__all__ = ["Device", "DeviceInfo"]

if TYPE_CHECKING:
    from .._pybind import DeviceTensor
    from ..ops import FusionScope, Ops
else:
    DeviceTensor = core.DeviceTensor

#: What ``Device.load`` accepts: a path, or the model's bytes (any buffer-protocol object).
PathOrBytes = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]

_MAX_BYTES = (1 << 63) - 1


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
    """

    name: str
    backend: str
    cores: int
    threads: int
    max_inflight: int
    debug: bool
    alignment: int
    pool_bytes: int


class Device:
    """An opened device (``accel.open(uri)``); a context manager that closes it on exit.

    It makes tensors in device memory (:meth:`empty`, :meth:`tensor`), loads models (:meth:`load`) and
    reports memory and job counters (:meth:`stats`). After :meth:`close`, every method of the device and
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
        self._ops: Optional[Ops] = None
        # First: its checks of the URI (a NUL, no scheme) are the package's, and its driver's of the options
        # those of opening.
        self._capabilities = describe(uri)
        self._core = core.CoreDevice(uri)
        i = self._core.info()
        self._info = DeviceInfo(name=str(i["name"]), backend=str(i["backend"]), cores=int(i["cores"]),
                                threads=int(i["threads"]),
                                max_inflight=int(i["max_inflight"]), debug=bool(i["debug"]),
                                alignment=int(i["alignment"]), pool_bytes=int(i["pool_bytes"]))
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

    def __enter__(self) -> Device:
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
        return DeviceTensor(buf, dims, dt, lay, self)

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
        return DeviceTensor(buf, dims, dt, lay, self)

    # -- ops -------------------------------------------------------------------------------------------

    @property
    def ops(self) -> Ops:
        """The device's operators (torch.nn.functional's names and arguments), each call one job:
        ``dev.ops.conv2d(x, w, b, padding=1)``; inside :meth:`fusion_scope` they are recorded instead.
        Emulator only: on other backends every op raises UnsupportedError. See docs/python-api.md."""
        ops = self._ops
        if ops is None:
            from ..ops import Ops

            with self._lock:
                if self._ops is None:
                    self._ops = Ops(self)
                ops = self._ops
        return ops

    def fusion_scope(self) -> FusionScope:
        """A context manager recording the ops called on this device in this thread, then compiling them
        into one model run as one job when the block ends; results inside are :class:`~accel.PendingTensor`.
        Results still referenced at the end are the fused model's outputs. Emulator only."""
        from ..ops import FusionScope

        return FusionScope(self.ops)

    # -- models ----------------------------------------------------------------------------------------

    def load(self, path_or_bytes: PathOrBytes,
             input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
             extra_outputs: Union[str, Sequence[str], None] = None,
             image_inputs: Optional[Mapping[str, Any]] = None) -> Model:
        """Loads a model on the device.

        Args:
            path_or_bytes: a path (str or PathLike) or the model's bytes (bytes, bytearray, memoryview
                or any buffer). Formats: the one the device loads (:attr:`capabilities`: the emulator's
                ``.accm``; ``.hbm``/``.bin`` on BPU, ``.xmodel`` on VART), and those a front end of
                ``accel.front_ends`` turns into it, chosen by the device's format and the file's: ONNX on a device
                that loads ``.accm`` (the emulator), compiled on the fly with ``accel.compiler`` and cached (see
                ``accel.compile_cache``).
            input_shapes: for ONNX only: ``{input name: shape}`` fixing symbolic or overriding dims.
            extra_outputs: for ONNX only: intermediate tensors to keep as outputs after the model's own, a
                list of ONNX tensor names (in that order) or ``"all"`` (every tensor the model computes at run
                time, in graph order). ``model.outputs`` names them; a quantized model gives its int8 tensors
                with their quantization (``TensorInfo.quant``), or the float value where a DequantizeLinear
                output is named. Asking never changes what the model computes: a float tensor that exists only
                inside a fused int8 op cannot be given. See docs/find-the-layer.md.
            image_inputs: for ONNX only: camera frames in place of float image inputs, ``{"images": {"format":
                "nv12", "to": "rgb", "mean": [...], "scale": [...], "range": "full"}}`` (formats ``nv12``,
                ``nv12_planes`` (two inputs, ``images_y`` and ``images_uv``), ``y``, ``yuv444``, ``rgb``, ``bgr``):
                the model takes the frame as uint8 (``TensorInfo.image`` says its layout) and converts it to the
                channel order ``to`` with BT.601, then feeds ``(pixel - mean) * scale``, as Horizon's toolchain
                compiles an NV12 model. See docs/image-inputs.md.

        Raises:
            FileNotFoundError: no file at the path (the message names it). ModelFormatError: not a valid
            model. UnsupportedError: ONNX on a device that does not load ``.accm`` (a board), or an op the
            emulator lacks. ValueError: ``input_shapes``, ``extra_outputs`` or ``image_inputs`` for a model that is not
            ONNX, a bad input shape, an extra output the model cannot give (InvalidArgumentError naming it and the
            nearest names), or an image input it cannot take.
            ClosedError: the device is closed.
        """
        self._check_open()
        if isinstance(path_or_bytes, (str, os.PathLike)):
            path = os.fsdecode(os.fspath(path_or_bytes))
            with open(path, "rb") as f:
                data: Any = f.read()
            name = Path(path).stem or "model"
            what = repr(path)
            source: Optional[str] = path
            base = os.path.basename(path).lower()
            suffix = base[base.rfind("."):] if "." in base else ""
        # Any buffer is taken (a NumPy array of bytes...), though PathOrBytes can only name these three.
        elif (isinstance(path_or_bytes, (bytes, bytearray, memoryview))
              or has_buffer(path_or_bytes)):  # type: ignore[unreachable]
            data = path_or_bytes
            name = "model"
            what = "the model bytes"
            source = None
            suffix = ""
        else:
            raise TypeError(f"load() takes a path or the model's bytes, not {type(path_or_bytes).__name__}")

        caps = self.capabilities
        head = bytes(memoryview(data).cast("B")[:16]) if not isinstance(data, bytes) else data[:16]
        front = front_ends.choose(caps.model_format, head, suffix)
        if front is None:
            refused = front_ends.foreign(suffix)
            if refused is not None and refused.produces != caps.model_format:
                raise UnsupportedError(
                    f"backend {self._info.backend!r} cannot load {refused.name} models ({what}): it loads "
                    f"{caps.model_format or 'its own'} models ({', '.join(caps.file_suffixes) or 'any suffix'}); "
                    f"compile it with the vendor's toolchain, or load it on a device that loads "
                    f"{refused.produces} models{_devices_loading(refused.produces)}")

        extra = compile_cache.normalize_extra_outputs(extra_outputs)
        images = compile_cache.normalize_image_inputs(image_inputs)
        if front is None or not front.options:
            for option, value in (("input_shapes", input_shapes), ("extra_outputs", extra), ("image_inputs", images)):
                if value is not None:
                    raise InvalidArgumentError(
                        f"{option} applies to {_option_formats()} models only; {what} is already compiled for the "
                        f"device")
        if front is None:
            return Model(self, self._load_core(data, source), name)
        request = LoadRequest(data, what, source, input_shapes, extra, images, caps.int8_rules)
        core_model, extra_count = front.load(request, self._load_compiled)
        return Model(self, core_model, name, extra_count)

    def _load_compiled(self, data: Any) -> Any:
        """Loads bytes a front end made in the device's own format."""
        self._check_open()
        return self._core.load(data)

    def _load_core(self, data: Any, path: Optional[str]) -> Any:
        try:
            return self._core.load(data)
        except AccelError as e:
            if path is None:
                raise
            # The core loads from memory and cannot name the file: say which one it was.
            raise type(e)(f"cannot load {path!r}: {e.message}", e.status) from None



def _option_formats() -> str:
    """The formats whose front ends take Device.load's compile options ("ONNX")."""
    return " and ".join(f.name for f in front_ends.registered() if f.options) or "no"


def _devices_loading(model_format: str) -> str:
    """" (the drivers here that load ``model_format``: 'emu')", or "" when none does."""
    schemes = []
    for scheme in core.backends():
        try:
            if describe(scheme).model_format == model_format:
                schemes.append(repr(scheme))
        except AccelError:  # a driver that cannot describe its bare scheme names no device here
            continue
    return f" ({', '.join(schemes)})" if schemes else ""
