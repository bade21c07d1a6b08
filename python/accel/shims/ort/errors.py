"""onnxruntime's exception classes (``onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument``, ...), as
scripts catch them, and the translation of accel's errors into them.

onnxruntime derives each from Exception only and words its message ``[ONNXRuntimeError] : CODE : NAME : detail``;
so do these, so that ``except InvalidArgument`` and a script matching the message's start work unchanged. The
accel error a translated one stands for is kept as its ``__cause__``."""
from __future__ import annotations

from typing import Dict, Type

__all__ = ["OrtError", "Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
           "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail", "ModelLoadCanceled",
           "ModelRequiresCompilation", "NotFound", "DeviceReset", "EXCEPTIONS", "from_accel"]


class OrtError(Exception):
    """Base of the shim's onnxruntime exceptions (onnxruntime has none: catch the named classes or Exception).
    ``detail`` is the message without the status prefix, as run_async's callback receives it."""

    code = 1
    status = "FAIL"

    def __init__(self, detail: str = "") -> None:
        self.detail = detail
        super().__init__(f"[ONNXRuntimeError] : {self.code} : {self.status} : {detail}")


def _make(name: str, code: int, status: str) -> Type[OrtError]:
    return type(name, (OrtError,), {"code": code, "status": status, "__doc__": f"onnxruntime's {status} ({code})."})


# onnxruntime's status codes (onnxruntime_c_api.h's OrtErrorCode), one class each as its pybind module has them.
Fail = _make("Fail", 1, "FAIL")
InvalidArgument = _make("InvalidArgument", 2, "INVALID_ARGUMENT")
NoSuchFile = _make("NoSuchFile", 3, "NO_SUCHFILE")
NoModel = _make("NoModel", 4, "NO_MODEL")
EngineError = _make("EngineError", 5, "ENGINE_ERROR")
RuntimeException = _make("RuntimeException", 6, "RUNTIME_EXCEPTION")
InvalidProtobuf = _make("InvalidProtobuf", 7, "INVALID_PROTOBUF")
ModelLoaded = _make("ModelLoaded", 8, "MODEL_LOADED")
NotImplemented = _make("NotImplemented", 9, "NOT_IMPLEMENTED")  # noqa: A001 (onnxruntime's own name)
InvalidGraph = _make("InvalidGraph", 10, "INVALID_GRAPH")
EPFail = _make("EPFail", 11, "EP_FAIL")
ModelLoadCanceled = _make("ModelLoadCanceled", 12, "MODEL_LOAD_CANCELED")
ModelRequiresCompilation = _make("ModelRequiresCompilation", 13, "MODEL_REQUIRES_COMPILATION")
NotFound = _make("NotFound", 14, "NOT_FOUND")
DeviceReset = _make("DeviceReset", 15, "DEVICE_RESET")

EXCEPTIONS: Dict[str, Type[OrtError]] = {c.__name__: c for c in (
    Fail, InvalidArgument, NoSuchFile, NoModel, EngineError, RuntimeException, InvalidProtobuf, ModelLoaded,
    NotImplemented, InvalidGraph, EPFail, ModelLoadCanceled, ModelRequiresCompilation, NotFound, DeviceReset)}


def from_accel(error: BaseException, what: str) -> OrtError:
    """The onnxruntime exception for an accel error raised while doing ``what`` ("loading model.onnx", "running"),
    by the nearest onnxruntime status: a missing op or a board that cannot take ONNX is NOT_IMPLEMENTED (onnxruntime's
    "could not find an implementation"), a model the compiler rejects INVALID_GRAPH, a bad argument, dtype or shape
    INVALID_ARGUMENT, anything else FAIL. The caller raises it ``from error``."""
    import accel

    cls: Type[OrtError] = Fail
    if isinstance(error, accel.UnsupportedError):
        cls = NotImplemented
    elif isinstance(error, accel.ModelFormatError):
        cls = InvalidGraph
    elif isinstance(error, (accel.InvalidArgumentError, accel.ShapeError, accel.DTypeError)):
        cls = InvalidArgument
    elif isinstance(error, FileNotFoundError):
        cls = NoSuchFile
    return cls(f"{what} on accel: {type(error).__name__}: {error}")
