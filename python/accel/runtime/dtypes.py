"""dtype, layout and quantization tables: libaccel's codes (``accel.h``) and their Python forms.

Element types are NumPy dtypes in native byte order; layouts are the strings ``"NCHW"`` and ``"NHWC"``
(or ``None``); quantization schemes are ``"per_tensor"``, ``"per_axis"`` and ``"shift"``.
"""
from __future__ import annotations

import operator
from typing import Any, Dict, FrozenSet, Optional, Tuple

import numpy as np

from ..errors import DTypeError, InvalidArgumentError, ShapeError

__all__ = [
    "SUPPORTED_DTYPES", "LAYOUTS", "MAX_DIMS", "dtype_from_code", "dtype_to_code", "has_buffer", "normalize_dtype",
    "layout_from_code", "layout_to_code", "normalize_layout", "normalize_shape", "quant_type_from_code",
]

#: Most dimensions a tensor may have (``ACCEL_MAX_DIMS``).
MAX_DIMS = 8

#: accel_dtype code -> NumPy dtype (native byte order).
DTYPE_BY_CODE: Dict[int, np.dtype] = {
    1: np.dtype(np.float32),
    2: np.dtype(np.float16),
    3: np.dtype(np.int8),
    4: np.dtype(np.uint8),
    5: np.dtype(np.int16),
    6: np.dtype(np.int32),
    7: np.dtype(np.int64),
    8: np.dtype(np.uint16),
    9: np.dtype(np.uint32),
    10: np.dtype(np.uint64),
    11: np.dtype(np.bool_),
}
CODE_BY_DTYPE: Dict[np.dtype, int] = {v: k for k, v in DTYPE_BY_CODE.items()}

#: The element types accel supports, as NumPy dtypes.
SUPPORTED_DTYPES: FrozenSet[np.dtype] = frozenset(DTYPE_BY_CODE.values())
_SUPPORTED_NAMES = ", ".join(str(d) for d in DTYPE_BY_CODE.values())

#: accel_layout code -> layout string (``None`` for ACCEL_LAYOUT_NONE).
LAYOUT_BY_CODE: Dict[int, Optional[str]] = {0: None, 1: "NCHW", 2: "NHWC"}
CODE_BY_LAYOUT: Dict[Optional[str], int] = {v: k for k, v in LAYOUT_BY_CODE.items()}
#: The image layouts a tensor may declare.
LAYOUTS: Tuple[str, ...] = ("NCHW", "NHWC")

#: accel_quant_type code -> scheme name (``None`` for ACCEL_QUANT_NONE).
QUANT_TYPE_BY_CODE: Dict[int, Optional[str]] = {0: None, 1: "per_tensor", 2: "per_axis", 3: "shift"}


def dtype_from_code(code: int) -> np.dtype:
    """The NumPy dtype of an ``accel_dtype`` code; ``DTypeError`` for an unknown code."""
    try:
        return DTYPE_BY_CODE[code]
    except KeyError:
        raise DTypeError(f"unknown accel_dtype code {code}") from None


def dtype_to_code(dtype: Any) -> int:
    """The ``accel_dtype`` code of a dtype (anything ``numpy.dtype`` accepts); ``DTypeError`` if
    accel does not support it."""
    return CODE_BY_DTYPE[normalize_dtype(dtype)]


def normalize_dtype(dtype: Any) -> np.dtype:
    """``numpy.dtype(dtype)``, checked to be one accel supports (native byte order).

    Raises ``DTypeError`` (status ``ACCEL_ERR_DTYPE``, a ``TypeError``) naming the dtype and the
    supported ones otherwise.
    """
    if type(dtype) is np.dtype and dtype in SUPPORTED_DTYPES:
        return dtype
    try:
        dt: np.dtype = np.dtype(dtype)
    except Exception as e:  # numpy raises TypeError (and sometimes others) for what it cannot parse
        raise DTypeError(f"not a dtype: {dtype!r} ({e}); supported: {_SUPPORTED_NAMES}") from None
    if dt not in SUPPORTED_DTYPES:
        raise DTypeError(f"unsupported dtype {describe_dtype(dt)}; supported: {_SUPPORTED_NAMES}")
    return dt


def describe_dtype(dt: np.dtype) -> str:
    """A dtype's name for messages, with its byte order when that is not the native one."""
    if not dt.isnative:
        return f"{dt.newbyteorder('=')} in non-native byte order ({dt.str!r})"
    return str(dt)


def layout_from_code(code: int) -> Optional[str]:
    """The layout string of an ``accel_layout`` code (``None`` for no layout or an unknown code)."""
    return LAYOUT_BY_CODE.get(code)


def layout_to_code(layout: Optional[str]) -> int:
    """The ``accel_layout`` code of ``None``, ``"NCHW"`` or ``"NHWC"``."""
    return CODE_BY_LAYOUT[normalize_layout(layout, 4)]


def normalize_layout(layout: Optional[str], ndim: int) -> Optional[str]:
    """Checks a layout for a tensor of ``ndim`` dimensions: ``None``, or ``"NCHW"``/``"NHWC"`` (any case)
    for a 4-D tensor. Raises ``TypeError`` for a non-string, ``InvalidArgumentError`` (a ``ValueError``)
    for an unknown layout or a layout on a tensor that is not 4-D."""
    if layout is None:
        return None
    if not isinstance(layout, str):
        raise TypeError(f"layout must be None, 'NCHW' or 'NHWC', not {type(layout).__name__}")
    upper = layout.upper()
    if upper not in LAYOUTS:
        raise InvalidArgumentError(f"unknown layout {layout!r}; valid: None, 'NCHW', 'NHWC'")
    if ndim != 4:
        raise InvalidArgumentError(f"layout {upper!r} needs a 4-D shape, got {ndim}-D")
    return upper


def normalize_shape(shape: Any) -> Tuple[int, ...]:
    """A shape as a tuple of ints: an int, or a sequence of ints (NumPy integers too).

    Raises ``TypeError`` for anything else (including bools and floats), and ``ShapeError`` (status
    ``ACCEL_ERR_SHAPE``, a ``ValueError``) for a negative dimension or more than 8 dimensions."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)):
        dims: Tuple[int, ...] = (operator.index(shape),)
    else:
        if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
            raise TypeError(f"shape must be an int or a sequence of ints, not {type(shape).__name__}")
        out = []
        for d in shape:
            if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
                raise TypeError(f"shape {tuple(shape)!r}: dimensions must be ints, "
                                f"not {type(d).__name__}")
            out.append(operator.index(d))
        dims = tuple(out)
    if len(dims) > MAX_DIMS:
        raise ShapeError(f"shape {dims}: at most {MAX_DIMS} dimensions, got {len(dims)}")
    for d in dims:
        if d < 0:
            raise ShapeError(f"shape {dims}: dimensions must be >= 0")
    return dims


def quant_type_from_code(code: int) -> Optional[str]:
    """The scheme name of an ``accel_quant_type`` code (``None`` for no quantization)."""
    return QUANT_TYPE_BY_CODE.get(code)


def has_buffer(obj: object) -> bool:
    """True if ``obj`` exports the buffer protocol (bytes, memoryview, mmap, a NumPy array, ...)."""
    try:
        memoryview(obj)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True
