# Type stubs for accel._pybind, the pybind11 core (sources: py_pybind/), and the typed contract of
# every core: tests/python/frontends/test_core_stub.py checks both bindings (accel._pybind and accel._cffi_core)
# against it, name by name, parameter by parameter, and the types of what they return. CORE_API.md is
# the narrative around it.
#
# Errors: every failing libaccel call raises accel.errors.from_status(status, message), an AccelError
# subclass chosen by the C status (accel.errors is imported on the first error). Wrong Python
# argument types raise TypeError.
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

# (queued_ns, started_ns, finished_ns, core); core is -1 for a job that never ran.
_Timing = Tuple[int, int, int, int]
# (type, axis, scales, zero_points or None, shifts or None); accel_quant_type codes.
_Quant = Tuple[int, int, Tuple[float, ...], Optional[Tuple[int, ...]], Optional[Tuple[int, ...]]]
# (name, shape, dtype (accel_dtype code), layout (accel_layout code), byte strides, byte_size, quant)
_Image = Tuple[int, Tuple[int, ...], int, int, int, int]
_TensorTuple = Tuple[str, Tuple[int, ...], int, int, Tuple[int, ...], int, Optional[_Quant], Optional[_Image]]
# (dtype, shape, layout, alloc_bytes, dense): one input or output as the fast path checks it.
_FastSpec = Tuple[np.dtype, Tuple[int, ...], Optional[str], int, bool]
# Anything with the buffer protocol (bytes, bytearray, memoryview, a NumPy array...).
_BufferLike = Any

# accel_abi_version(): (major << 16) | minor of the loaded libaccel.
def abi_version() -> int: ...

# accel_version_string(): libaccel's release, "major.minor.patch".
def version() -> str: ...

# The URI schemes of the usable drivers, in loader order, e.g. ["emu"].
def backends() -> List[str]: ...

# Jobs submitted with CoreModel.submit whose callback has not returned yet (the run core's count).
def inflight_callbacks() -> int: ...

# accel_uri_parse: (scheme, [(key, value or None), ...]) of a device URI; InvalidArgumentError without a scheme.
def parse_uri(uri: str) -> Tuple[str, List[Tuple[str, Optional[str]]]]: ...

# accel_device_describe: {"flags", "int8_rules", "image_formats" (ints, accel.h's codes), "model_format",
# "file_suffixes", "first_device" (strs)} of a device opened with uri, without opening one.
def describe(uri: str) -> Dict[str, Any]: ...

class CoreDevice:
    # accel_device_open(uri); holds one device reference. NotFoundError for an unknown scheme,
    # InvalidArgumentError for a bad option.
    def __init__(self, uri: str) -> None: ...
    # {"name", "backend", "cores", "max_inflight", "debug" (bool), "alignment", "pool_bytes"}
    def info(self) -> Dict[str, Any]: ...
    # {"bytes_in_use", "peak_bytes_in_use", "live_buffers", "allocations", "bytes_copied",
    #  "jobs_submitted", "jobs_completed"} (ints)
    def stats(self) -> Dict[str, int]: ...
    # accel_buffer_alloc: nbytes > 0, rounded up to the device alignment.
    def alloc(self, nbytes: int) -> CoreBuffer: ...
    # accel_buffer_import of a C-contiguous buffer-protocol object's own memory (no copy); the
    # CoreBuffer holds the object's export until it goes (jobs using it hold it); a read-only exporter
    # makes a read-only CoreBuffer. ValueError if not C-contiguous; AlignmentError, UnsupportedError.
    def import_buffer(self, obj: _BufferLike) -> CoreBuffer: ...
    # accel_model_load_memory from any buffer-protocol object (read during the call only, with the
    # GIL released); with subgraph, one runnable subgraph of the file by name
    # (accel_model_load_memory_with_options): UnsupportedError where the driver cannot choose.
    def load(self, data: _BufferLike, subgraph: Optional[str] = None) -> CoreModel: ...
    # accel_device_check: MemoryCorruptionError names a damaged buffer (debug mode).
    def check(self) -> None: ...
    # Drops this object's device reference (idempotent). Buffers, models and jobs keep the device
    # alive on their own; afterwards every method raises ClosedError (status 16).
    def close(self) -> None: ...

class CoreBuffer:
    # Device memory, one buffer reference (which holds the device). Buffer protocol: a writable,
    # C-contiguous 1-D uint8 ("B") buffer of `nbytes` bytes at `address`; a view (np.frombuffer,
    # memoryview, DLPack) keeps the CoreBuffer, and so the memory, alive. No release(): the reference
    # goes with the object.
    # Usable size in bytes (rounded up to the device alignment).
    @property
    def nbytes(self) -> int: ...
    # Host pointer of the memory.
    @property
    def address(self) -> int: ...
    # The bytes as a buffer-protocol object that keeps the memory alive: the pybind11 core's is this
    # CoreBuffer itself, the cffi core's a cffi buffer over the array that owns the reference.
    @property
    def memory(self) -> _BufferLike: ...
    # Imported from a read-only object (bytes...): its views are read-only and no job may write it.
    @property
    def readonly(self) -> bool: ...
    # The memory of a Python object (import_buffer), not the device's own.
    @property
    def imported(self) -> bool: ...
    # Exactly one copy of the array's bytes, in C order from offset 0, from any strides (negative,
    # zero, non-contiguous; read-only arrays too) through accel_buffer_write_strided (counted in
    # stats()["bytes_copied"]). ValueError if array.nbytes > nbytes. Copies above 64 KiB release
    # the GIL.
    def write(self, array: _BufferLike) -> None: ...
    def __buffer__(self, flags: int) -> memoryview: ...
    # CoreBuffer(nbytes=64, address=0x7f0e5bc00000)
    def __repr__(self) -> str: ...

