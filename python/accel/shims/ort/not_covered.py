"""onnxruntime names the shim does not cover but scripts import at their top (``from onnxruntime import OrtValue``):
importing one works, so that a script that never uses it runs; using it raises NotImplemented naming the docs."""
from __future__ import annotations

from typing import Any, Dict, NoReturn

from . import errors

__all__ = ["NAMES", "DOCS", "stub"]

DOCS = "is not covered by accel's onnxruntime shim (docs/shims/onnxruntime.md)"
NAMES = ("OrtValue", "IOBinding", "SessionIOBinding", "SparseTensor", "ModelCompiler", "OrtDevice", "OrtMemoryInfo",
         "OrtArenaCfg", "AdapterFormat", "LoraAdapter", "OrtEpDevice", "OrtHardwareDevice")
_made: Dict[str, type] = {}


class _NotCovered(type):
    """The class of a stub: every class attribute (``OrtValue.ortvalue_from_numpy``) refuses."""

    def __getattr__(cls, attr: str) -> NoReturn:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise errors.NotImplemented(f"onnxruntime.{cls.__name__}.{attr} {DOCS}")


def stub(name: str) -> type:
    """The stand-in class for onnxruntime's ``name`` (one of NAMES): making one refuses."""
    if name not in _made:
        def refuse(self: Any, *args: Any, **kwargs: Any) -> None:
            raise errors.NotImplemented(f"onnxruntime.{name} {DOCS}")

        _made[name] = _NotCovered(name, (), {"__init__": refuse, "__doc__": f"onnxruntime.{name}: {DOCS}."})
    return _made[name]
