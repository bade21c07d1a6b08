"""``accel.Model``: a model loaded on a device, and its ``run`` / ``run_async``."""
from __future__ import annotations

import math
import operator
from typing import (TYPE_CHECKING, Any, Callable, Dict, Generator, Iterable, List, Mapping, Optional, Sequence, Tuple,
                    Union)

import numpy as np

from . import batching
from .device_tensor import DeviceTensor
from .dtypes import has_buffer
from ..errors import AccelError, ClosedError, DTypeError, InvalidArgumentError, ShapeError
from ..futures import Future
from .memory_ranges import MemoryRange, array_range, buffer_range, check_disjoint
from .messages import shown, type_name
from .pending import PendingTensor
from ..profiling import PROFILER as _profiler
from ..profiling import ModelNodes, job_nodes
from .tensor_info import TensorInfo, dense_strides, from_core

if TYPE_CHECKING:
    from .device import RuntimeDevice as Device

__all__ = ["Model", "Inputs", "Outputs"]

_ndarray = np.ndarray

#: What ``run`` accepts as inputs: one tensor (a model with one input), a sequence in input order, or a
#: mapping by input name. A tensor is a NumPy array (copied once) or a DeviceTensor (used in place).
Inputs = Union[np.ndarray, Any, Sequence[Any], Mapping[str, Any]]
#: What ``run`` accepts as ``outputs``: DeviceTensors as a sequence in output order or a mapping by name.
Outputs = Union[Sequence[Any], Mapping[str, Any]]


def _ignore_completion(status: int, message: str, timing: Tuple[int, int, int, int]) -> None:
    """The completion callback of a profiled sync run (its caller waits on the job instead)."""


class _Spec:
    """Per-tensor facts the hot path needs, computed once per model."""

    __slots__ = ("info", "name", "shape", "dtype", "layout", "alloc", "dense", "strides", "kind", "output", "index",
                 "image")

    def __init__(self, info: TensorInfo, kind: str, index: int = 0) -> None:
        self.info = info
        self.name = info.name
        self.shape = info.shape
        self.dtype = info.dtype
        self.layout = info.layout
        dense = dense_strides(info.shape, info.dtype.itemsize)
        size = math.prod(info.shape) * info.dtype.itemsize
        self.dense = info.strides in ((), dense)
        self.strides = dense if info.strides == () else info.strides
        # Device buffers must be non-empty and hold at least the tensor's byte_size.
        self.alloc = max(info.nbytes, size, 1)
        self.kind = kind
        self.output = kind == "output"
        self.index = index  # among the model's inputs or outputs
        self.image = info.image  # the camera frame an image input takes, or None

    def fast(self) -> Tuple[np.dtype, Tuple[int, ...], Optional[str], int, bool]:
        """The spec as the core's fast path takes it (CORE_API.md, ``set_fast_path``)."""
        return (self.dtype, self.shape, self.layout, self.alloc, self.dense)


def _check_priority(priority: Any) -> int:
    if isinstance(priority, bool) or not isinstance(priority, (int, np.integer)):
        raise TypeError(f"priority must be an int from 0 to 255, not {type_name(priority)}")
    p = operator.index(priority)
    if not 0 <= p <= 255:
        raise InvalidArgumentError(f"priority must be from 0 to 255, got {shown(p)}")
    return p


def _timeout_us(timeout: Any) -> int:
    if timeout is None:
        return 0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer, np.floating)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type_name(timeout)}")
    try:
        t = float(timeout)
    except OverflowError:  # an int past float's range: longer than any wait, or negative past it
        t = math.inf if timeout > 0 else -math.inf
    if not t > 0 or math.isnan(t):
        raise InvalidArgumentError(f"timeout must be > 0 seconds (or None for no timeout), got {shown(timeout)}")
    if math.isinf(t):
        return 0
    return max(1, min(round(t * 1e6), 10**15))


