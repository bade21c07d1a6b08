"""CoreModel.run_tensors for the cffi core: the common case of Model.run (DeviceTensors that match the
model exactly, or for inputs NumPy arrays to copy in whole; outputs given as DeviceTensors or left to be
allocated) checked and run with as little Python as possible. It answers None for anything else, and
Model.run then takes its Python path, which handles every other case and words every error: errors are
written in one place."""
from __future__ import annotations

from operator import attrgetter
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ._lib import ffi, lib
from .buffer import CoreBuffer, allocate, allocate_memory
from .device_base import DeviceBase
from .tensor import TENSOR_TYPES, CoreTensor
from .waiting import run_blocking

__all__ = ["FastPath", "set_fast_path", "run_tensors", "tensor_matches"]

_ndarray = np.ndarray
_HANDLE = attrgetter("_handle")  # of a CoreBuffer: its accel_buffer*
_TENSOR_HANDLE = attrgetter("_buffer_handle")  # of a CoreTensor (an accel.DeviceTensor)
_TENSORS = TENSOR_TYPES  # type(x) in _TENSORS: x is a tensor (a hash, where isinstance walks the MRO)
_run_1x1 = lib.accel_cffi_run_1x1
_run = lib.accel_runcore_run
_run_copied_1x1 = lib.accel_cffi_run_copied_1x1
_outputs_alias = lib.accel_runcore_outputs_alias
_from_buffer = ffi.from_buffer
_NULL = ffi.NULL


class _Spec:
    """One input or output as the fast path checks it (a model with a padded one has no fast path)."""

    __slots__ = ("dtype", "shape", "layout", "alloc_bytes")

    def __init__(self, spec: Sequence[Any]) -> None:
        # (dtype, shape, layout, alloc_bytes, dense), made by accel.runtime.model.Model.
        self.dtype = spec[0]  # compared by identity: NumPy's builtin dtypes are singletons
        self.shape = tuple(int(d) for d in spec[1])
        self.layout = spec[2]
        self.alloc_bytes = int(spec[3])


