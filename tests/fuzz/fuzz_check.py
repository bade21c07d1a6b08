"""The property the compiler fuzzer checks on every input (fuzz_compiler.py), kept free of atheris so
that the tests replay it on the regressions (tests/python/emulator/test_fuzz_regressions.py).

An ONNX model (bytes) must either compile or raise CompileError; any other exception is a finding. A .xmodel
(check_xmodel) likewise: its DPU subgraph read and compiled, or XmodelError (a CompileError). A
model that compiles must load on the emulator (a refusal means the compiler wrote what the reader does
not accept) and, when small, run once on zeroed inputs. The int8 rules are ACCEL_FUZZ_INT8's (default
ort): `ACCEL_FUZZ_INT8=dpu` fuzzes a device's form of quantized models (qdq_device.py) and its kernels.
"""
from __future__ import annotations

import os

import numpy as np

import accel
from accel import compiler

RUN_LIMIT_BYTES = 1 << 20
INT8_RULES = os.environ.get("ACCEL_FUZZ_INT8", "ort")
_devices: dict = {}


def device(rules: str = INT8_RULES):
    if rules not in _devices:
        _devices[rules] = accel.open(f"emu:cores=1,pool=128M,spin=0,int8={rules}")
    return _devices[rules]


def check_model(data: bytes, rules: str = INT8_RULES) -> None:
    try:
        compiled = compiler.compile_model(data, int8=rules)
    except compiler.CompileError:
        return
    try:
        model = device(rules).load(compiled)
    except accel.OutOfMemoryError:
        return
    total = sum(int(np.prod(t.shape, dtype=np.int64)) * t.dtype.itemsize
                for t in list(model.inputs) + list(model.outputs))
    if total <= RUN_LIMIT_BYTES:
        try:
            model.run([np.zeros(t.shape, t.dtype) for t in model.inputs])
        except accel.OutOfMemoryError:
            pass


def check_xmodel(data: bytes) -> None:
    """The .xmodel front end's property: read, turned into a QDQ model and compiled with the dpu rules, or refused
    with a CompileError (XmodelError is one); what compiles loads and runs as check_model's models do."""
    from accel.compiler import xir

    try:
        model = xir.dpu_model(data, extra="all")  # every tensor the DPU writes an output: more of the front end
    except compiler.CompileError:
        return
    check_model(model.SerializeToString(), "dpu")
