"""The value types of ``hbm_runtime`` (RDK S100): ``hbDNNDataType``, ``hbDNNQuantiType``, ``QuantParams`` and
``SchedParam``, as D-Robotics documents them (rdk_s_doc, 04_Algorithm_Application/02_Python_API.md), made from
accel's TensorInfo."""
from __future__ import annotations

import enum
from typing import Any, Dict, List

import numpy as np

__all__ = ["QuantParams", "SchedParam", "data_type", "hbDNNDataType", "hbDNNQuantiType", "quant_params"]


class _Enum(enum.IntEnum):
    """An int enum printed as pybind11 prints the original's (``hbDNNDataType.F32``), on every Python version
    (IntEnum's str is the bare number from 3.11 on)."""

    def __str__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class hbDNNDataType(_Enum):
    """Tensor element types, numbered as S100's hb_dnn.h (``<hbDNNDataType.U8: 3>``; ``.name`` is "U8")."""

    S4 = 0
    U4 = 1
    S8 = 2
    U8 = 3
    F16 = 4
    S16 = 5
    U16 = 6
    F32 = 7
    S32 = 8
    U32 = 9
    F64 = 10
    S64 = 11
    U64 = 12
    BOOL8 = 13
    MAX = 14


class hbDNNQuantiType(_Enum):
    """How a tensor is quantized: NONE, or SCALE (scale and zero point, per tensor or per axis)."""

    NONE = 0
    SCALE = 1


_DATA_TYPES: Dict[str, hbDNNDataType] = {
    "int8": hbDNNDataType.S8, "uint8": hbDNNDataType.U8, "float16": hbDNNDataType.F16,
    "int16": hbDNNDataType.S16, "uint16": hbDNNDataType.U16, "float32": hbDNNDataType.F32,
    "int32": hbDNNDataType.S32, "uint32": hbDNNDataType.U32, "float64": hbDNNDataType.F64,
    "int64": hbDNNDataType.S64, "uint64": hbDNNDataType.U64, "bool": hbDNNDataType.BOOL8,
}


def data_type(dtype: Any) -> hbDNNDataType:
    """The hbDNNDataType of a NumPy dtype (accel's tensors have no 4-bit type)."""
    return _DATA_TYPES[np.dtype(dtype).name]


class QuantParams:
    """A tensor's quantization: ``scale`` (float32 array), ``zero_point`` (int32 array), ``quant_type``
    (hbDNNQuantiType) and ``axis`` (the per-axis quantization's axis; -1 per tensor or not quantized)."""

    __slots__ = ("scale", "zero_point", "quant_type", "axis")

    def __init__(self, scale: np.ndarray, zero_point: np.ndarray, quant_type: hbDNNQuantiType, axis: int) -> None:
        self.scale = scale
        self.zero_point = zero_point
        self.quant_type = quant_type
        self.axis = axis

    def __repr__(self) -> str:
        return (f"QuantParams(quant_type={self.quant_type.name}, axis={self.axis}, scale={self.scale.tolist()}, "
                f"zero_point={self.zero_point.tolist()})")


def quant_params(quant: Any) -> QuantParams:
    """QuantParams of accel's Quantization (None: not quantized). S100 has no power-of-two "shift" type: a shift
    is given as the scale it stands for, 2**-shift, zero point 0."""
    if quant is None:
        return QuantParams(np.zeros(0, np.float32), np.zeros(0, np.int32), hbDNNQuantiType.NONE, -1)
    axis = -1 if quant.axis is None else int(quant.axis)
    if quant.type == "shift":
        shifts = np.array(quant.shifts or (), np.float64)
        return QuantParams(np.exp2(-shifts).astype(np.float32), np.zeros(len(shifts), np.int32),
                           hbDNNQuantiType.SCALE, axis)
    scales = np.array(quant.scales, np.float32)
    zeros = np.array(quant.zero_points if quant.zero_points is not None else (0,) * len(scales), np.int32)
    return QuantParams(scales, zeros, hbDNNQuantiType.SCALE, axis)


class SchedParam:
    """A model's default scheduling (``HB_HBMRuntime.sched_params``): ``priority``, ``customId``, ``bpu_cores``
    ([-1]: any core, the scheduler's choice) and ``deviceId``."""

    __slots__ = ("priority", "customId", "bpu_cores", "deviceId")

    def __init__(self, priority: int = 0, customId: int = 0, bpu_cores: Any = None, deviceId: int = 0) -> None:
        self.priority = priority
        self.customId = customId
        self.bpu_cores: List[int] = list(bpu_cores) if bpu_cores is not None else [-1]
        self.deviceId = deviceId

    def copy(self) -> SchedParam:
        return SchedParam(self.priority, self.customId, self.bpu_cores, self.deviceId)

    def __repr__(self) -> str:
        return (f"SchedParam(priority={self.priority}, customId={self.customId}, bpu_cores={self.bpu_cores}, "
                f"deviceId={self.deviceId})")