class FastPath:
    """What run_tensors checks a call against: the model's tensors as the public Model sees them."""

    __slots__ = ("device", "core_device", "inputs", "outputs", "n_in", "n_out", "one_to_one", "all_dense")

    def __init__(self, device: Any, core_device: Any, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
        if not isinstance(core_device, DeviceBase):
            raise TypeError(f"core_device must be a CoreDevice, not {type(core_device).__name__}")
        self.device = device  # the public Device: a DeviceTensor of another one is not ours
        self.core_device = core_device  # to allocate fresh outputs (and to see it closed)
        self.inputs = tuple(_Spec(s) for s in inputs)
        self.outputs = tuple(_Spec(s) for s in outputs)
        self.n_in = len(self.inputs)
        self.n_out = len(self.outputs)
        self.one_to_one = self.n_in == 1 and self.n_out == 1
        self.all_dense = all(bool(s[4]) for s in (*inputs, *outputs))



def _matches(t: CoreTensor, s: _Spec, device: Any) -> bool:
    """Whether tensor `t` matches `s` on `device` (CORE_API.md, ``tensor_matches``); remembered on the tensor (it
    never changes) when the fast path can take it, that is unless its memory is imported (CoreModel.run holds that
    for the job's life)."""
    if t._dtype is not s.dtype or t._shape != s.shape or t._device is not device:
        return False
    if s.layout is not None and t._layout is not None and t._layout != s.layout:
        return False
    if not t._buffer._imported:
        t._checked = s
    return True


def _takes(t: CoreTensor, s: _Spec, device: Any) -> bool:
    """Whether the fast path takes tensor `t` as `s`: it matches, and its memory is not imported."""
    return t._checked is s or (_matches(t, s, device) and t._checked is s)


def _copyable(x: np.ndarray, s: _Spec) -> bool:
    """Whether NumPy array `x` can be copied in as `s` in one piece: its very dtype, shape, C order."""
    return x.dtype is s.dtype and x.shape == s.shape and x.flags.c_contiguous


def _all_match(tensors: Any, specs: Tuple[_Spec, ...], device: Any, copies: bool = False) -> bool:
    """Whether each of `tensors` is an accel.DeviceTensor matching its spec (or, with `copies`, a NumPy
    array to copy in)."""
    if len(tensors) != len(specs):
        return False
    for t, s in zip(tensors, specs):
        tt = type(t)
        if tt in _TENSORS:
            if t._checked is not s and not _takes(t, s, device):
                return False
        elif not copies or tt is not _ndarray or not _copyable(t, s):
            return False
    return True


# These two docstrings are the pybind11 core's, word for word (tests/python/frontends/test_frontends.py): hence the
# long lines.
def set_fast_path(self: Any, device: Any, core_device: Any, inputs: Sequence[Any], outputs: Sequence[Any]) -> None:
    """Enables run_tensors: the public Device, its CoreDevice and one (dtype, shape, layout, alloc_bytes, dense) tuple per input and output."""  # noqa: E501
    fast = FastPath(device, core_device, inputs, outputs)
    self._fast = fast if fast.all_dense else None  # a padded tensor always takes the Python path


def run_tensors(self: Any, inputs: Any, outputs: Any, priority: Any) -> Optional[List[np.ndarray]]:
    """Model.run's fast path: runs and returns the output arrays, or None (nothing done) if the call is not one it takes."""  # noqa: E501
    fast = self._fast
    model_owner = self._model  # read once, and held: another thread may release the model meanwhile
    if fast is None or model_owner is None or priority.__class__ is not int or not 0 <= priority <= 255:
        return None
    device_owner = fast.core_device._device  # read once, and held: another thread may close the device
    if device_owner is None:
        return None
    model = model_owner[0]
    device = device_owner[0]
    t = type(inputs)
    if t is _ndarray or t in _TENSORS:
        inputs = (inputs,)
    elif t is not list and t is not tuple:
        return None
    if fast.one_to_one:  # the common case, without lists or loops
        if len(inputs) != 1:
            return None
        x = inputs[0]
        spec = fast.inputs[0]
        tx = type(x)
        if tx in _TENSORS:
            if x._checked is not spec and not _takes(x, spec, fast.device):
                return None
            src = None
        elif tx is _ndarray and x.dtype is spec.dtype and x.shape == spec.shape:
            try:
                src = _from_buffer(x)  # a plain export: NumPy refuses it unless x is C-contiguous
            except (BufferError, ValueError, TypeError):
                return None
        else:
            return None
        spec = fast.outputs[0]
        if outputs is None:  # the array alone owns its fresh buffer: no CoreBuffer is made
            out_handle, memory = allocate_memory(device, spec.alloc_bytes)
            result = _ndarray(spec.shape, spec.dtype, memory)
        else:
            to = type(outputs)
            if (to is not list and to is not tuple) or len(outputs) != 1:
                return None
            y = outputs[0]
            if type(y) not in _TENSORS or (y._checked is not spec and not _takes(y, spec, fast.device)):
                return None
            out_handle = y._buffer_handle
            if src is None and out_handle == x._buffer_handle:
                # accel_runcore_outputs_alias for one input and one output: one comparison, where the cffi call
                # (two handle arrays made from lists) would cost more than the rest of this path's checks
                return None
            result = y.numpy()  # accel.DeviceTensor's
        # x and result hold the buffers while the GIL is released
        if src is None:
            run_blocking(_run_1x1, model, x._buffer_handle, out_handle, priority)
        else:
            run_blocking(_run_copied_1x1, model, device, src, len(src),
                         fast.inputs[0].alloc_bytes, out_handle, priority)
        return [result]
    if not _all_match(inputs, fast.inputs, fast.device, copies=True):
        return None
    if outputs is None:
        fresh = [allocate(device, s.alloc_bytes) for s in fast.outputs]
        results = [_ndarray(s.shape, s.dtype, b._memory) for s, b in zip(fast.outputs, fresh)]
        out_handles = list(map(_HANDLE, fresh))
    else:
        to = type(outputs)
        if (to is not list and to is not tuple) or not _all_match(outputs, fast.outputs, fast.device):
            return None
        out_handles = list(map(_TENSOR_HANDLE, outputs))
        # the run core's rule, as pybind11's; a NumPy input's buffer is yet to be made (NULL: none of them)
        given = [x._buffer_handle if type(x) in _TENSORS else _NULL for x in inputs]
        if _outputs_alias(given, fast.n_in, out_handles, fast.n_out):
            return None
        results = [y.numpy() for y in outputs]  # accel.DeviceTensor's
    keep: List[Any] = [_copied_in(x, s, device) if type(x) is _ndarray else x for x, s in zip(inputs, fast.inputs)]
    in_handles = [b._handle if type(b) is CoreBuffer else b._buffer_handle for b in keep]
    # keep, outputs and results hold every buffer while the GIL is released
    run_blocking(_run, model, in_handles, fast.n_in, out_handles, fast.n_out, priority, 0, 0, _NULL, _NULL)
    return results


def tensor_matches(self: Any, tensor: Any, index: int, output: bool) -> bool:
    """Whether accel.DeviceTensor `tensor` matches the fast path's spec of input (or output) `index`; remembered on the tensor."""  # noqa: E501
    fast = self._fast
    if fast is None or type(tensor) not in _TENSORS:
        return False
    spec = (fast.outputs if output else fast.inputs)[index]
    return tensor._checked is spec or _matches(tensor, spec, fast.device)


def _copied_in(x: np.ndarray, spec: _Spec, device: Any) -> CoreBuffer:
    buf = allocate(device, spec.alloc_bytes)
    buf.write(x)
    return buf
