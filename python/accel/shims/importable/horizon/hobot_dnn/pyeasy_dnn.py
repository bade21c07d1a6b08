"""`hobot_dnn.pyeasy_dnn` as a script imports it under `accel shim`: accel's shim module
accel.shims.horizon.pyeasy_dnn itself (launcher.py puts this folder first on the script's PYTHONPATH)."""
import sys

from accel.shims.horizon import pyeasy_dnn as _shim

sys.modules[__name__] = _shim
