"""`vart` as a script imports it under `accel shim`: accel's shim module
accel.shims.vitis.vart itself (launcher.py puts this folder first on the script's PYTHONPATH)."""
import sys

from accel.shims.vitis import vart as _shim

sys.modules[__name__] = _shim
