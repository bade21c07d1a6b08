"""An onnxruntime session's feed, checked as onnxruntime checks it and with its messages: the inputs missing
(ValueError, as its Python layer says), then each value's dtype, rank and dims (InvalidArgument); and the dims
the session options' free dimension overrides fix."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from . import errors, graph
from .options import SessionOptions

__all__ = ["resolved", "check_missing", "checked"]


def resolved(dims: Optional[List[graph.Dim]], denotations: Sequence[str],
             options: SessionOptions) -> Optional[List[Optional[int]]]:
    """An input's dims with the free dimension overrides (by name, then by denotation) applied; None for a dim
    left symbolic or unknown; None for an input the model gives no shape (any rank)."""
    if dims is None:
        return None
    by_name: Dict[str, int] = options.free_dimensions_by_name
    by_denotation: Dict[str, int] = options.free_dimensions_by_denotation
    out: List[Optional[int]] = []
    for i, d in enumerate(dims):
        if isinstance(d, int) and d > 0:
            out.append(d)
        elif isinstance(d, str) and d in by_name:
            out.append(by_name[d])
        elif i < len(denotations) and denotations[i] in by_denotation:
            out.append(by_denotation[denotations[i]])
        else:
            out.append(None)
    return out


def check_missing(inputs: Sequence[graph.NodeArg], input_feed: Any) -> None:
    """Raises ValueError naming the required inputs the feed lacks (TypeError for a feed that is not a dict)."""
    if not isinstance(input_feed, Mapping):
        raise TypeError(f"input_feed must be a dict {{input name: array}}, not {type(input_feed).__name__}")
    given = list(input_feed.keys())
    missing = [a.name for a in inputs if a.name not in input_feed and not a.type.startswith("optional")]
    if missing:
        raise ValueError(f"Required inputs ({missing}) are missing from input feed ({given}).")


def checked(arg: graph.NodeArg, value: Any, want: Optional[np.dtype],
            dims: Optional[List[Optional[int]]]) -> np.ndarray:
    """``value`` as the array input ``arg`` takes: a list or scalar converted to its dtype ``want`` (as onnxruntime
    does), an array of another dtype, rank or dims (``dims``: None where any size goes) refused with onnxruntime's
    message."""
    array: np.ndarray = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=want)
    if want is not None and array.dtype != want:
        raise errors.InvalidArgument(f"Unexpected input data type. Actual: ({graph.dtype_type_name(array.dtype)}) "
                                     f", expected: ({arg.type})")
    if dims is None:
        return array
    if array.ndim != len(dims):
        raise errors.InvalidArgument(f"Invalid rank for input: {arg.name} Got: {array.ndim} Expected: "
                                     f"{len(dims)} Please fix either the inputs/outputs or the model.")
    bad = [(i, g, d) for i, (g, d) in enumerate(zip(array.shape, dims)) if d is not None and g != d]
    if bad:
        raise errors.InvalidArgument(f"Got invalid dimensions for input: {arg.name} for the following indices\n"
                                     + "".join(f" index: {i} Got: {g} Expected: {d}\n" for i, g, d in bad)
                                     + " Please fix either the inputs/outputs or the model.")
    return array
