"""What the benchmarks profile with: a model's per-node times on the emulator."""
from __future__ import annotations

from typing import Dict

import numpy as np


def emulator_profile(path: str, feeds: Dict[str, np.ndarray], device: str, runs: int = 3):
    """An accel.Profile (ops=True) of `runs` runs of the ONNX model at `path`, compiled for the feeds' shapes, on
    `device`, after one untimed run."""
    import accel
    from accel import compiler

    with accel.open(device) as dev:
        model = dev.load(compiler.compile_model(path, input_shapes={k: list(v.shape) for k, v in feeds.items()}))
        ins = [dev.tensor(feeds[t.name]) for t in model.inputs]
        model.run(ins)
        with accel.profile(ops=True) as prof:
            for _ in range(runs):
                model.run(ins)
    return prof
