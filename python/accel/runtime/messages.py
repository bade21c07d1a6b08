"""How an error message shows the value it refuses: its type's name, and a ``repr`` that neither floods the
message nor raises (Model.run's checks and the ops' argument checks share these)."""
from __future__ import annotations

import operator

import numpy as np

__all__ = ["is_int", "shown", "type_name"]


def type_name(x: object) -> str:
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def shown(x: object, width: int = 60) -> str:
    """``repr(x)`` for a message, at most about ``width`` characters: a huge int by its size (the repr of
    one past 4300 digits raises ValueError), a repr that fails by the type's name."""
    if is_int(x):
        v = operator.index(x)  # type: ignore[arg-type]
        if abs(v).bit_length() > 64:
            return f"{'-' if v < 0 else ''}an int of {abs(v).bit_length()} bits"
    try:
        r = repr(x)
    except Exception:  # noqa: BLE001 - a huge int inside a list, a hostile __repr__: the message goes on
        return f"a {type_name(x)}"
    return r if len(r) <= width else f"{r[:width - 3]}..."


def is_int(x: object) -> bool:
    return not isinstance(x, bool) and isinstance(x, (int, np.integer))
