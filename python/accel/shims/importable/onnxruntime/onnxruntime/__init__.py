"""`onnxruntime` as a script imports it under `accel shim`: accel's shim module accel.shims.ort itself (launcher.py puts
this folder first on the script's PYTHONPATH), and its submodules under onnxruntime's names
(`onnxruntime.capi.onnxruntime_pybind11_state`), so that each is one module whichever name imports it."""
import importlib
import sys

from accel.shims import ort as _shim

sys.modules[__name__] = _shim
for _name in _shim.SUBMODULES:
    sys.modules[f"{__name__}.{_name}"] = importlib.import_module(f"accel.shims.ort.{_name}")
