"""accel.shims: the vendors' Python APIs over accel, so that a script written for a board runs unchanged on any accel
device (the emulator in CI, or the board through accel's drivers).

    accel shim vitis|horizon|onnxruntime [--device URI] [--force] -- python app.py ARGS
    python -m accel.shims vitis -- python app.py ARGS

Each vendor's modules are importable under the vendor's own names in the launched process (``importable/<vendor>``
is put first on its PYTHONPATH): ``xir`` and ``vart`` (Vitis AI 3.5), ``hobot_dnn.pyeasy_dnn`` and ``hbm_runtime``
(Horizon), ``onnxruntime``. The modules themselves are ``accel.shims.<vendor>``; ``session`` holds what they share
(the device, the launcher's options). docs/shims.md lists what each covers and where it differs from the original.
"""
from __future__ import annotations

from typing import Dict, Tuple

__all__ = ["VENDORS", "DEFAULT_DEVICES"]

#: Each vendor the launcher knows -> the top-level module names its shim provides.
VENDORS: Dict[str, Tuple[str, ...]] = {
    "vitis": ("xir", "vart"),
    "horizon": ("hobot_dnn", "hbm_runtime"),
    "onnxruntime": ("onnxruntime",),
}

#: The device each vendor's scripts run on unless the launcher is told otherwise: the emulator, computing int8 with
#: the rules of the vendor's accelerator (a compiled .xmodel needs the DPU's, a Horizon model the BPU's).
DEFAULT_DEVICES: Dict[str, str] = {"vitis": "emu:int8=dpu", "horizon": "emu:int8=bpu", "onnxruntime": "emu"}
