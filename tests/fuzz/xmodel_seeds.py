"""Writes the .xmodel fuzzer's seeds: compiled models of each DPU op kind the front end takes, and the quantizer's
graphs that fold into them, made by tests/models/xmodel_builder.py (as tests/python/emulator/test_xmodel.py and
test_xmodel_quantized.py make them).

    python tests/fuzz/xmodel_seeds.py OUT_DIR
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.xmodel_builder import QuantizerBuilder, XmodelBuilder


def seeds() -> dict:
    """{file name: bytes} of the seed models."""
    rng = np.random.default_rng(0)
    out = {}
    b = XmodelBuilder("conv_pool")
    x = b.input("x", (1, 6, 6, 3), 4)
    c = b.op("conv2d-fix", "conv", {"input": [x], "weights": [b.const("w", rng.integers(-60, 60, (4, 3, 3, 3)), 6)],
                                    "bias": [b.const("b", rng.integers(-60, 60, 4), 5)]},
             (1, 6, 6, 4), 3, kernel=[3, 3], stride=[1, 1], pad=[1, 1, 1, 1], nonlinear="RELU")
    p = b.op("pool-fix", "pool", {"input": [c]}, (1, 3, 3, 4), 3, type="MAX", kernel=[2, 2], stride=[2, 2])
    b.output(b.op("reshape-fix", "flat", {"input": [p]}, (1, 36), 3, shape=[1, 36]))
    out["conv_pool.xmodel"] = b.bytes()

    b = XmodelBuilder("branches")
    x = b.input("x", (1, 4, 4, 8), 3)
    d = b.op("depthwise-conv2d-fix", "dw", {"input": [x], "weights": [b.const("w", rng.integers(-60, 60, (1, 3, 3, 8)),
                                                                               5)]},
             (1, 4, 4, 8), 3, kernel=[3, 3], pad=[1, 1, 1, 1], nonlinear="LEAKYRELU")
    a = b.op("eltwise-fix", "add", {"input": [x, d]}, (1, 4, 4, 8), 2, type="ADD", nonlinear="RELU")
    cat = b.op("concat-fix", "cat", {"input": [a, a]}, (1, 4, 4, 16), 2, axis=3)
    avg = b.op("pool-fix", "avg", {"input": [cat]}, (1, 2, 2, 16), 1, type="AVG", kernel=[2, 2], stride=[2, 2])
    up = b.op("upsample-fix", "up", {"input": [avg]}, (1, 4, 4, 16), 1, mode="NEAREST", scale=[2.0, 2.0])
    b.output(b.op("hard-sigmoid-fix", "hsig", {"input": [up]}, (1, 4, 4, 16), 7, hsigmoid_in=1, shift_hsigmoid=8))
    out["branches.xmodel"] = b.bytes()

    q = QuantizerBuilder("quantized")
    x = q.input("x", (1, 6, 6, 4), 4)
    c = q.op("conv2d", "conv", {"input": [x], "weights": [q.const("w", rng.integers(-60, 60, (4, 3, 3, 4)), 6)],
                                "bias": [q.const("b", rng.integers(-60, 60, 4), 5)]},
             (1, 6, 6, 4), kernel=[3, 3], stride=[1, 1], pad=[1, 1, 1, 1], pad_mode="FLOOR")
    r = q.fix(q.op("relu", "relu", {"input": [c]}, (1, 6, 6, 4)), 3)
    a = q.fix(q.op("add", "add", {"input": [x, r]}, (1, 6, 6, 4)), 3)
    avg = q.op("avgpool2d", "avg_i0", {"input": [a]}, (1, 4, 4, 4), kernel=[3, 3], stride=[1, 1], pad_mode="FLOOR")
    avg = q.fix(q.op("mul", "avg", {"input": [avg, q.const("avg_i1", [63 / 64])]}, (1, 4, 4, 4)), 2)
    h = q.op("hard-sigmoid", "hsig_i0", {"input": [avg]}, (1, 4, 4, 4))
    h = q.fix(q.op("mul", "hsig", {"input": [h, q.const("hsig_i1", [6 * 2731 / 16384])]}, (1, 4, 4, 4)), 7)
    cat = q.fix(q.op("concat", "cat", {"input": [h, avg]}, (1, 4, 4, 8), axis=3), 2)
    flat = q.fix(q.op("reshape", "flat", {"input": [cat]}, (1, 128), shape=[1, 128]), 2)
    q.op("softmax", "probabilities", {"input": [flat]}, (1, 128), axis=-1)
    out["quantized.xmodel"] = q.bytes()
    return out


def main() -> int:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in seeds().items():
        (folder / name).write_bytes(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
