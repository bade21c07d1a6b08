"""accel: one API for edge AI accelerators, with a software emulator of such a device."""

__version__ = "0.1.0"
