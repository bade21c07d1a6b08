"""Front-end selection: which core module (CORE_API.md) the package runs on.

``ACCEL_FRONTEND`` chooses at import: ``pybind`` (the default; ``accel._pybind``) or ``cffi``
(``accel._cffi_core``). When it is unset and the pybind11 core cannot load, the cffi core is used and
``features["fallback_reason"]`` says why. An explicit choice that cannot load, or an unknown value, is
an ImportError.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any, Dict, Optional, Tuple

from . import _blas, _callbacks  # noqa: F401  _callbacks first: its exit hook runs after the core's drain

__all__ = ["FRONTENDS", "select"]

#: Front-end name -> core module.
FRONTENDS: Dict[str, str] = {"pybind": "accel._pybind", "cffi": "accel._cffi_core"}

# What each core offers beyond the common contract (a core may add or override entries through a
# module-level FEATURES dict).
_FEATURES: Dict[str, Dict[str, Any]] = {
    "pybind": {"buffer_protocol": True, "array_interface": False, "dlpack": True, "fast_run": True},
    "cffi": {"buffer_protocol": False, "array_interface": True, "dlpack": True, "fast_run": True},
}


def _load(name: str) -> ModuleType:
    return importlib.import_module(FRONTENDS[name])


def _describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _features(name: str, core: ModuleType) -> Dict[str, Any]:
    features = dict(_FEATURES[name])
    extra = getattr(core, "FEATURES", None)
    if isinstance(extra, dict):
        features.update(extra)
    return features


def select(env: Optional[str] = None) -> Tuple[str, ModuleType, Dict[str, Any]]:
    """Imports the core chosen by ``env`` (default: the ``ACCEL_FRONTEND`` variable).

    Returns ``(frontend name, core module, features dict)``. Raises ImportError naming the valid values
    for an unknown choice, and naming the module and the reason when the chosen core cannot load.
    """
    if env is None:
        env = os.environ.get("ACCEL_FRONTEND", "")
    choice = env.strip().lower()
    if choice and choice not in FRONTENDS:
        valid = ", ".join(FRONTENDS)
        raise ImportError(f"ACCEL_FRONTEND={env!r} is not a front-end; valid values: {valid} "
                          f"(unset means pybind, falling back to cffi)")
    if choice:
        try:
            core = _load(choice)
        except ImportError as e:
            raise ImportError(f"ACCEL_FRONTEND={choice}: the {choice} core ({FRONTENDS[choice]}) "
                              f"cannot be imported: {_describe(e)}") from e
        return choice, core, _features(choice, core)

    try:
        core = _load("pybind")
        return "pybind", core, _features("pybind", core)
    except ImportError as e:
        pybind_error = e
    try:
        core = _load("cffi")
    except ImportError as e:
        raise ImportError(f"no accel front-end can be imported: pybind ({FRONTENDS['pybind']}): "
                          f"{_describe(pybind_error)}; cffi ({FRONTENDS['cffi']}): {_describe(e)}") from e
    features = _features("cffi", core)
    features["fallback_reason"] = f"pybind unavailable: {_describe(pybind_error)}"
    return "cffi", core, features


_blas.preload()  # before any core opens a device (and so loads the emulator driver)

#: The selected front-end's name, its core module and its features (made once, at import).
frontend, core, features = select()
