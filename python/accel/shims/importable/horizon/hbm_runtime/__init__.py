"""`hbm_runtime` as a script imports it under `accel shim`: accel's shim module accel.shims.horizon.hbm_runtime
itself (launcher.py puts this folder first on the script's PYTHONPATH)."""
import sys

from accel.shims.horizon import hbm_runtime as _shim

sys.modules[__name__] = _shim
