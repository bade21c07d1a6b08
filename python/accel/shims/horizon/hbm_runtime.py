"""``hbm_runtime`` (RDK S100) over accel: ``HB_HBMRuntime(path or [paths])`` with each model's metadata
(``model_names``, ``input_names``, ``input_shapes``, ``input_dtypes``, ``input_quants``, ``output_*`` ... keyed by
model name), ``set_scheduling_params`` and ``run`` (an ndarray, ``{input: array}`` or ``{model: {input: array}}``)
returning ``{model: {output: array}}``. Written from D-Robotics' documentation of it (rdk_s_doc
04_Algorithm_Application/02_Python_API.md, read, not copied).

On the emulator an S100 ``.hbm`` cannot be read (no public description): the ONNX named with ``accel shim horizon
--source model.onnx`` (else ``<name>_calibrated_model.onnx`` beside it) runs in its place, with that ONNX's own
inputs and outputs; an ``.onnx`` path loads as it is; an X5 ``.bin`` runs its source behind its own interface. On
``bpu:0`` every file loads as it is. docs/shims/horizon.md lists the differences from the original."""
from __future__ import annotations

import os
import threading
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ... import __version__
from ...errors import DTypeError, InvalidArgumentError, ShapeError
from .hbm_types import QuantParams, SchedParam, data_type, hbDNNDataType, hbDNNQuantiType, quant_params
from .hbm_sched import merged, validated
from .models import Loaded
from .models import load as load_file

__all__ = ["HB_HBMRuntime", "InputDTypeError", "QuantParams", "SchedParam", "hbDNNDataType", "hbDNNQuantiType"]

Arrays = Dict[str, np.ndarray]


class InputDTypeError(DTypeError, ValueError):
    """An input of another dtype than the model's: accel's DTypeError, and the ValueError the original raises."""


def _info_maps(infos: List[Any]) -> Tuple[List[str], Dict[str, Any]]:
    return [i.name for i in infos], {i.name: i for i in infos}


class _Entry:
    """One loaded model: the accel.Model and its inputs and outputs by name."""

    def __init__(self, loaded: Loaded) -> None:
        self.loaded = loaded
        self.model = loaded.model
        self.in_names, self.ins = _info_maps(list(loaded.model.inputs))
        self.out_names, self.outs = _info_maps(list(loaded.model.outputs))


def _array(model: str, info: Any, value: Any) -> np.ndarray:
    """``value`` checked against the input ``info``: an ndarray of exactly its dtype and shape (a camera frame
    also as any uint8 array of its bytes, the packed NV12 buffer as accel.image makes it); nothing is cast."""
    what = f"run: model {model!r} input {info.name!r}"
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{what} is a {type(value).__name__}, not a NumPy array")
    if value.dtype != info.dtype:
        raise InputDTypeError(f"{what} is {info.dtype}; this array is {value.dtype}: nothing is cast, convert it "
                              f"with .astype(np.{np.dtype(info.dtype).name})")
    if tuple(value.shape) == tuple(info.shape):
        return value
    if info.image is not None and value.size == info.size:
        return np.reshape(value, info.shape)   # a view where it can be: the caller's array is never written
    raise ShapeError(f"{what} has shape {list(info.shape)}; this array's is {list(value.shape)}")


