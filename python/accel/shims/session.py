"""What the shim modules of one launched process share: the device they run on and the launcher's options, passed
to the process in its environment (the launcher's own process is another one), read once."""
from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any, Optional, Set

from . import DEFAULT_DEVICES

__all__ = ["ENV_DEVICE", "ENV_VENDOR", "ENV_SOURCE", "ENV_PROFILE", "device", "source", "say_once", "vendor"]

ENV_VENDOR = "ACCEL_SHIM_VENDOR"      # which vendor's shim the launcher set up
ENV_DEVICE = "ACCEL_SHIM_DEVICE"      # the device URI (default: DEFAULT_DEVICES[vendor])
ENV_SOURCE = "ACCEL_SHIM_SOURCE"      # a Horizon .bin's source ONNX, when named to the launcher
ENV_PROFILE = "ACCEL_SHIM_PROFILE"    # where to write the per-layer trace at exit

_lock = threading.Lock()
_device: Optional[Any] = None
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


def _profile_until_exit(path: str) -> None:
    """Every job of the process profiled per layer, the trace written to ``path`` at exit (before the device
    closes: atexit runs last-registered first)."""
    import accel

    profile = accel.profile(ops=True).start()

    def write() -> None:
        profile.stop()
        profile.export_chrome_trace(path)
        print(f"accel shim: {len(profile)} jobs profiled: {path} (chrome://tracing, ui.perfetto.dev)", file=sys.stderr)

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
