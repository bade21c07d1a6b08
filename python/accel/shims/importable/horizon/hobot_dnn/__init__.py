"""`hobot_dnn` as a script imports it under `accel shim horizon`: its one module is ``pyeasy_dnn`` (accel's shim)."""
