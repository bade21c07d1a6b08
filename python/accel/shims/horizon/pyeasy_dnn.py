"""``hobot_dnn.pyeasy_dnn`` (RDK X3/X5) over accel: ``models = dnn.load("model.bin")``, ``models[0].inputs[i]`` /
``outputs[i]`` (``name``, ``properties``), ``models[0].forward(nv12_frame)`` -> outputs with ``buffer`` (NumPy)
and ``properties``. Written from the board's binding (x5-hobot-spdev src/python/dnn_python.cpp, read, not
copied); where that binding would corrupt memory or compute on stale data, accel's errors say what is wrong
instead (docs/shims/horizon.md lists each difference)."""
from __future__ import annotations

import os
import threading
from typing import Any, List, Sequence

import numpy as np

from ...errors import DTypeError, InvalidArgumentError, ShapeError
from .models import Loaded
from .models import load as load_file
from .pyeasy_properties import TensorProperties, properties

__all__ = ["Model", "TensorProperties", "load", "pyDNNTensor"]

#: What the binding's Model.estimate_latency returns: a constant it sets at load, not a measurement.
ESTIMATE_LATENCY = 100


class pyDNNTensor:
    """One input or output: ``name``, ``properties`` (TensorProperties) and ``buffer`` (a NumPy array: an
    output's values from the forward that returned it, an input's last data fed)."""

    __slots__ = ("name", "properties", "_buffer")

    def __init__(self, name: str, props: TensorProperties, buffer: np.ndarray) -> None:
        self.name = name
        self.properties = props
        self._buffer = buffer

    @property
    def buffer(self) -> np.ndarray:
        return self._buffer

    def __repr__(self) -> str:
        return f"pyDNNTensor(name={self.name!r}, properties={self.properties!r})"


def _check_int(what: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"forward: {what} is an int, not {type(value).__name__}")
    if not low <= int(value) <= high:
        raise InvalidArgumentError(f"forward: {what}={int(value)} is outside {low}..{high}")
    return int(value)


def _arrays(arg: Any, count: int) -> List[np.ndarray]:
    """The arrays ``forward`` was given, one per input. The binding takes one array or a list/tuple of them;
    anything else it runs on the previous call's data, fewer arrays leave the rest stale, more fail after the
    first ones were copied: here each is an error before anything runs."""
    if isinstance(arg, np.ndarray):
        arrays = [arg]
    elif isinstance(arg, (list, tuple)):
        arrays = list(arg)
        for i, a in enumerate(arrays):
            if not isinstance(a, np.ndarray):
                raise TypeError(f"forward: input {i} is a {type(a).__name__}, not a NumPy array")
    else:
        raise TypeError(f"forward takes a NumPy array or a list of them (one per input), not "
                        f"{type(arg).__name__}")
    if len(arrays) != count:
        raise InvalidArgumentError(f"forward: the model has {count} input{'s' * (count != 1)}, given "
                                   f"{len(arrays)} array{'s' * (len(arrays) != 1)}: give one per input, in order")
    return arrays


def _frame(index: int, info: Any, props: TensorProperties, array: np.ndarray) -> np.ndarray:
    """A camera frame as accel takes it. The binding copies the array's memory as it lies, whatever its dtype and
    shape: any uint8 array of exactly the frame's bytes (a flat NV12 buffer, (H * 3/2, W) ...) is that frame; a
    3-channel frame the model takes in NCHW is planar in memory and becomes accel's packed (1, H, W, 3)."""
    image = info.image
    what = f"forward: input {index} ({info.name!r}) is a {props.tensor_type} frame of {image.width}x{image.height}"
    if array.dtype != np.uint8:
        raise DTypeError(f"{what}, uint8; this array is {array.dtype} (the board's binding would copy its first "
                         f"{info.size} bytes as pixels): convert it with .astype(np.uint8) if that is meant")
    if array.size != info.size:
        raise ShapeError(f"{what}: {info.size} bytes; this array holds {array.size} (shape {array.shape}): the "
                         f"board's binding would copy past it or leave the rest of the frame stale")
    if props.layout == "NCHW" and info.shape[-1] == 3:
        planar: np.ndarray = np.reshape(array, props.shape)
        return np.transpose(planar, (0, 2, 3, 1))
    # reshape gives a view of a contiguous array (accel copies it into device memory) and a copy of another:
    # the caller's array is never written (the X5 binding subtracts 128 from an RGB frame in place).
    return np.reshape(array, info.shape)


