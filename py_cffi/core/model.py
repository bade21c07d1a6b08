"""CoreModel: tensor metadata, run (submit + sliced wait, GIL released) and submit with a completion
callback."""
from __future__ import annotations

import operator
from operator import attrgetter
from typing import Any, Callable, List, Sequence, Tuple

from ._lib import check, error, ffi, last_message, lib, new_owner, text
from ._scratch import records
from .buffer import CoreBuffer
from .fast_run import run_tensors, set_fast_path, tensor_matches
from .job import Completion, CoreJob, discard, new_timing, register, timing_tuple, wrap_job
from .waiting import REFUSED, refused, run_blocking, submit

__all__ = ["CoreModel", "wrap_model"]

_INFO = ffi.typeof("accel_tensor_info *")
_COUNT = ffi.typeof("size_t *")
_HANDLE = attrgetter("_handle")

TensorTuple = Tuple[str, Tuple[int, ...], int, int, Tuple[int, ...], int, Any, Any]

_INT32 = (-(1 << 31), (1 << 31) - 1)
_UINT32 = (0, (1 << 32) - 1)
_UINT64 = (0, (1 << 64) - 1)
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _int_arg(value: Any, name: str, bounds: Tuple[int, int]) -> int:
    if isinstance(value, float) or not hasattr(type(value), "__index__"):
        raise TypeError(f"run(): {name} must be an int, not {type(value).__name__}")
    v = operator.index(value)
    if not bounds[0] <= v <= bounds[1]:
        raise ValueError(f"run(): {name} is out of range")
    return v


def buffer_handles(sequence: Any, what: str) -> Tuple[List[Any], Tuple[CoreBuffer, ...]]:
    """The accel_buffer handles of a sequence of CoreBuffers (a list, which cffi passes as a
    temporary C array, cheaper than ffi.new), and the CoreBuffers themselves, for the caller to hold
    while the GIL is released whatever happens to its list meanwhile."""
    items = tuple(sequence)
    try:
        return list(map(_HANDLE, items)), items
    except AttributeError:
        for i, b in enumerate(items):
            if type(b) is not CoreBuffer:
                raise TypeError(f"{what}[{i}] must be a CoreBuffer, not {type(b).__name__}") from None
        raise


def _job_arguments(inputs: Any, outputs: Any, priority: Any, core_mask: Any,
                   timeout_us: Any) -> Tuple[Tuple[Any, ...], Tuple[Any, ...]]:
    """The C arguments of a job, (inputs, input_count, outputs, output_count, priority, core_mask,
    timeout_us), checked; and the CoreBuffers, for the caller to hold while the job is submitted."""
    in_handles, in_keep = buffer_handles(inputs, "inputs")
    out_handles, out_keep = buffer_handles(outputs, "outputs")
    for i, b in enumerate(out_keep):
        if b._readonly:
            raise error(lib.ACCEL_ERR_INVALID_ARGUMENT, f"outputs[{i}] is read-only memory (imported from a read-only "
                                                        f"object such as bytes): the device cannot write into it")
    if priority.__class__ is not int or core_mask.__class__ is not int or timeout_us.__class__ is not int:
        priority = _int_arg(priority, "priority", _INT32)
        core_mask = _int_arg(core_mask, "core_mask", _UINT64)
        timeout_us = _int_arg(timeout_us, "timeout_us", _INT64)
    return (in_handles, len(in_keep), out_handles, len(out_keep), priority, core_mask, timeout_us), (in_keep, out_keep)


def _any_imported(keep: Tuple[Tuple[CoreBuffer, ...], Tuple[CoreBuffer, ...]]) -> bool:
    return any(b._imported for group in keep for b in group)


def _ignore(*args: Any) -> None:
    pass


def _quant(q: Any) -> Any:
    if q.type == lib.ACCEL_QUANT_NONE:
        return None
    n = q.count
    scales = tuple(float(q.scales[i]) for i in range(n)) if q.scales != ffi.NULL else ()
    zero_points = tuple(int(q.zero_points[i]) for i in range(n)) if q.zero_points != ffi.NULL else None
    shifts = tuple(int(q.shifts[i]) for i in range(n)) if q.shifts != ffi.NULL else None
    return (int(q.type), int(q.axis), scales, zero_points, shifts)


def _image(t: Any) -> Any:
    """None for a plain tensor, else (format, plane_offsets, width, height, width_align, height_align)."""
    if t.image_format == lib.ACCEL_IMAGE_NONE:
        return None
    offsets = tuple(int(t.plane_offset[i]) for i in range(min(t.plane_count, 2)))
    return (int(t.image_format), offsets, int(t.image_width), int(t.image_height), int(t.width_align),
            int(t.height_align))


