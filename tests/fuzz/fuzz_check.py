"""The property the compiler fuzzer checks on every input (fuzz_compiler.py), kept free of atheris so
that the tests replay it on the regressions (tests/python/test_fuzz_regressions.py).

An ONNX model (bytes) must either compile or raise CompileError; any other exception is a finding. A
model that compiles must load on the emulator (a refusal means the compiler wrote what the reader does
not accept) and, when small, run once on zeroed inputs.
"""
from __future__ import annotations

import numpy as np

import accel
from accel import compiler

RUN_LIMIT_BYTES = 1 << 20
_device = None


def device():
    global _device
    if _device is None:
        _device = accel.open("emu:cores=1,pool=128M,spin=0")
    return _device


def check_model(data: bytes) -> None:
    try:
        compiled = compiler.compile_model(data)
    except compiler.CompileError:
        return
    try:
        model = device().load(compiled)
    except accel.OutOfMemoryError:
        return
    total = sum(int(np.prod(t.shape, dtype=np.int64)) * t.dtype.itemsize
                for t in list(model.inputs) + list(model.outputs))
    if total <= RUN_LIMIT_BYTES:
        try:
            model.run([np.zeros(t.shape, t.dtype) for t in model.inputs])
        except accel.OutOfMemoryError:
            pass
