"""``onnxruntime.capi.onnxruntime_pybind11_state``: the exception classes scripts catch and the classes onnxruntime
defines in its compiled module, the same objects as ``onnxruntime``'s (absolute imports, so that a second copy of
this module under another name still holds them)."""
from accel.shims.ort import (ExecutionMode, ExecutionOrder, GraphOptimizationLevel, ModelMetadata, NodeArg,
                             RunOptions, SessionOptions, get_all_providers, get_available_providers, get_device,
                             get_version_string, set_default_logger_severity, set_default_logger_verbosity,
                             set_seed)
from accel.shims.ort.errors import (DeviceReset, EngineError, EPFail, Fail, InvalidArgument, InvalidGraph,
                                    InvalidProtobuf, ModelLoadCanceled, ModelLoaded, ModelRequiresCompilation,
                                    NoModel, NoSuchFile, NotFound, NotImplemented, RuntimeException)

__all__ = ["DeviceReset", "EPFail", "EngineError", "ExecutionMode", "ExecutionOrder", "Fail", "GraphOptimizationLevel",
           "InvalidArgument", "InvalidGraph", "InvalidProtobuf", "ModelLoadCanceled", "ModelLoaded", "ModelMetadata",
           "ModelRequiresCompilation", "NoModel", "NoSuchFile", "NodeArg", "NotFound", "NotImplemented", "RunOptions",
           "RuntimeException", "SessionOptions", "get_all_providers", "get_available_providers", "get_device",
           "get_version_string", "set_default_logger_severity", "set_default_logger_verbosity", "set_seed"]