class CoreModel:
    # A loaded model, one model reference (which holds the device).
    # One tuple per input/output, in order.
    def inputs(self) -> List[_TensorTuple]: ...
    def outputs(self) -> List[_TensorTuple]: ...
    # Submit, wait, release, with the GIL released; the wait runs in slices of <= 20 ms with the
    # signal handlers run in between, so Ctrl-C raises KeyboardInterrupt within ~20 ms (the job
    # handle is then released: a job not started is cancelled). Thread safe. Raises the job's error.
    def run(self, inputs: Sequence[CoreBuffer], outputs: Sequence[CoreBuffer], priority: int = 0,
            core_mask: int = 0, timeout_us: int = 0) -> _Timing: ...
    # Submits with a completion callback: callback(status, message, timing) is called exactly once
    # on the driver's completion thread with the GIL held ("" message when status is 0); exceptions
    # it raises go to sys.unraisablehook. The core holds `callback` until it has been called.
    # Blocks (GIL released) while max_inflight jobs are in flight. After interpreter exit began,
    # raises ClosedError. `flags` may hold ACCEL_SUBMIT_PROFILE_NODES (2): the job records its
    # node times (CoreJob.node_times).
    def submit(self, inputs: Sequence[CoreBuffer], outputs: Sequence[CoreBuffer],
               callback: Callable[[int, str, _Timing], Any], priority: int = 0, core_mask: int = 0,
               timeout_us: int = 0, flags: int = 0) -> CoreJob: ...
    # [(name, op_type)] per node as the device runs them; UnsupportedError where the driver cannot.
    def nodes(self) -> List[Tuple[str, str]]: ...
    # Model.run's fast path (CORE_API.md): set once with the public Device, its CoreDevice and one
    # (dtype, shape, layout, alloc_bytes, dense) per input and output; run_tensors then runs calls that
    # are exactly accel.DeviceTensors (CoreTensor subclasses) or NumPy arrays matching those (returning
    # the output arrays) and returns None, having done nothing, for any other call.
    def set_fast_path(self, device: Any, core_device: CoreDevice, inputs: Sequence[_FastSpec],
                      outputs: Sequence[_FastSpec]) -> None: ...
    def run_tensors(self, inputs: Any, outputs: Any, priority: Any) -> Optional[List[np.ndarray]]: ...
    # The fast path's match of one accel.DeviceTensor against input (or output) `index`, remembered on the
    # tensor; False before set_fast_path. Model's Python path asks it rather than check the tensor again.
    def tensor_matches(self, tensor: Any, index: int, output: bool) -> bool: ...
    # Drops the model reference now (idempotent); later calls raise ClosedError.
    def release(self) -> None: ...

class CoreJob:
    # A submitted job, one job reference.
    # Waits (GIL released, Ctrl-C aware as in run). Raises the job's error if it failed, or
    # NotReadyError (status 13) if `timeout` seconds passed first (the job goes on).
    def wait(self, timeout: Optional[float] = None) -> None: ...
    # accel_job_poll: True once the job has finished.
    def done(self) -> bool: ...
    def timing(self) -> _Timing: ...
    # [(started_ns, finished_ns)] per node of a job submitted with ACCEL_SUBMIT_PROFILE_NODES;
    # UnsupportedError without it (or where the driver cannot), NotReadyError before it finished.
    def node_times(self) -> List[Tuple[int, int]]: ...
    # Drops the job reference (idempotent); a job not started is cancelled (its callback sees
    # status 12). Later calls of wait/done/timing raise ClosedError.
    def release(self) -> None: ...

class CoreTensor:
    # The core's tensor base: a dense, C-order view of `buffer`; accel.DeviceTensor
    # (runtime/device_tensor.py) subclasses it, checks its arguments first and writes the API. Its own
    # checks are what memory safety needs: `buffer` a CoreBuffer (TypeError), a dtype the buffer protocol
    # can name (pybind11: TypeError), no negative dimension and prod(shape) * itemsize within
    # buffer.nbytes (ValueError). The fast path (run_tensors) takes instances of its subclasses.
    # Export: the pybind11 core's buffer protocol (writable unless the buffer is read-only, the dtype's
    # format, the shape, C-order byte strides: np.asarray(t) and memoryview(t) are zero-copy views that
    # keep t alive); the cffi core's __array_interface__ (and __buffer__ from Python 3.12).
    def __init__(self, buffer: CoreBuffer, shape: Sequence[int], dtype: Union[np.dtype, type, str],
                 layout: Optional[str], device: Any) -> None: ...
    # What the subclass reads: as given (shape a tuple of ints, dtype a numpy.dtype).
    @property
    def _buffer(self) -> CoreBuffer: ...
    @property
    def _shape(self) -> Tuple[int, ...]: ...
    @property
    def _dtype(self) -> np.dtype: ...
    @property
    def _layout(self) -> Optional[str]: ...
    @property
    def _device(self) -> Any: ...
    def __buffer__(self, flags: int) -> memoryview: ...
