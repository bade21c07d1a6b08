"""onnxruntime's public Python API over accel (``accel shim onnxruntime -- python app.py`` imports this module
as ``onnxruntime``): InferenceSession (run, run_async, get_inputs/get_outputs/get_modelmeta, providers),
SessionOptions, RunOptions, the enums, NodeArg, ModelMetadata, get_available_providers, get_device and the
exception classes of ``onnxruntime.capi.onnxruntime_pybind11_state``. Every session runs on the process's accel
device (the emulator unless the launcher's --device says otherwise). Written from onnxruntime's public
documentation and the behaviour of its Python package, never importing it. docs/shims/onnxruntime.md lists what is
covered and where it differs.

onnxruntime's execution-provider plugin ABI would be the native way in; no package reachable here ships its C
headers, so the Python-level session is the way now (the EP is future work)."""
from __future__ import annotations

from typing import List

from . import errors, not_covered
from .errors import (EPFail, EngineError, Fail, InvalidArgument, InvalidGraph, InvalidProtobuf, ModelLoaded,
                     NoModel, NoSuchFile, NotFound, NotImplemented, RuntimeException)
from .graph import ModelMetadata, NodeArg
from .inference import InferenceSession, Session
from .options import ExecutionMode, ExecutionOrder, GraphOptimizationLevel, RunOptions, SessionOptions
from .providers import ALL_PROVIDERS, available

__all__ = ["__version__", "InferenceSession", "Session", "SessionOptions", "RunOptions", "NodeArg", "ModelMetadata",
           "GraphOptimizationLevel", "ExecutionMode", "ExecutionOrder", "get_available_providers", "get_all_providers",
           "get_device", "get_version_string", "get_build_info", "set_default_logger_severity",
           "set_default_logger_verbosity", "set_seed", "disable_telemetry_events", "enable_telemetry_events",
           "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException", "InvalidProtobuf",
           "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail", "NotFound", "SUBMODULES",
           "register_execution_provider_library"]

#: The onnxruntime API this module follows (its 1.20 Python API, the subset docs/shims/onnxruntime.md lists); the
#: local part says it is accel's, for a script that prints it.
__version__ = "1.20.0+accel"
version = __version__
package_name = "onnxruntime"

#: The submodules scripts import by onnxruntime's names (``onnxruntime.capi.onnxruntime_pybind11_state``): the
#: importable stub registers each as ``onnxruntime.<name>``.
SUBMODULES = ("capi", "capi.onnxruntime_pybind11_state", "capi._pybind_state")


def get_available_providers() -> List[str]:
    """The providers a session may name here: the CPU's, after the accelerator's where accel's device is one."""
    return available()


def get_all_providers() -> List[str]:
    return list(ALL_PROVIDERS)


def get_device() -> str:
    """onnxruntime's build's device: "CPU" (the accel device a session runs on is said on stderr)."""
    return "CPU"


def get_version_string() -> str:
    return __version__


def get_build_info() -> str:
    return f"accel's onnxruntime shim, onnxruntime API {__version__}"


def set_default_logger_severity(severity: int) -> None:
    """Accepted; the shim logs nothing but its notes on stderr."""


def set_default_logger_verbosity(verbosity: int) -> None:
    """Accepted; the shim logs nothing but its notes on stderr."""


def set_seed(seed: int) -> None:
    """Accepted: accel's runs have no randomness to seed."""


def disable_telemetry_events() -> None:
    """Accepted: there is no telemetry."""


def enable_telemetry_events() -> None:
    """Accepted: there is no telemetry."""


def register_execution_provider_library(name: str, path: str) -> None:
    raise errors.NotImplemented(f"onnxruntime.register_execution_provider_library {not_covered.DOCS}: sessions "
                                "run on accel's device")


def __getattr__(name: str) -> type:
    """onnxruntime's classes the shim does not cover, as stubs that refuse when used (not_covered.py)."""
    if name in not_covered.NAMES:
        return not_covered.stub(name)
    raise AttributeError(f"module 'onnxruntime' has no attribute '{name}' (accel's onnxruntime shim covers the API "
                         "docs/shims/onnxruntime.md lists)")