class Model:
    """A model loaded on a device (made by :meth:`accel.Device.load`).

    ``inputs`` and ``outputs`` describe its tensors; :meth:`run` runs it synchronously and
    :meth:`run_async` asynchronously. A Model may be used from many threads at once. It keeps its
    device's memory alive; once the device is closed its methods raise :class:`~accel.ClosedError`.
    """

    def __init__(self, device: Device, core_model: Any, name: str = "model", extra_outputs: int = 0) -> None:
        """Wraps a core model; use :meth:`accel.Device.load` rather than calling this. The last
        ``extra_outputs`` outputs are the intermediate tensors the load asked for."""
        self._device = device
        self._core = core_model
        self._name = name
        self._uri = device.uri
        self._nodes = ModelNodes(core_model, name, device.uri)  # what a profile with ops=True reads
        self._inputs = tuple(from_core(t) for t in core_model.inputs())
        self._outputs = tuple(from_core(t) for t in core_model.outputs())
        self._own_outputs = len(self._outputs) - extra_outputs
        self._in_specs = tuple(_Spec(t, "input", i) for i, t in enumerate(self._inputs))
        self._out_specs = tuple(_Spec(t, "output", i) for i, t in enumerate(self._outputs))
        self._in_index: Dict[str, int] = {s.name: i for i, s in enumerate(self._in_specs)}
        self._out_index: Dict[str, int] = {s.name: i for i, s in enumerate(self._out_specs)}
        self._n_in = len(self._in_specs)
        self._single = self._in_specs[0] if self._n_in == 1 else None
        self._core_device = device._core
        # The core's optional fast path for the common case of run (CORE_API.md): it answers None
        # for anything it does not take, and the Python path below handles that. Its match of a DeviceTensor
        # (tensor_matches, remembered on the tensor) is the Python path's too: a tensor the fast path matched
        # is not checked again when the call goes the Python way for another reason (a dict, a timeout).
        run_tensors: Optional[Callable[..., Optional[List[np.ndarray]]]] = getattr(core_model, "run_tensors", None)
        self._run_tensors = run_tensors
        self._tensor_matches: Optional[Callable[[Any, int, bool], bool]] = None
        if run_tensors is not None:
            core_model.set_fast_path(device, device._core, [s.fast() for s in self._in_specs],
                                     [s.fast() for s in self._out_specs])
            self._tensor_matches = core_model.tensor_matches

    # -- metadata --------------------------------------------------------------------------------------

    @property
    def inputs(self) -> List[TensorInfo]:
        """The model's inputs, in order."""
        return list(self._inputs)

    @property
    def outputs(self) -> List[TensorInfo]:
        """The model's outputs, in order (``run`` returns arrays in this order): its own, then the extra
        outputs the load asked for."""
        return list(self._outputs)

    @property
    def extra_outputs(self) -> List[TensorInfo]:
        """The intermediate tensors ``Device.load(..., extra_outputs=...)`` kept as outputs: the last of
        :attr:`outputs` (empty without them)."""
        return list(self._outputs[self._own_outputs:])

    @property
    def name(self) -> str:
        """The model's name: the file's stem (``"resnet18"`` for ``resnet18.onnx``), or ``"model"``
        for a model loaded from bytes."""
        return self._name

    @property
    def device(self) -> Device:
        """The device the model is loaded on."""
        return self._device

    def __repr__(self) -> str:
        ins = ", ".join(str(i) for i in self._inputs)
        outs = ", ".join(str(o) for o in self._outputs)
        return f"<accel.Model {self._name!r} on {self._uri!r}: ({ins}) -> ({outs})>"

    # -- running ---------------------------------------------------------------------------------------

    def run(self, inputs: Inputs = (), outputs: Optional[Outputs] = None, *, priority: int = 0,
            timeout: Optional[float] = None) -> List[np.ndarray]:
        """Runs the model once and waits for it (the GIL is released while it runs; Ctrl-C interrupts).

        Args:
            inputs: one tensor (for a model with exactly one input), a list/tuple of tensors in input
                order, or a dict ``{input name: tensor}``. A tensor is a :class:`~accel.DeviceTensor`
                (used in place, no copy) or a NumPy array of exactly the input's dtype and shape (any
                strides, read-only too; copied once into device memory). Nothing is ever cast. Left out for
                a model with no inputs.
            outputs: optional DeviceTensors (a list in output order, or a dict by name) to write the
                results into; by default fresh device buffers are allocated. No output may share a byte
                with another output or with a DeviceTensor input (whichever objects hold the memory).
            priority: 0 (lowest, the default) to 255; higher-priority jobs start first.
            timeout: seconds the job may take from submission, or None for no limit.

        Returns:
            One NumPy array per output, in order, each a zero-copy view of its device buffer that keeps
            the buffer alive for as long as the array lives.

        Raises:
            DTypeError: an input's dtype is not the model's. ShapeError: an input's shape is not the
            model's (the message names the input, the expected and the given shape). TypeError: an
            input is not an array (None, a list of numbers, a scalar). ValueError: wrong number of
            inputs, an unknown or missing input name. TimeoutError: the job's timeout passed.
            ClosedError: the device is closed. Other AccelError subclasses for device failures.
        """
        fast = self._run_tensors
        if fast is not None and timeout is None and not _profiler.profiles:
            results = fast(inputs, outputs, priority)
            if results is not None:
                return results
        in_bufs, out_bufs, results, priority, timeout_us = self._prepare(inputs, outputs, priority, timeout)
        if _profiler.profiles:
            self._run_profiled(in_bufs, out_bufs, priority, timeout_us)
        else:
            self._core.run(in_bufs, out_bufs, priority, 0, timeout_us)
        return results

    def _prepare(self, inputs: Inputs, outputs: Optional[Outputs], priority: int,
                 timeout: Optional[float]) -> Tuple[List[Any], List[Any], List[np.ndarray], int, int]:
        # Everything run and run_async check and allocate before submitting, in one place.
        if self._device._closed:
            raise self._closed_error()
        if priority.__class__ is not int or not 0 <= priority <= 255:
            priority = _check_priority(priority)
        timeout_us = 0 if timeout is None else _timeout_us(timeout)
        in_bufs = self._input_buffers(inputs)
        if outputs is None:
            out_bufs, results = self._fresh_outputs()
        else:
            out_bufs, results = self._given_outputs(outputs)
            # NumPy inputs are fresh buffers by now: only a DeviceTensor input can meet an output.
            inputs_read = [buffer_range(b, s.alloc, 0, False, f"input {s.name!r}")
                           for s, b in zip(self._in_specs, in_bufs)]
            check_disjoint(inputs_read + self._output_ranges(out_bufs, 0))
        return in_bufs, out_bufs, results, priority, timeout_us

    def _run_profiled(self, in_bufs: List[Any], out_bufs: List[Any], priority: int, timeout_us: int) -> None:
        # While profiling, a sync run goes through submit + wait so that a job that fails (its timeout,
        # a device error) is recorded with its timing too; core.run reports timing on success only.
        flags = _profiler.submit_flags(self._nodes)
        job = self._core.submit(in_bufs, out_bufs, _ignore_completion, priority, 0, timeout_us, flags)
        status = -1
        try:
            job.wait()
            status = 0
        except AccelError as e:
            status = e.status
            raise
        finally:
            if status >= 0:
                try:
                    nodes = job_nodes(self._nodes, job) if flags else ()
                    _profiler.record(self._name, self._uri, job.timing(), status, nodes)
                except AccelError:
                    pass
            job.release()

    def run_async(self, inputs: Inputs = (), outputs: Optional[Outputs] = None, *, priority: int = 0,
                  timeout: Optional[float] = None) -> Future:
        """Submits one run and returns at once with an :class:`accel.Future` of its outputs.

        Arguments and results are those of :meth:`run`; bad arguments raise here, before anything is
        submitted, and failures of the job itself are raised by ``future.result()`` (or ``await``).
        Submitting blocks (without the GIL) while the device has ``max_inflight`` jobs in flight.
        The inputs may be changed or dropped as soon as this returns only if they were NumPy arrays
        (those are copied); DeviceTensors are read while the job runs.
        """
        return self._submit(*self._prepare(inputs, outputs, priority, timeout))

    def _submit(self, in_bufs: List[Any], out_bufs: List[Any], results: List[np.ndarray], priority: int,
                timeout_us: int) -> Future:
        # Submits one prepared job (run_async's, and each of run_batch's and imap's) with its Future.
        fut = Future()
        fut._outputs = results
        fut._model_name = self._name
        fut._device_uri = self._uri
        if _profiler.profiles:
            flags = fut._profile_flags = _profiler.submit_flags(self._nodes)
            if flags:
                fut._nodes = self._nodes
            job = self._core.submit(in_bufs, out_bufs, fut._complete, priority, 0, timeout_us, flags)
        else:
            job = self._core.submit(in_bufs, out_bufs, fut._complete, priority, 0, timeout_us)
        fut._attach(job)
        return fut

    @property
    def optimal_jobs(self) -> int:
        """The jobs :meth:`imap` keeps in flight by default: two per core of the device (one running,
        the next queued behind it), at most the device's ``max_inflight``: 2 on ``emu`` (hint=latency, one core),
        two per CPU on ``emu:hint=throughput`` (a core per CPU)."""
        return batching.optimal_jobs(self._device.info)

    def run_batch(self, items: Iterable[Inputs], outputs: Optional[Sequence[Optional[Outputs]]] = None, *,
                  priority: int = 0, timeout: Optional[float] = None,
                  max_inflight: Optional[int] = None) -> List[List[np.ndarray]]:
        """Runs the model on every item, keeping up to ``max_inflight`` jobs in flight; returns the
        results in item order (each what :meth:`run` returns).

        Args:
            items: a list of inputs, each as :meth:`run` takes them (one tensor, a list in input order,
                a dict by name; NumPy arrays or DeviceTensors).
            outputs: None (fresh outputs for every item), or a list with one entry per item: its
                outputs as :meth:`run` takes them, or None. No item's output may share a byte with another
                item's output or input, nor with a DeviceTensor input of its own item.
            priority, timeout: as :meth:`run`, for every job (a job's timeout counts from its own
                submission).
            max_inflight: at most this many jobs in flight at once (default, and at most, the device's
                ``max_inflight``).

        Every item (its count, names, dtypes and shapes) and its outputs are checked before anything is
        submitted: a bad one raises what :meth:`run` would, its message starting with
        ``"run_batch: item <index>: "``. If a job fails (with ``"run_batch: item <index>: "`` before its
        error's message, the same class) or the call is interrupted (Ctrl-C), the jobs not started are
        cancelled and the started ones awaited before the error propagates: nothing is left running.
        """
        if priority.__class__ is not int or not 0 <= priority <= 255:
            priority = _check_priority(priority)
        return batching.run_batch(self._submissions(), items, outputs, priority, _timeout_us(timeout), max_inflight)

    def imap(self, iterable: Iterable[Inputs], jobs: Optional[int] = None, *, priority: int = 0,
             timeout: Optional[float] = None) -> Generator[List[np.ndarray], None, None]:
        """A generator of the model's results over a stream of inputs, in input order, with ``jobs``
        jobs in flight.

        Args:
            iterable: inputs, each as :meth:`run` takes them; it may be endless. An item is pulled only
                when a slot is free: when the generator has yielded n results, at most n + ``jobs``
                items have been pulled.
            jobs: jobs in flight (default :attr:`optimal_jobs`: two per core, at most the device's
                ``max_inflight``; more than ``max_inflight`` is lowered to it).
            priority, timeout: as :meth:`run`, for every job.

        Nothing is submitted until the first result is asked for. A bad item, or an error raised by
        the iterable, is raised by the generator at its position, after the results before it (a bad
        item's message starts with ``"imap: item <index>: "``); a job that fails raises the same way.
        Closing the generator (``break``, ``close()``, garbage collection) or an error cancels the
        jobs not started and awaits the started ones: nothing is left running.
        """
        if priority.__class__ is not int or not 0 <= priority <= 255:
            priority = _check_priority(priority)
        return batching.imap(self._submissions(), iterable, jobs, priority, _timeout_us(timeout))

    def _submissions(self) -> batching.Submissions:
        """What run_batch's and imap's window of jobs asks of this model."""
        return batching.Submissions(self._device.info, self._check_open, self._check_inputs, self._input_ranges,
                                    self._given_outputs, self._output_ranges, self._submit_item)

    def _submit_item(self, inputs: Inputs, given: Optional[Tuple[List[Any], List[np.ndarray]]], priority: int,
                     timeout_us: int) -> Future:
        # One item of a window: its inputs' buffers, its outputs (checked already, or fresh), then submitted.
        in_bufs = self._input_buffers(inputs)
        out_bufs, results = self._fresh_outputs() if given is None else given
        return self._submit(in_bufs, out_bufs, results, priority, timeout_us)

    # -- argument handling -----------------------------------------------------------------------------

    def _closed_error(self) -> ClosedError:
        return ClosedError(f"device {self._uri!r} is closed")

    def _check_open(self) -> None:
        if self._device._closed:
            raise self._closed_error()

    def _check_inputs(self, inputs: Inputs) -> None:
        # run_batch checks every item before submitting any: what _input_buffers checks, nothing allocated.
        self._input_buffers(inputs, self._check_input)

    def _input_buffers(self, inputs: Any, each: Optional[Callable[[_Spec, Any], Any]] = None) -> List[Any]:
        # each(spec, tensor) for every input in order: _input_buffer (the default) makes its device
        # buffer; _check_input only checks it (run_batch checks every item before submitting any).
        convert = self._input_buffer if each is None else each
        t = type(inputs)
        single = self._single
        if t is _ndarray or t is DeviceTensor:
            if single is None:
                raise self._count_error(1)
            return [convert(single, inputs)]
        if t is list or t is tuple:
            specs = self._in_specs
            if len(inputs) != len(specs):
                raise self._sequence_error(inputs)
            return [convert(s, x) for s, x in zip(specs, inputs)]
        if t is dict:
            return self._mapping_buffers(inputs, convert)
        # Subclasses and other containers: the slow path.
        if isinstance(inputs, (np.ndarray, DeviceTensor, PendingTensor)):
            if single is None:
                raise self._count_error(1)
            return [convert(single, inputs)]
        if isinstance(inputs, Mapping):
            return self._mapping_buffers(inputs, convert)
        if isinstance(inputs, (list, tuple)):
            return self._input_buffers(list(inputs) if isinstance(inputs, list) else tuple(inputs), convert)
        if single is not None:
            if single.image is not None and has_buffer(inputs):  # a camera frame's memory, as it is
                return [convert(single, inputs)]
            raise self._type_error(single, inputs)
        raise TypeError(f"model {self._name!r} takes {self._n_in} inputs "
                        f"({self._names(self._in_specs)}): pass a list or a dict of arrays, "
                        f"not {type_name(inputs)}")

    def _input_buffer(self, spec: _Spec, x: Any) -> Any:
        x = self._check_input(spec, x)
        if type(x) is _ndarray or isinstance(x, np.ndarray):
            buf = self._core_device.alloc(spec.alloc)
            if spec.dense:
                buf.write(x)
            else:
                # A padded device layout: one copy through a view with the device's strides.
                np.ndarray(spec.shape, spec.dtype, buf.memory, 0, spec.strides)[...] = x
            return buf
        return x.buffer

    def _check_input(self, spec: _Spec, x: Any) -> Any:
        """``x`` (a fusion scope's result: its tensor) once it fits ``spec``: raises what a bad input to
        :meth:`run` raises, allocating and copying nothing (_input_buffer's checks, and run_batch's of every
        item before it submits any)."""
        if type(x) is PendingTensor:  # raises inside its scope
            x = x.tensor
        tx = type(x)
        if tx is DeviceTensor or (tx is not _ndarray and isinstance(x, DeviceTensor)):
            self._check_tensor(spec, x)
        elif tx is _ndarray or isinstance(x, np.ndarray):
            if x.shape != spec.shape and spec.image is not None:
                return self._frame(spec, x)
            self._check_array(spec, x)
        elif spec.image is not None and has_buffer(x):
            return self._frame(spec, x)
        else:
            raise self._type_error(spec, x)
        return x

    def _input_ranges(self, inputs: Any, job: int, prefix: str) -> List[MemoryRange]:
        """The memory each input spans (``prefix`` before its name in messages), once checked as
        :meth:`_check_input` does; ``job`` numbers its job among those checked together (run_batch's items)."""
        ranges: List[MemoryRange] = []

        def add(spec: _Spec, x: Any) -> None:
            x = self._check_input(spec, x)
            what = f"{prefix}input {spec.name!r}"
            if isinstance(x, np.ndarray):  # copied when the job is submitted
                ranges.append(array_range(x, job, what))
            else:
                ranges.append(buffer_range(x.buffer, spec.alloc, job, False, what))

        self._input_buffers(inputs, add)
        return ranges

    def _output_ranges(self, out_bufs: Sequence[Any], job: int, prefix: str = "") -> List[MemoryRange]:
        """The memory a job writes into its given output buffers."""
        return [buffer_range(b, s.alloc, job, True, f"{prefix}output {s.name!r}")
                for s, b in zip(self._out_specs, out_bufs)]

    def _check_array(self, spec: _Spec, x: np.ndarray) -> None:
        if x.dtype != spec.dtype:
            raise self._dtype_error(spec, x.dtype)
        if x.shape != spec.shape:
            raise self._shape_error(spec, x.shape)

    def _frame(self, spec: _Spec, x: Any) -> np.ndarray:
        """An image input given as a frame is as accel.image makes it, without the batch and channel axes of size 1
        (NV12 ``(H * 3/2, W)``, a ``(H/2, W/2, 2)`` UV plane, ``(H, W, 3)``), or any object with the buffer
        protocol holding exactly its bytes (a camera's or decoder's frame): a view of it in the input's shape,
        nothing copied."""
        image = spec.image
        assert image is not None  # the callers' condition
        if not isinstance(x, np.ndarray):
            try:
                x = np.frombuffer(x, np.uint8)
            except (TypeError, ValueError) as e:
                raise ShapeError(f"input {spec.name!r}: a {image.format} frame of {image.width}x{image.height} must be "
                                 f"{math.prod(spec.shape)} contiguous bytes ({e})") from None
            if x.size != math.prod(spec.shape):
                raise ShapeError(f"input {spec.name!r}: a {image.format} frame of {image.width}x{image.height} is "
                                 f"{math.prod(spec.shape)} bytes {spec.shape}, got a buffer of {x.size} bytes")
            return x.reshape(spec.shape)  # type: ignore[no-any-return]
        if x.dtype != spec.dtype:
            raise self._dtype_error(spec, x.dtype)
        if tuple(d for d in x.shape if d != 1) != tuple(d for d in spec.shape if d != 1):
            raise ShapeError(f"input {spec.name!r}: expected a {image.format} frame of {image.width}x{image.height}, "
                             f"shape {spec.shape} (or without its axes of size 1), got {x.shape}")
        return x.reshape(spec.shape)  # a view where the strides allow, else the one copy _input_buffer makes anyway

    def _check_tensor(self, spec: _Spec, t: Any) -> None:
        matches = self._tensor_matches  # the core's match, the fast path's (CORE_API.md, tensor_matches)
        if matches is None or not matches(t, spec.index, spec.output):
            self._tensor_error(spec, t)

    def _tensor_error(self, spec: _Spec, t: Any) -> None:
        """Raises what is wrong with DeviceTensor ``t`` for ``spec``, and returns if nothing is: the rule the cores'
        tensor_matches follow, in words (tests/python/frontends/test_fast_path_contract.py holds them to it)."""
        if t.dtype != spec.dtype:
            raise self._dtype_error(spec, t.dtype)
        if t.shape != spec.shape:
            raise self._shape_error(spec, t.shape)
        if t.device is not self._device and t.device is not None:
            raise InvalidArgumentError(
                f"{spec.kind} {spec.name!r}: the DeviceTensor belongs to {t.device!r}, "
                f"but model {self._name!r} is on {self._device!r}")
        if spec.layout is not None and t.layout is not None and t.layout != spec.layout:
            raise ShapeError(f"{spec.kind} {spec.name!r}: expected layout {spec.layout} with shape "
                             f"{spec.shape}, got a {t.layout} tensor")
        if not spec.dense:
            raise ShapeError(f"{spec.kind} {spec.name!r}: the device pads this tensor (strides "
                             f"{spec.strides}, {spec.info.nbytes} bytes); pass a NumPy array instead "
                             f"of a dense DeviceTensor")

    def _mapping_buffers(self, inputs: Mapping[Any, Any], convert: Callable[[_Spec, Any], Any]) -> List[Any]:
        index = self._in_index
        for key in inputs:
            if key not in index:
                raise InvalidArgumentError(
                    f"model {self._name!r} has no input {key!r}; its inputs are: "
                    f"{self._names(self._in_specs)}")
        if len(inputs) != len(index):
            missing = [s.name for s in self._in_specs if s.name not in inputs]
            raise InvalidArgumentError(
                f"model {self._name!r}: input{'s' if len(missing) > 1 else ''} "
                f"{', '.join(repr(m) for m in missing)} missing; it takes {self._n_in} "
                f"input{'s' if self._n_in != 1 else ''} ({self._names(self._in_specs)}), got {len(inputs)}")
        return [convert(s, inputs[s.name]) for s in self._in_specs]

    def _fresh_outputs(self) -> Tuple[List[Any], List[np.ndarray]]:
        alloc = self._core_device.alloc
        bufs = []
        arrays = []
        for s in self._out_specs:
            buf = alloc(s.alloc)
            bufs.append(buf)
            if s.dense:
                arrays.append(np.ndarray(s.shape, s.dtype, buf.memory))
            else:
                arrays.append(np.ndarray(s.shape, s.dtype, buf.memory, 0, s.strides))
        return bufs, arrays

    def _given_outputs(self, outputs: Any) -> Tuple[List[Any], List[np.ndarray]]:
        specs = self._out_specs
        to = type(outputs)
        if (to is list or to is tuple) and len(outputs) == len(specs):
            tensors: Sequence[Any] = outputs
        elif isinstance(outputs, Mapping):
            for key in outputs:
                if key not in self._out_index:
                    raise InvalidArgumentError(
                        f"model {self._name!r} has no output {key!r}; its outputs are: "
                        f"{self._names(specs)}")
            missing = [s.name for s in specs if s.name not in outputs]
            if missing:
                raise InvalidArgumentError(
                    f"model {self._name!r}: output{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(repr(m) for m in missing)} missing from outputs; it has "
                    f"{len(specs)} outputs ({self._names(specs)})")
            tensors = [outputs[s.name] for s in specs]
        elif isinstance(outputs, (list, tuple)):
            if len(outputs) != len(specs):
                raise InvalidArgumentError(
                    f"model {self._name!r} has {len(specs)} output{'s' if len(specs) != 1 else ''} "
                    f"({self._names(specs)}); got {len(outputs)} in outputs")
            tensors = list(outputs)
        elif isinstance(outputs, DeviceTensor):
            if len(specs) != 1:
                raise InvalidArgumentError(
                    f"model {self._name!r} has {len(specs)} outputs ({self._names(specs)}); "
                    f"pass a list or dict of DeviceTensors as outputs")
            tensors = [outputs]
        else:
            raise TypeError(f"outputs must be a list or dict of accel.DeviceTensor, "
                            f"not {type_name(outputs)}")
        bufs = []
        arrays = []
        for s, t in zip(specs, tensors):
            if type(t) is not DeviceTensor and not isinstance(t, DeviceTensor):
                hint = " (make one with device.empty(shape, dtype))" if isinstance(t, np.ndarray) else ""
                raise TypeError(f"output {s.name!r}: expected an accel.DeviceTensor{hint}, "
                                f"got {type_name(t)}")
            self._check_tensor(s, t)
            bufs.append(t.buffer)
            arrays.append(t.numpy())
        return bufs, arrays

    # -- messages --------------------------------------------------------------------------------------

    @staticmethod
    def _names(specs: Sequence[_Spec]) -> str:
        return ", ".join(repr(s.name) for s in specs)

    def _count_error(self, given: int) -> InvalidArgumentError:
        n = self._n_in
        return InvalidArgumentError(
            f"model {self._name!r} takes {n} input{'s' if n != 1 else ''} "
            f"({self._names(self._in_specs)}); got {given}")

    def _sequence_error(self, inputs: Sequence[Any]) -> Exception:
        # A list of numbers (or of lists) is not a list of tensors: say so rather than miscount.
        specs = self._in_specs
        for i, x in enumerate(inputs):
            if not isinstance(x, (np.ndarray, DeviceTensor)):
                if self._single is not None:
                    return self._type_error(self._single, inputs)
                return self._type_error(specs[min(i, len(specs) - 1)], x)
        return self._count_error(len(inputs))

    def _type_error(self, spec: _Spec, x: Any) -> TypeError:
        hint = ""
        if x is not None and (isinstance(x, (list, tuple, int, float, complex, np.generic))
                              or hasattr(x, "__array__")):
            hint = f"; convert it with numpy.asarray(..., dtype=numpy.{spec.dtype})"
        return TypeError(f"input {spec.name!r}: expected a numpy.ndarray or accel.DeviceTensor of "
                         f"{spec.dtype}{list(spec.shape)}, got {type_name(x)}{hint}")

    def _dtype_error(self, spec: _Spec, given: np.dtype) -> DTypeError:
        from .dtypes import describe_dtype

        return DTypeError(f"{spec.kind} {spec.name!r}: expected dtype {spec.dtype}, got "
                          f"{describe_dtype(np.dtype(given))} (accel never casts: convert with "
                          f".astype(numpy.{spec.dtype}))")

    def _shape_error(self, spec: _Spec, given: Tuple[int, ...]) -> ShapeError:
        return ShapeError(f"{spec.kind} {spec.name!r}: expected shape {tuple(spec.shape)}, "
                          f"got {tuple(given)}")
