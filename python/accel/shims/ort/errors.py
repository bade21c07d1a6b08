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


# One class per onnxruntime status code (OrtErrorCode in its C API), as its pybind module has them; DeviceReset,
# a class that module has besides, takes the next number here.


class Fail(OrtError):
    code, status = 1, "FAIL"


class InvalidArgument(OrtError):
    code, status = 2, "INVALID_ARGUMENT"


class NoSuchFile(OrtError):
    code, status = 3, "NO_SUCHFILE"


class NoModel(OrtError):
    code, status = 4, "NO_MODEL"


class EngineError(OrtError):
    code, status = 5, "ENGINE_ERROR"


class RuntimeException(OrtError):
    code, status = 6, "RUNTIME_EXCEPTION"


class InvalidProtobuf(OrtError):
    code, status = 7, "INVALID_PROTOBUF"


class ModelLoaded(OrtError):
    code, status = 8, "MODEL_LOADED"


class NotImplemented(OrtError):  # noqa: A001 (onnxruntime's own name)
    code, status = 9, "NOT_IMPLEMENTED"


class InvalidGraph(OrtError):
    code, status = 10, "INVALID_GRAPH"


class EPFail(OrtError):
    code, status = 11, "EP_FAIL"


class ModelLoadCanceled(OrtError):
    code, status = 12, "MODEL_LOAD_CANCELED"


class ModelRequiresCompilation(OrtError):
    code, status = 13, "MODEL_REQUIRES_COMPILATION"


class NotFound(OrtError):
    code, status = 14, "NOT_FOUND"


class DeviceReset(OrtError):
    code, status = 15, "DEVICE_RESET"


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
