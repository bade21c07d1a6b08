"""The methods of Vitis AI's Python classes that the shim leaves out (those that build or edit graphs): calling one
raises UnsupportedError saying so, rather than a bare AttributeError that reads like a typo in the script."""
from __future__ import annotations

from typing import Any, FrozenSet

from ...errors import UnsupportedError

__all__ = ["uncovered"]


def uncovered(cls_name: str, names: FrozenSet[str]) -> Any:
    """A ``__getattr__`` for class ``cls_name``: UnsupportedError for `names`, AttributeError for anything else."""

    def __getattr__(self: Any, name: str) -> Any:
        if name in names:
            raise UnsupportedError(f"{cls_name}.{name} is not covered by accel's Vitis AI shim, which reads compiled "
                                   f"graphs and runs their DPU subgraphs (docs/shims/vitis.md lists what it covers)")
        raise AttributeError(f"{cls_name!r} object has no attribute {name!r}")

    return __getattr__