def _featuremap(index: int, info: Any, array: np.ndarray) -> np.ndarray:
    """A featuremap as accel takes it: exactly the input's dtype (the binding copies the array's element count
    in bytes, a quarter of a float32 tensor, and casts nothing) and its element count in any shape (the binding
    reads the memory as laid out; the shim reads it in the array's logical C order)."""
    what = f"forward: input {index} ({info.name!r}) is {info.dtype}{list(info.shape)}"
    if array.dtype != info.dtype:
        raise DTypeError(f"{what}; this array is {array.dtype}: nothing is cast, convert it with "
                         f".astype(np.{np.dtype(info.dtype).name})")
    if array.size != info.size:
        raise ShapeError(f"{what}: {info.size} elements; this array has {array.size} (shape {array.shape})")
    return np.reshape(array, info.shape)


class Model:
    """One model of a loaded file (the file's first, as the binding loads it): ``name``, ``inputs``,
    ``outputs``, ``forward``, ``estimate_latency``."""

    def __init__(self, loaded: Loaded) -> None:
        self._loaded = loaded
        described = {i.name: i for i in loaded.described.inputs} if loaded.described is not None else {}
        self._inputs = list(loaded.model.inputs)
        self._outputs = list(loaded.model.outputs)
        self._described = [described.get(i.name) for i in self._inputs]
        self._lock = threading.Lock()
        # What inputs/outputs give before any forward: zeros (the binding's fresh device buffers).
        self._last_in: List[np.ndarray] = [np.zeros(i.shape, i.dtype) for i in self._inputs]
        self._last_out: List[np.ndarray] = [np.zeros(o.shape, o.dtype) for o in self._outputs]

    @property
    def name(self) -> str:
        return self._loaded.name

    @property
    def estimate_latency(self) -> int:
        return ESTIMATE_LATENCY

    def _in_props(self, i: int) -> TensorProperties:
        return properties(self._inputs[i], self._described[i])

    @property
    def inputs(self) -> List[pyDNNTensor]:
        with self._lock:
            last = list(self._last_in)
        return [pyDNNTensor(info.name, self._in_props(i), last[i]) for i, info in enumerate(self._inputs)]

    @property
    def outputs(self) -> List[pyDNNTensor]:
        """The outputs with the last forward's values (each forward's own list keeps its own values)."""
        with self._lock:
            last = list(self._last_out)
        return [pyDNNTensor(o.name, properties(o), last[i]) for i, o in enumerate(self._outputs)]

    def forward(self, arg: Any, core_id: int = 0, priority: int = 0) -> List[pyDNNTensor]:
        """Runs the model on ``arg`` (one array, or a list/tuple with one per input) and returns its outputs.
        ``core_id`` (0 any, 1 or 2 a BPU core, libdnn's bpuCoreId) is checked and otherwise not used: accel's
        device schedules its cores itself; ``priority`` 0..255 is the job's priority."""
        _check_int("core_id", core_id, 0, 2)
        priority = _check_int("priority", priority, 0, 255)
        arrays = _arrays(arg, len(self._inputs))
        feeds = []
        for i, (info, array) in enumerate(zip(self._inputs, arrays)):
            if info.image is not None:
                feeds.append(_frame(i, info, self._in_props(i), array))
            else:
                feeds.append(_featuremap(i, info, array))
        results = self._loaded.model.run(feeds, priority=priority)
        with self._lock:
            self._last_in = [np.reshape(f, info.shape) for f, info in zip(feeds, self._inputs)]
            self._last_out = list(results)
        return [pyDNNTensor(o.name, properties(o), r) for o, r in zip(self._outputs, results)]

    def __repr__(self) -> str:
        return f"Model(name={self.name!r}, inputs={len(self._inputs)}, outputs={len(self._outputs)})"


def load(model_file: Any) -> List[Model]:
    """Loads each model file (a path, or a list of paths) and returns one Model per file: its first model, as
    the binding loads it. On the emulator a .bin runs the ONNX it was made from (the launcher's --source, else
    ``<name>_calibrated_model.onnx`` beside it) behind the .bin's own inputs and outputs."""
    if isinstance(model_file, (str, os.PathLike)):
        files: Sequence[Any] = [model_file]
    elif isinstance(model_file, list):
        files = model_file
    else:
        raise TypeError(f"pyeasy_dnn.load: model_file must be a string or a list, not {type(model_file).__name__}")
    return [Model(load_file(f, "pyeasy_dnn.load")) for f in files]
