"""``onnxruntime.capi._pybind_state``: onnxruntime's re-export of its compiled module (``from
onnxruntime.capi._pybind_state import ...`` and ``as C``), the same names as onnxruntime_pybind11_state."""
from accel.shims.ort.capi.onnxruntime_pybind11_state import *  # noqa: F403 (the module is a re-export)
from accel.shims.ort.capi.onnxruntime_pybind11_state import __all__  # noqa: F401
