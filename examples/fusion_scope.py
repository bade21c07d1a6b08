"""Device operators from Python, fused: the conv, relu, pool sequence of the BPU article
(``with bpu.fusion_scope(): conv = model.conv(x); relu = model.relu(conv); pool = model.pool(relu)``) on the
emulator, once op by op and once in a fusion scope, which compiles the three calls into one model and runs
it as one job.

    python examples/fusion_scope.py [--save results.npz]

``dev.ops`` has torch.nn.functional's names and arguments. Outside a scope each call runs at once (one job;
the one-op model is compiled once and then only run). Inside ``dev.fusion_scope()`` the calls return
``accel.PendingTensor`` placeholders; when the block ends the recorded graph is compiled as one model, where
the compiler fuses conv + bias + relu into one node since nobody kept the conv's own result, and run.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import accel
from accel import compiler


def conv_weights(seed: int = 0):
    """A 3x3 convolution from 3 to 16 channels, with a bias (made up: any float32 arrays do)."""
    rng = np.random.default_rng(seed)
    weight = (rng.standard_normal((16, 3, 3, 3)) * 0.2).astype(np.float32)
    bias = (rng.standard_normal(16) * 0.1).astype(np.float32)
    return weight, bias


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", type=Path, help="write the image, the weights and both results to this .npz")
    args = parser.parse_args()

    image = np.random.default_rng(1).standard_normal((1, 3, 64, 64)).astype(np.float32)
    weight, bias = conv_weights()

    with accel.open("emu") as dev:
        ops = dev.ops
        x = dev.tensor(image)  # in device memory once; every op below reads it in place

        # Op by op: three jobs, two intermediate tensors in device memory.
        jobs = dev.stats()["jobs_submitted"]
        eager = ops.max_pool2d(ops.relu(ops.conv2d(x, weight, bias, padding=1)), kernel_size=2)
        print(f"eager ops:    {dev.stats()['jobs_submitted'] - jobs} jobs, result {eager.shape}")

        # The article's sequence in a fusion scope: one model, one job.
        jobs = dev.stats()["jobs_submitted"]
        with dev.fusion_scope() as scope:
            conv = ops.conv2d(x, weight, bias, padding=1)
            relu = ops.relu(conv)
            pool = ops.max_pool2d(relu, kernel_size=2)
            print(f"inside the scope: {pool!r}")
            del conv, relu  # only the pool is wanted: the rest may be fused away
        print(f"fusion scope: {dev.stats()['jobs_submitted'] - jobs} job,  result {pool.shape}")

        onnx_model = scope.onnx()
        assert onnx_model is not None
        nodes = compiler.accm.read(compiler.compile_model(onnx_model))["nodes"]
        fused = ", ".join(n["op_name"] + (f"+{n['activation_name']}" if n["activation_name"] != "none" else "")
                          for n in nodes)
        print(f"the fused model's nodes: {fused}")

        result = np.asarray(pool)  # a zero-copy view of the result's device memory
        difference = float(np.max(np.abs(result - np.asarray(eager))))
        print(f"largest difference from the eager ops: {difference:.3g}")
        assert difference <= 1e-5 * max(1.0, float(np.max(np.abs(result)))), "the fused result differs"
        if args.save:
            np.savez(args.save, image=image, weight=weight, bias=bias, fused=result, eager=np.asarray(eager))
    print("ok")


if __name__ == "__main__":
    main()
