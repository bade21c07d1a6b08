"""ONNX backend node-test conformance of the emulator.

cases.py gathers onnx's node test cases (models and arrays generated in memory by the installed onnx
wheel), runner.py compiles and runs each one on an emulator device and classifies the outcome, and
report.py renders the results as markdown (docs/conformance.md, via tools/conformance_report.py).
"""