class CoreModel:
    """A loaded model (one accel_model reference)."""

    __slots__ = ("_model", "_fast", "__weakref__")
    _model: Any  # its owner (_lib.new_owner: the handle is [0]), None once released
    _fast: Any  # fast_run.FastPath, or None: set by fast_run.set_fast_path

    def __init__(self) -> None:
        raise TypeError("accel._cffi_core.CoreModel cannot be instantiated from Python: CoreDevice.load "
                        "makes them")

    def _get(self) -> Any:
        model = self._model
        if model is None:
            raise error(lib.ACCEL_ERR_CLOSED, "the model is released")
        return model

    def _infos(self, outputs: bool) -> List[TensorTuple]:
        owner = self._get()
        model = owner[0]
        count = ffi.new(_COUNT)
        check(lib.accel_model_output_count(model, count) if outputs else lib.accel_model_input_count(model, count))
        infos = []
        for i in range(count[0]):
            t = ffi.new(_INFO)
            t.struct_size = ffi.sizeof("accel_tensor_info")
            check(lib.accel_model_output_info(model, i, t) if outputs else lib.accel_model_input_info(model, i, t))
            ndim = min(t.ndim, lib.ACCEL_MAX_DIMS)
            infos.append((text(t.name), tuple(int(t.shape[d]) for d in range(ndim)), int(t.dtype), int(t.layout),
                          tuple(int(t.strides[d]) for d in range(ndim)), int(t.byte_size), _quant(t.quant),
                          _image(t)))
        return infos

    def inputs(self) -> List[TensorTuple]:
        """[(name, shape, dtype, layout, strides, byte_size, quant, image)] of the inputs"""
        return self._infos(False)

    def outputs(self) -> List[TensorTuple]:
        """[(name, shape, dtype, layout, strides, byte_size, quant, image)] of the outputs"""
        return self._infos(True)

    def run(self, inputs: Sequence[CoreBuffer], outputs: Sequence[CoreBuffer], priority: int = 0,
            core_mask: int = 0, timeout_us: int = 0) -> Tuple[int, int, int, int]:
        """Submit, wait (GIL released, Ctrl-C aware), release; returns (queued_ns, started_ns, finished_ns, core)."""
        owner = self._get()  # held: release() from another thread cannot free the model under the run
        args, keep = _job_arguments(inputs, outputs, priority, core_mask, timeout_us)
        if _any_imported(keep):
            # Memory imported from Python objects: a run the run core abandons (Ctrl-C) could still be
            # reading or writing it once they are gone. A submission holds them until its completion,
            # and this waits for it; the job is released at the end (cancelled if not started).
            job = self.submit(inputs, outputs, _ignore, priority, core_mask, timeout_us)
            try:
                job.wait()
                return job.timing()
            finally:
                job.release()
        scratch = records()
        timing = scratch.pop("timing", None) or new_timing()
        run_blocking(lib.accel_runcore_run, owner[0], *args, timing, ffi.NULL)
        result = timing_tuple(timing)
        scratch["timing"] = timing
        return result

    def submit(self, inputs: Sequence[CoreBuffer], outputs: Sequence[CoreBuffer],
               callback: Callable[[int, str, Tuple[int, int, int, int]], Any], priority: int = 0,
               core_mask: int = 0, timeout_us: int = 0, flags: int = 0) -> CoreJob:
        """Submits with callback(status, message, timing), called once on the completion thread."""
        owner = self._get()
        if not callable(callback):
            raise TypeError("callback must be callable")
        args, keep = _job_arguments(inputs, outputs, priority, core_mask, timeout_us)
        if flags.__class__ is not int:
            flags = _int_arg(flags, "flags", _UINT32)
        # A job over memory imported from Python objects holds their CoreBuffers (which hold the objects)
        # until it is over.
        completion = Completion(callback, keep if _any_imported(keep) else None)
        handle = ffi.new_handle(completion)
        slot = new_owner("job")  # set by C only once the job is submitted
        try:
            register(handle)
            status = submit(owner[0], *args, flags, handle, slot)
        except BaseException:
            # Ctrl-C anywhere from the registration on (while waiting for a slot, say). Once
            # submitted, the callback will come and needs its completion: only a job never
            # submitted drops it.
            if slot[0] == ffi.NULL:
                discard(handle)
            raise
        if status:
            discard(handle)
            if status == REFUSED:
                raise refused()
            raise error(status, last_message())
        return wrap_job(slot)

    def nodes(self) -> List[Tuple[str, str]]:
        """[(name, op_type)] of the nodes as the device runs them"""
        model = self._get()[0]
        count = ffi.new(_COUNT)
        check(lib.accel_model_get_node_count(model, count))
        nodes = []
        info = ffi.new("accel_node_info *")
        for i in range(count[0]):
            info.struct_size = ffi.sizeof("accel_node_info")
            check(lib.accel_model_get_node_info(model, i, info))
            nodes.append((text(info.name), text(info.op_type)))
        return nodes

    # Model.run's fast path (fast_run.py)
    set_fast_path = set_fast_path
    run_tensors = run_tensors
    tensor_matches = tensor_matches

    def release(self) -> None:
        """Drops the model reference now (idempotent)."""
        self._model = None  # the handle's owner releases it once no run holds it any more


def wrap_model(owner: Any) -> CoreModel:
    """A CoreModel over ``owner`` (from _lib.new_owner), which holds the model reference."""
    model = object.__new__(CoreModel)
    model._model = owner
    model._fast = None
    return model
