"""hbm_runtime's scheduling arguments ({model name: value} for priority, bpu_cores, custom_id, device_id): checked
before anything runs, and merged over a model's defaults (run's own override set_scheduling_params' for one call).

On accel, ``priority`` is the job's priority on the device; the BPU core, custom id and device id are checked and
kept (``sched_params``) but choose nothing: accel's device schedules its own cores."""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

import numpy as np

from ...errors import InvalidArgumentError
from .hbm_types import SchedParam

__all__ = ["merged", "validated"]

#: hbm_runtime's argument -> SchedParam's attribute.
FIELDS = {"priority": "priority", "bpu_cores": "bpu_cores", "custom_id": "customId", "device_id": "deviceId"}


def _int(what: str, value: Any, low: Optional[int] = None, high: Optional[int] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} is an int, not {type(value).__name__}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"{low}..{high}" if high is not None else f">= {low}"
        raise InvalidArgumentError(f"{what}={int(value)} is outside {bounds}")
    return int(value)


def _value(field: str, what: str, value: Any) -> Any:
    if field == "priority":
        return _int(what, value, 0, 255)
    if field == "bpu_cores":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"{what} is a list of core indices, not {type(value).__name__}")
        cores = [_int(f"{what}[{i}]", c, -1) for i, c in enumerate(value)]
        if not cores:
            raise InvalidArgumentError(f"{what} is empty: give [-1] for any core")
        return cores
    if field == "custom_id":
        return _int(what, value)
    return _int(what, value, 0)   # device_id


def validated(models: Mapping[str, Any], caller: str, priority: Any, bpu_cores: Any, custom_id: Any,
              device_id: Any) -> Dict[str, Dict[str, Any]]:
    """{argument: {model: value}} of the arguments given (None: not given), each a dict keyed by a loaded model's
    name with a value in range; anything else is an error naming the argument, the model and the value."""
    given: Dict[str, Dict[str, Any]] = {}
    for field, arg in (("priority", priority), ("bpu_cores", bpu_cores), ("custom_id", custom_id),
                       ("device_id", device_id)):
        if arg is None:
            continue
        if not isinstance(arg, Mapping):
            raise TypeError(f"{caller}: {field} is a dict {{model name: value}}, not {type(arg).__name__}")
        for model in arg:
            if model not in models:
                raise InvalidArgumentError(f"{caller}: {field} names no loaded model {model!r}; loaded: "
                                           f"{list(models)}")
        given[field] = {m: _value(field, f"{caller}: {field}[{m!r}]", v) for m, v in arg.items()}
    return given


def merged(defaults: Mapping[str, SchedParam], given: Mapping[str, Mapping[str, Any]]) -> Dict[str, SchedParam]:
    """New SchedParams: ``defaults`` with the ``given`` values (from ``validated``) set over them."""
    out = {m: p.copy() for m, p in defaults.items()}
    for field, values in given.items():
        for m, v in values.items():
            setattr(out[m], FIELDS[field], list(v) if field == "bpu_cores" else v)
    return out
