"""The base class of CoreDevice, in a module of its own so that the modules that take a device
(fast_run.py) can check one without importing device.py, which imports them (through model.py)."""
from __future__ import annotations

from typing import Any

__all__ = ["DeviceBase"]


class DeviceBase:
    """What CoreDevice (device.py) is an instance of; nothing else derives from it."""

    __slots__ = ()
    _device: Any  # its owner (_lib.new_owner: the handle is [0]), None once closed