class HB_HBMRuntime:
    """The models of one or more files on accel's device (the launcher's --device; the emulator by default)."""

    #: The library's version string (a class attribute, as the original's).
    version = f"accel {__version__} (hbm_runtime shim)"

    def __init__(self, model_file: Any) -> None:
        if isinstance(model_file, (str, os.PathLike)):
            files: List[Any] = [model_file]
        elif isinstance(model_file, (list, tuple)) and model_file:
            files = list(model_file)
        else:
            raise TypeError("HB_HBMRuntime takes a model file path or a non-empty list of them, not "
                            f"{type(model_file).__name__ if not isinstance(model_file, list) else 'an empty list'}")
        self._models: Dict[str, _Entry] = {}
        self._files: List[str] = []
        for f in files:
            entry = _Entry(load_file(f, "HB_HBMRuntime"))
            if entry.loaded.name in self._models:
                raise InvalidArgumentError(f"HB_HBMRuntime: two models are named {entry.loaded.name!r} "
                                           f"({self._models[entry.loaded.name].loaded.path}, {entry.loaded.path})")
            self._models[entry.loaded.name] = entry
            self._files.append(entry.loaded.path)
        self._lock = threading.Lock()
        self._sched: Dict[str, SchedParam] = {m: SchedParam() for m in self._models}

    # ---- metadata: fresh containers on each read, so a script's edits change nothing here
    def _per_model(self, fn: Any) -> Dict[str, Any]:
        return {m: fn(e) for m, e in self._models.items()}

    @property
    def model_names(self) -> List[str]:
        return list(self._models)

    @property
    def model_count(self) -> int:
        return len(self._models)

    @property
    def model_descs(self) -> Dict[str, str]:
        return self._per_model(lambda e: "")

    @property
    def hbm_descs(self) -> Dict[str, str]:
        return dict.fromkeys(self._files, "")

    @property
    def compile_bpu_core_num(self) -> Dict[str, int]:
        return self._per_model(lambda e: 1)

    @property
    def input_counts(self) -> Dict[str, int]:
        return self._per_model(lambda e: len(e.in_names))

    @property
    def input_names(self) -> Dict[str, List[str]]:
        return self._per_model(lambda e: list(e.in_names))

    @property
    def input_descs(self) -> Dict[str, Dict[str, str]]:
        return self._per_model(lambda e: dict.fromkeys(e.in_names, ""))

    @property
    def input_shapes(self) -> Dict[str, Dict[str, List[int]]]:
        return self._per_model(lambda e: {n: [int(d) for d in i.shape] for n, i in e.ins.items()})

    @property
    def input_dtypes(self) -> Dict[str, Dict[str, hbDNNDataType]]:
        return self._per_model(lambda e: {n: data_type(i.dtype) for n, i in e.ins.items()})

    @property
    def input_quants(self) -> Dict[str, Dict[str, QuantParams]]:
        return self._per_model(lambda e: {n: quant_params(i.quant) for n, i in e.ins.items()})

    @property
    def input_strides(self) -> Dict[str, Dict[str, List[int]]]:
        return self._per_model(lambda e: {n: [int(s) for s in i.strides] for n, i in e.ins.items()})

    @property
    def output_counts(self) -> Dict[str, int]:
        return self._per_model(lambda e: len(e.out_names))

    @property
    def output_names(self) -> Dict[str, List[str]]:
        return self._per_model(lambda e: list(e.out_names))

    @property
    def output_descs(self) -> Dict[str, Dict[str, str]]:
        return self._per_model(lambda e: dict.fromkeys(e.out_names, ""))

    @property
    def output_shapes(self) -> Dict[str, Dict[str, List[int]]]:
        return self._per_model(lambda e: {n: [int(d) for d in o.shape] for n, o in e.outs.items()})

    @property
    def output_dtypes(self) -> Dict[str, Dict[str, hbDNNDataType]]:
        return self._per_model(lambda e: {n: data_type(o.dtype) for n, o in e.outs.items()})

    @property
    def output_quants(self) -> Dict[str, Dict[str, QuantParams]]:
        return self._per_model(lambda e: {n: quant_params(o.quant) for n, o in e.outs.items()})

    @property
    def output_strides(self) -> Dict[str, Dict[str, List[int]]]:
        return self._per_model(lambda e: {n: [int(s) for s in o.strides] for n, o in e.outs.items()})

    @property
    def sched_params(self) -> Dict[str, SchedParam]:
        with self._lock:
            return {m: p.copy() for m, p in self._sched.items()}

    # ---- scheduling and running
    def set_scheduling_params(self, priority: Optional[Dict[str, int]] = None,
                              bpu_cores: Optional[Dict[str, List[int]]] = None,
                              custom_id: Optional[Dict[str, int]] = None,
                              device_id: Optional[Dict[str, int]] = None) -> None:
        """Sets the models' default scheduling, each argument {model name: value}; run()'s own arguments
        override it for one call."""
        given = validated(self._models, "set_scheduling_params", priority, bpu_cores, custom_id, device_id)
        with self._lock:
            self._sched = merged(self._sched, given)

    def _pick(self, model_name: Optional[str]) -> str:
        if model_name is not None:
            if model_name not in self._models:
                raise InvalidArgumentError(f"run: no model {model_name!r} is loaded; loaded: {self.model_names}")
            return model_name
        if len(self._models) != 1:
            raise InvalidArgumentError(f"run: {len(self._models)} models are loaded ({self.model_names}): name the "
                                       f"one to run with model_name=")
        return next(iter(self._models))

    def _requests(self, inputs: Any, model_name: Optional[str]) -> Dict[str, Arrays]:
        """{model: {input: array}} from run's three forms."""
        if isinstance(inputs, np.ndarray):
            m = self._pick(model_name)
            names = self._models[m].in_names
            if len(names) != 1:
                raise InvalidArgumentError(f"run: model {m!r} has {len(names)} inputs ({names}): pass "
                                           f"{{input name: array}}")
            return {m: {names[0]: inputs}}
        if not isinstance(inputs, dict):
            raise TypeError(f"run takes an ndarray, {{input: ndarray}} or {{model: {{input: ndarray}}}}, not "
                            f"{type(inputs).__name__}")
        if not inputs:
            raise InvalidArgumentError("run: no inputs given")
        nested = {isinstance(v, dict) for v in inputs.values()}
        if nested == {False}:
            return {self._pick(model_name): dict(inputs)}
        if nested != {True}:
            raise TypeError("run: the inputs mix arrays and {input: array} dicts: give {input: array} for one "
                            "model or {model: {input: array}} for several")
        for m in inputs:
            if m not in self._models:
                raise InvalidArgumentError(f"run: no model {m!r} is loaded; loaded: {self.model_names}")
        if model_name is not None:
            if model_name not in inputs:
                raise InvalidArgumentError(f"run: model_name={model_name!r} has no inputs here (given: "
                                           f"{list(inputs)})")
            return {model_name: dict(inputs[model_name])}
        return {m: dict(v) for m, v in inputs.items()}

    def _feeds(self, model: str, given: Arrays) -> List[np.ndarray]:
        entry = self._models[model]
        unknown = [n for n in given if n not in entry.ins]
        missing = [n for n in entry.in_names if n not in given]
        if unknown or missing:
            raise InvalidArgumentError(f"run: model {model!r} takes inputs {entry.in_names}"
                                       + (f"; it has no {unknown}" if unknown else "")
                                       + (f"; missing {missing}" if missing else ""))
        return [_array(model, entry.ins[n], given[n]) for n in entry.in_names]

    def run(self, inputs: Any = None, model_name: Optional[str] = None,
            priority: Optional[Dict[str, int]] = None, bpu_cores: Optional[Dict[str, List[int]]] = None,
            custom_id: Optional[Dict[str, int]] = None, device_id: Optional[Dict[str, int]] = None,
            **named: Any) -> Dict[str, Dict[str, np.ndarray]]:
        """Runs one model (an ndarray, or {input: array}; ``model_name`` names it when several are loaded) or
        several ({model: {input: array}}, in parallel) and returns {model: {output: array}}, each array a view
        of its device buffer. The scheduling arguments ({model: value}) override the defaults for this call."""
        for alias in ("input_tensor", "input_tensors", "multi_input_tensors"):   # the original's overloads' names
            if alias in named:
                if inputs is not None:
                    raise TypeError(f"run: inputs given twice (positionally and as {alias}=)")
                inputs = named.pop(alias)
        if named:
            raise TypeError(f"run: unexpected keyword argument{'s' * (len(named) > 1)} {sorted(named)}")
        if inputs is None:
            raise TypeError("run: no inputs given")
        requests = self._requests(inputs, model_name)
        overrides = validated(self._models, "run", priority, bpu_cores, custom_id, device_id)
        with self._lock:
            sched = merged(self._sched, overrides)
        feeds = {m: self._feeds(m, given) for m, given in requests.items()}
        if len(feeds) == 1:
            ((m, f),) = feeds.items()
            results = {m: self._models[m].model.run(f, priority=sched[m].priority)}
        else:   # every model submitted before any is waited for: they run side by side on the device's cores
            futures = {m: self._models[m].model.run_async(f, priority=sched[m].priority) for m, f in feeds.items()}
            results = {m: fut.result() for m, fut in futures.items()}
        return {m: dict(zip(self._models[m].out_names, arrays)) for m, arrays in results.items()}
