"""What the shim modules of one launched process share: the device they run on and the launcher's options, passed
to the process in its environment (the launcher's own process is another one), read once."""
from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any, Dict, Optional, Set, Tuple, Union

from .._wording import counted
from . import DEFAULT_DEVICES
from .compare import Comparisons

__all__ = ["ENV_COMPARE", "ENV_COMPARE_JSON", "ENV_DEVICE", "ENV_PROFILE", "ENV_SOURCE", "ENV_VENDOR", "device", "load",
           "say_once", "source", "vendor"]

ENV_VENDOR = "ACCEL_SHIM_VENDOR"      # which vendor's shim the launcher set up
ENV_DEVICE = "ACCEL_SHIM_DEVICE"      # the device URI (default: DEFAULT_DEVICES[vendor])
ENV_SOURCE = "ACCEL_SHIM_SOURCE"      # a Horizon .bin's source ONNX, when named to the launcher
ENV_PROFILE = "ACCEL_SHIM_PROFILE"    # where to write the per-layer trace at exit
ENV_COMPARE = "ACCEL_SHIM_COMPARE"    # "1": every run held against its model's float run (compare.py)
ENV_COMPARE_JSON = "ACCEL_SHIM_COMPARE_JSON"  # where to write the comparison's rows at exit

_lock = threading.Lock()
_device: Optional[Any] = None
_compared: Optional[Comparisons] = None
_said: Set[str] = set()


def vendor() -> str:
    return os.environ.get(ENV_VENDOR, "")


def device() -> Any:
    """The accel.Device every shim module of this process runs on, opened at first use and closed at exit."""
    global _device
    with _lock:
        if _device is None:
            import accel

            uri = os.environ.get(ENV_DEVICE) or DEFAULT_DEVICES.get(vendor(), "emu")
            _device = accel.open(uri)
            atexit.register(_device.close)
            trace = os.environ.get(ENV_PROFILE)
            if trace:
                _profile_until_exit(trace)
        return _device


def load(model: Any, label: str, float_model: Union[Exception, Tuple[Any, Dict[str, Any]], None] = None,
         **options: Any) -> Any:
    """``device().load(model, **options)``; under ``--compare`` the model with every run held against its float run
    (compare.py), made from ``float_model`` ((what to load, options); by default ``model`` with ``options``; an
    exception: why there is none) and named ``label`` in the table."""
    loaded = device().load(model, **options)
    comparisons = _comparisons()
    if comparisons is None:
        return loaded
    if isinstance(float_model, Exception):
        return comparisons.uncompared(loaded, label, float_model)
    source, float_options = float_model if float_model is not None else (model, options)
    return comparisons.watch(loaded, label, source, float_options)


def _comparisons() -> Optional[Comparisons]:
    """The process's comparisons under ``--compare`` (made at first use, their table printed at exit), else None."""
    global _compared
    if not os.environ.get(ENV_COMPARE):
        return None
    with _lock:
        if _compared is None:
            _compared = Comparisons(say_once, os.environ.get(ENV_COMPARE_JSON) or None)
            atexit.register(_compared.report)
        return _compared


def _profile_until_exit(path: str) -> None:
    """Every job of the process profiled per layer, the trace written to ``path`` at exit (before the device
    closes: atexit runs last-registered first)."""
    import accel

    profile = accel.profile(ops=True).start()

    def write() -> None:
        profile.stop()
        profile.export_chrome_trace(path)
        print(f"accel shim: {counted(len(profile), 'job')} profiled: {path} (chrome://tracing, ui.perfetto.dev)",
              file=sys.stderr)

    atexit.register(write)


def source() -> Optional[str]:
    """The source ONNX the launcher was given for a Horizon .bin, or None (the front end then looks beside it)."""
    return os.environ.get(ENV_SOURCE) or None


def say_once(key: str, message: str) -> None:
    """Prints ``accel shim: message`` on stderr the first time ``key`` is said in this process."""
    with _lock:
        if key in _said:
            return
        _said.add(key)
    print(f"accel shim: {message}", file=sys.stderr)
