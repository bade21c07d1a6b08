"""Argument checks shared by the op rules: ints and int pairs, dims, weights, and the wording of errors.

Every message starts with the op's name and names the argument, so that a wrong call inside a long
fusion scope says which call it was.
"""
from __future__ import annotations

import operator
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from .._frontend import core
from ..errors import DTypeError, InvalidArgumentError, ShapeError

Shape = Tuple[int, ...]

FLOAT32 = np.dtype(np.float32)


def type_name(x: object) -> str:
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def is_int(x: object) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, np.integer))


def as_int(op: str, name: str, x: object, minimum: Optional[int] = None) -> int:
    if not is_int(x):
        raise TypeError(f"{op}: {name} must be an int, not {type_name(x)}")
    v = operator.index(x)  # type: ignore[arg-type]
    if minimum is not None and v < minimum:
        raise InvalidArgumentError(f"{op}: {name} must be >= {minimum}, got {v}")
    return v


def as_float(op: str, name: str, x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise TypeError(f"{op}: {name} must be a number, not {type_name(x)}")
    return float(x)


def as_pair(op: str, name: str, x: object, minimum: int) -> Tuple[int, int]:
    """An int or a sequence of two ints (torch's ``_pair``), each >= ``minimum``."""
    if is_int(x):
        v = as_int(op, name, x, minimum)
        return v, v
    if isinstance(x, (tuple, list)) and len(x) == 2 and all(is_int(v) for v in x):
        a, b = (as_int(op, name, v, minimum) for v in x)
        return a, b
    raise TypeError(f"{op}: {name} must be an int or a pair of ints, not {x!r}")


def as_ints(op: str, name: str, x: object) -> Shape:
    """A sequence of ints (or one int)."""
    if is_int(x):
        return (operator.index(x),)  # type: ignore[arg-type]
    if isinstance(x, (tuple, list)) and all(is_int(v) for v in x):
        return tuple(operator.index(v) for v in x)
    raise TypeError(f"{op}: {name} must be an int or a sequence of ints, not {x!r}")


def axis(op: str, name: str, x: object, ndim: int, shape: Shape) -> int:
    """A dim in ``[-ndim, ndim)`` as torch takes it, made non-negative."""
    d = as_int(op, name, x)
    if not -max(ndim, 1) <= d < max(ndim, 1):
        raise InvalidArgumentError(f"{op}: {name}={d} is out of range for input of shape {shape} "
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
    if isinstance(x, core.DeviceTensor):
        x = np.asarray(x)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{op}: {name} must be a numpy.ndarray of float32, not {type_name(x)}")
    if x.dtype != FLOAT32:
        raise dtype_error(op, name, x.dtype)
    if shape is not None and x.shape != shape:
        raise ShapeError(f"{op}: {name} must have shape {shape}; {name} has shape {x.shape}")
    return x


def broadcast(op: str, names: Sequence[str], shapes: Sequence[Shape]) -> Shape:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        given = " and ".join(f"{n} of shape {s}" for n, s in zip(names, shapes))
        raise ShapeError(f"{op}: {given} do not broadcast together") from None
