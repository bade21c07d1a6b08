"""accel: one API for edge AI accelerators, with a software emulator of such a device.

    import numpy as np
    import accel

    with accel.open("emu") as dev:                 # the emulator; "bpu:0", "vart:0" on boards
        model = dev.load("resnet18.onnx")           # ONNX compiles on the fly on the emulator
        x = np.zeros(model.inputs[0].shape, model.inputs[0].dtype)
        (logits,) = model.run(x)                    # NumPy arrays viewing device memory
        future = model.run_async(x)                 # a concurrent.futures.Future (awaitable)

The package runs on one of two interchangeable front-ends (cores) over libaccel's C ABI: pybind11 (the
default) or cffi, chosen at import by ``ACCEL_FRONTEND=pybind|cffi``; :data:`frontend` says which one is
in use and :data:`frontend_features` how it differs. ``accel.compiler`` is the emulator's ONNX compiler.
"""
from __future__ import annotations

__version__ = "0.1.0"

from typing import Dict, List

from .runtime import _frontend  # first: the core, and its exit hook after the callbacks' (runtime/_callbacks.py)
from .runtime._frontend import core as _core
from . import compile_cache, errors, profiling
from .runtime import capabilities as _capabilities
from .runtime.capabilities import DeviceCapabilities
from .comparison import compare
from .device import Device, DeviceInfo
from .errors import (AbiMismatchError, AccelError, AlignmentError, BusyError, CancelledError,
                     ClosedError, DeviceError, DTypeError, InternalError, InvalidArgumentError,
                     MemoryCorruptionError, ModelFormatError, NotFoundError, NotReadyError,
                     OutOfMemoryError, ShapeError, TimeoutError, UnsupportedError)
from .futures import Future
from .runtime.device_tensor import DeviceTensor  # over the core's CoreTensor: np.asarray(t) is a view
from .runtime.model import Model
from .ops import PendingTensor
from .profiling import JobRecord, NodeRecord, NodeStat, OpStat, Profile, profile
from .quantization import dequantize, quantize
from .runtime.tensor_info import ImageInfo, Quantization, TensorInfo

#: The front-end in use: ``"pybind"`` or ``"cffi"``.
frontend: str = _frontend.frontend
#: How the front-end in use differs from the other: ``buffer_protocol`` (DeviceTensor exposes the
#: buffer protocol, so ``memoryview(t)`` works), ``array_interface``, ``dlpack``; and
#: ``fallback_reason`` when cffi was chosen because the pybind11 core could not load.
frontend_features: Dict[str, object] = dict(_frontend.features)


def open(uri: str = "emu") -> Device:  # noqa: A001 - accel.open, like io.open
    """Opens a device by URI and returns a :class:`Device` (a context manager).

    ``uri`` is ``"<scheme>[:<options>]"``: ``"emu"`` (the emulator; options ``cores=N`` (jobs side by side,
    default 1), ``threads=N`` (host threads per job, default the CPUs / cores), ``pool=256M``,
    ``max_inflight=N``, ``int8=ort|dpu|bpu`` (the integer arithmetic of quantized models: onnxruntime's,
    the Vitis AI DPU's or the Horizon BPU's), ``debug=0|1``, e.g.
    ``"emu:cores=2,pool=64M"``), ``"bpu:0"``, ``"vart:0"``. Raises NotFoundError for a scheme with no
    driver (see :func:`backends`) and InvalidArgumentError for a bad option.
    """
    return Device(uri)


def backends() -> List[str]:
    """The URI schemes of the usable drivers, in loader order, e.g. ``["emu"]``."""
    return list(_core.backends())


def describe(uri: str) -> DeviceCapabilities:
    """What a device opened with ``uri`` would load and how it computes (:class:`DeviceCapabilities`), as its
    driver says, without opening it; raises as :func:`open` would for an unknown scheme or a bad option."""
    return _capabilities.describe(uri)


def abi_version() -> int:
    """libaccel's ABI version, ``(major << 16) | minor``."""
    return int(_core.abi_version())


def library_version() -> str:
    """libaccel's release version, ``"major.minor.patch"``."""
    return str(_core.version())


__all__ = [
    "__version__", "frontend", "frontend_features", "open", "backends", "abi_version",
    "library_version", "describe", "Device", "DeviceInfo", "DeviceCapabilities", "DeviceTensor", "Model",
    "TensorInfo", "Quantization", "ImageInfo",
    "Future", "PendingTensor", "profile", "Profile", "JobRecord", "NodeRecord", "OpStat", "NodeStat", "errors",
    "compile_cache", "profiling", "quantize", "dequantize", "compare",
    "AccelError", "InvalidArgumentError", "ShapeError", "DTypeError", "AlignmentError",
    "ModelFormatError", "OutOfMemoryError", "BusyError", "TimeoutError", "UnsupportedError",
    "DeviceError", "NotFoundError", "CancelledError", "NotReadyError", "AbiMismatchError",
    "MemoryCorruptionError", "ClosedError", "InternalError",
]
