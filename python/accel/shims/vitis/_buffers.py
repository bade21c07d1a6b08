"""The arrays of ``Runner.execute_async`` as VART's Python binding takes them (runner_py_module.cpp), checked first:
the binding reads each one's memory as the runner's tensor (its dims, not the array's shape; int8 as it is, float32
converted with the tensor's fix_point as VART's TensorBuffer::copy_tensor_buffer does) and aborts the process, or
reads and writes past the array's end, where the shim raises accel's errors instead."""
from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np

from ...errors import DTypeError, InvalidArgumentError, ShapeError
from .. import session
from .tensor_buffer import TensorBuffer
from .xir import Tensor

__all__ = ["arrays", "feed", "fix_point", "write"]

_INT8, _FLOAT32 = np.dtype(np.int8), np.dtype(np.float32)


def arrays(items: Any, tensors: Sequence[Tensor], kind: str, dynamic: bool) -> List[np.ndarray]:
    """`items` (the script's list of inputs or outputs) as NumPy views, one per tensor, each checked: a buffer
    (ndarray, TensorBuffer, any object with the buffer protocol), int8 or float32 in native byte order, exactly the
    tensor's element count (any shape, as VART ignores it; with enable_dynamic_array the tensor's very shape), an
    output writable."""
    if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
        raise TypeError(f"execute_async() takes a list of {kind} arrays, not {type(items).__name__}")
    if len(items) != len(tensors):
        names = ", ".join(repr(t.name) for t in tensors)
        raise InvalidArgumentError(f"execute_async() got {len(items)} {kind} arrays for {len(tensors)} {kind} tensors "
                                   f"({names}); VART indexes past its tensors or aborts here")
    out: List[np.ndarray] = []
    for i, (item, t) in enumerate(zip(items, tensors)):
        what = f"{kind} {i} ({t.name!r})"
        a = _view(item, what)
        if a.dtype == np.int16:
            raise DTypeError(f"{what} is int16: VART would copy 2 bytes per element into the DPU's {t.dtype} tensor, "
                             f"past its end; pass int8 (or float32, converted with fix_point)")
        if a.dtype not in (_INT8, _FLOAT32):
            raise DTypeError(f"{what} is {a.dtype}: VART takes int8 (the tensor's {t.dtype} integers) or float32 "
                             f"(real values, converted with the tensor's fix_point) and aborts on anything else; "
                             f"make it with np.empty(dims, dtype=np.int8)")
        n = t.get_element_num()
        if a.size != n or (dynamic and list(a.shape) != t.dims):
            raise ShapeError(f"{what} has shape {list(a.shape)} ({a.size} elements); the tensor is {t.dims} ({n}): "
                             f"VART would {'read' if kind == 'input' else 'write'} "
                             f"{'past its end' if a.size < n else 'only part of it'}"
                             + ("; enable_dynamic_array (a batch of another size) is not emulated" if dynamic else ""))
        if kind == "output" and not a.flags.writeable:
            raise InvalidArgumentError(f"{what} is read-only; VART writes the results into it")
        if a.dtype == _FLOAT32:
            fix_point(t)
        out.append(a)
    return out


def _view(item: Any, what: str) -> np.ndarray:
    if isinstance(item, np.ndarray):
        return item
    if isinstance(item, TensorBuffer):
        return item._view()
    try:
        return np.asarray(memoryview(item))
    except TypeError:
        raise TypeError(f"{what} is a {type(item).__name__}, not an array: VART takes objects with the buffer "
                        f"protocol (numpy arrays, the TensorBuffers of RunnerExt.get_inputs())") from None


def fix_point(t: Tensor) -> int:
    """The tensor's fix point, which a float32 array needs (VART aborts on a tensor without one)."""
    if not t.has_attr("fix_point"):
        raise InvalidArgumentError(f"tensor {t.name!r} has no fix_point: VART cannot convert float32 for it (it "
                                   f"aborts); pass int8")
    fp = t.get_attr("fix_point")
    assert isinstance(fp, int)
    return fp


def feed(item: Any, a: np.ndarray, t: Tensor) -> Any:
    """What Model.run takes for an input: a TensorBuffer's device tensor in place where it is the tensor's own shape
    (no copy), else the int8 values in the tensor's dims. float32 becomes (int8_t)(x * 2^fix_point) as VART computes
    it: float32 product, truncated toward zero, and (as the board's cast does) wrapped to 8 bits when out of range."""
    if isinstance(item, TensorBuffer) and item._shape_is(t.dims):
        return item._tensor
    if a.dtype == _INT8:
        return np.ascontiguousarray(a).reshape(t.dims)
    scaled = np.asarray(a, np.float32) * np.float32(2.0 ** fix_point(t))
    v = np.trunc(np.nan_to_num(scaled.astype(np.float64), nan=0.0))
    v = np.clip(v, -2.0 ** 31, 2.0 ** 31 - 1).astype(np.int64)  # aarch64's fcvtzs saturates to int32 ...
    if np.any((v < -128) | (v > 127)):
        session.say_once(f"vitis-wrap-{t.name}", f"float32 input {t.name!r} holds values outside int8 once scaled by "
                                                 f"2^{fix_point(t)}: they wrap around, as VART's (int8_t) cast does")
    return (v & 0xFF).astype(np.uint8).view(np.int8).reshape(t.dims)  # ... and the int8 store keeps its low byte


def write(result: np.ndarray, a: np.ndarray, t: Tensor) -> None:
    """The output's int8 values into the script's array: as they are, or float32 q * 2^-fix_point."""
    if a.dtype == _INT8:
        a[...] = result.reshape(a.shape)
    else:
        a[...] = (result.astype(np.float32) * np.float32(2.0 ** -fix_point(t))).reshape(a.shape)
