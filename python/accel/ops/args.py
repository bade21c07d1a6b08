"""Argument checks shared by the op rules: ints and int pairs, numbers, dims, weights, result sizes, and
the wording of errors.

Every message starts with the op's name and names the argument, so that a wrong call inside a long
fusion scope says which call it was. Every number is checked against what it becomes (an ONNX int64 or
float32, a window size or a tensor the device compiles), so that none overflows on the way to the model.
"""
from __future__ import annotations

import math
import operator
from typing import Any, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from ..errors import DTypeError, InvalidArgumentError, ShapeError
from ..runtime.device_tensor import DeviceTensor
from ..runtime.messages import is_int, shown, type_name

Shape = Tuple[int, ...]

FLOAT32 = np.dtype(np.float32)


class Limit(NamedTuple):
    """The largest value an argument may take, and how a message says it."""

    value: int
    text: str


#: Ints become ONNX int64 attributes and constants.
INT64 = Limit(2**63 - 1, "2**63 - 1 (an int64)")
# The emulator compiler's limits (the only device the ops compile for; tests/python/api/test_ops_hostile.py
# checks these are accel.compiler's importer.MAX_GEOMETRY and accm.MAX_ELEMENTS).
#: Kernel sizes, strides, paddings and dilations.
GEOMETRY = Limit(1 << 20, "2**20 (the largest window geometry the device compiles)")
#: The elements of a tensor the ops make.
ELEMENTS = Limit((1 << 31) - 1, "2**31 - 1 elements (the most a tensor of the device's ops may hold)")
FLOAT32_MAX = float(np.finfo(np.float32).max)


def as_int(op: str, name: str, x: object, minimum: Optional[int] = None,
           maximum: Optional[Limit] = INT64) -> int:
    """An int from ``minimum`` to ``maximum`` (None: unbounded, for a caller that checks its own range)."""
    if not is_int(x):
        raise TypeError(f"{op}: {name} must be an int, not {type_name(x)}")
    v = operator.index(x)  # type: ignore[arg-type]
    if minimum is not None and v < minimum:
        raise InvalidArgumentError(f"{op}: {name} must be >= {minimum}, got {shown(v)}")
    if maximum is not None and v > maximum.value:
        raise InvalidArgumentError(f"{op}: {name} must be at most {maximum.text}, got {shown(v)}")
    return v


def as_float(op: str, name: str, x: object, finite: bool = False) -> float:
    """A number as the float32 it becomes (an ONNX float attribute or constant): past float32's range is an
    error, not an inf made on the way; inf and NaN given as such pass unless ``finite`` (a size is
    computed from it)."""
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: {name} must be a number, not {type_name(x)}")
    given_finite = is_int(x) or bool(np.isfinite(x))
    with np.errstate(over="ignore"):
        try:
            v = float(x)
        except OverflowError:  # an int past float64
            v = math.inf
        in_range = not given_finite or bool(np.isfinite(np.float32(v)))
    if not in_range:
        raise InvalidArgumentError(f"{op}: {name}={shown(x)} is past the float32 range (magnitude at most "
                                   f"{FLOAT32_MAX:.8g})")
    if finite and not given_finite:
        raise InvalidArgumentError(f"{op}: {name} must be finite, got {v}")
    return v


def as_pair(op: str, name: str, x: object, minimum: int, maximum: Limit = INT64) -> Tuple[int, int]:
    """An int or a sequence of two ints (torch's ``_pair``), each from ``minimum`` to ``maximum``."""
    if is_int(x):
        v = as_int(op, name, x, minimum, maximum)
        return v, v
    if isinstance(x, (tuple, list)) and len(x) == 2 and all(is_int(v) for v in x):
        a, b = (as_int(op, name, v, minimum, maximum) for v in x)
        return a, b
    raise TypeError(f"{op}: {name} must be an int or a pair of ints, not {shown(x)}")


def as_ints(op: str, name: str, x: object) -> Shape:
    """A sequence of ints (or one int), each an int64."""
    if is_int(x):
        values: Sequence[Any] = (x,)
    elif isinstance(x, (tuple, list)) and all(is_int(v) for v in x):
        values = x
    else:
        raise TypeError(f"{op}: {name} must be an int or a sequence of ints, not {shown(x)}")
    return tuple(as_int(op, name, v, -INT64.value - 1) for v in values)


def axis(op: str, name: str, x: object, ndim: int, shape: Shape) -> int:
    """A dim in ``[-ndim, ndim)`` as torch takes it, made non-negative."""
    d = as_int(op, name, x, maximum=None)
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise InvalidArgumentError(f"{op}: {name}={shown(d)} is out of range for input of shape {shape} "
                                   f"(expected a dim from {-max(ndim, 1)} to {max(ndim, 1) - 1})")
    return d % max(ndim, 1)


def dtype_error(op: str, name: str, dtype: Any) -> DTypeError:
    return DTypeError(f"{op}: {name} has dtype {np.dtype(dtype)}; device ops take float32 tensors only "
                      f"(convert with .astype(numpy.float32))")


def ndim_error(op: str, name: str, want: str, shape: Shape) -> ShapeError:
    return ShapeError(f"{op}: {name} must be {want}; {name} has shape {shape}")


def weight(op: str, name: str, x: object, shape: Optional[Shape] = None) -> np.ndarray:
    """A weight or bias: a float32 NumPy array (a DeviceTensor is read through its NumPy view), of
    ``shape`` when given. It becomes a constant of the op's model."""
    if isinstance(x, DeviceTensor):
        x = np.asarray(x)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{op}: {name} must be a numpy.ndarray of float32, not {type_name(x)}")
    if x.dtype != FLOAT32:
        raise dtype_error(op, name, x.dtype)
    if shape is not None and x.shape != shape:
        raise ShapeError(f"{op}: {name} must have shape {shape}; {name} has shape {x.shape}")
    return x


def sized(op: str, shape: Shape, cause: str) -> Shape:
    """``shape``, a result's, if the device can hold it; ``cause`` says what made it (the arguments)."""
    count = math.prod(shape)
    if count > ELEMENTS.value:
        raise InvalidArgumentError(f"{op}: {cause} makes a result of shape {shape} ({count} elements); at most "
                                   f"{ELEMENTS.text}")
    return shape


def broadcast(op: str, names: Sequence[str], shapes: Sequence[Shape]) -> Shape:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        given = " and ".join(f"{n} of shape {s}" for n, s in zip(names, shapes))
        raise ShapeError(f"{op}: {given} do not broadcast together") from None
