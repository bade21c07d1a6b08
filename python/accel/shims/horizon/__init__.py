"""Horizon's Python APIs over accel (``accel shim horizon -- python app.py``): ``hobot_dnn.pyeasy_dnn`` (RDK
X3/X5: ``dnn.load("model.bin")``, ``Model.forward``) and ``hbm_runtime`` (RDK S100: ``HB_HBMRuntime``).

Both load through ``models.py``: on the emulator a ``.bin`` runs the ONNX it was made from behind the ``.bin``'s own
interface (accel's Horizon .bin front end), an ``.hbm`` (which cannot be read without the board's runtime) runs the
ONNX named to the launcher; on ``bpu:0`` the file loads as it is. docs/shims/horizon.md lists what each covers and
where it differs from the original.

The modules are imported by name (``accel.shims.horizon.pyeasy_dnn``), not here: a script imports only the one it
uses.
"""
from __future__ import annotations
