"""`xir` as a script imports it under `accel shim`: accel's shim module
accel.shims.vitis.xir itself (launcher.py puts this folder first on the script's PYTHONPATH)."""
import sys

from accel.shims.vitis import xir as _shim

sys.modules[__name__] = _shim
