"""Vitis AI 3.5's Python API over accel: ``xir`` (reading a compiled .xmodel: xir.py) and ``vart`` (running its
DPU subgraphs: vart.py), importable under those names in a script launched with ``accel shim vitis -- python app.py``
(launcher.py), or as ``accel.shims.vitis.xir`` and ``accel.shims.vitis.vart``. Runners run on the shim's device
(session.py: under the launcher the emulator with the DPU's int8 rules, ``emu:int8=dpu``, unless it names another;
imported without it, set ACCEL_SHIM_VENDOR=vitis or ACCEL_SHIM_DEVICE). docs/shims/vitis.md lists what is covered
and where it differs from the original."""
from __future__ import annotations

__all__ = ["vart", "xir"]
