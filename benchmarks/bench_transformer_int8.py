"""A dynamically quantized transformer encoder on the emulator's int8 engine against onnxruntime's int8
kernels, on one thread and on every CPU.

    python benchmarks/bench_transformer_int8.py [--layers 4] [--seq 128] [--rounds 5] [--quick]
                                                [--model PATH] [--profile]

The model: a BERT-base-shaped encoder built with onnx.helper (hidden 768, 12 heads, FFN 3072, erf GELU,
LayerNormalization; seeded random weights, no embeddings: the input is the embeddings' output [1, seq, 768]),
quantized by onnxruntime.quantization.quantize_dynamic with its defaults (uint8 activations computed at run
time, int8 weights; only MatMuls with a constant B: attention's Q*K^T and P*V stay float). `--model PATH`
measures a real export instead (its int64 inputs get ids in [0, 100) and a mask of ones, at batch 1 and
`--seq`), quantized the same way.

Four runs, each in a process of its own so that neither runtime's idle threads take the other's CPUs:
  * emu 1t: the emulator on emu:cores=1,threads=1;   * ort 1t: onnxruntime, intra_op_num_threads=1;
  * emu:    the default device (`emu`, every CPU);   * ort:    onnxruntime's default threads.
Rounds interleave the four (each round a median of as many runs as fit ROUND_SECONDS); each figure is the
median over rounds. It prints latencies and the ratios emulator / onnxruntime (target <= 1.0, goal 0.7),
and the outputs' largest difference. `--profile` prints the emulator's per-op times (one thread) instead.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

import numpy as np
import onnx
from onnx import TensorProto

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from models import quantized  # noqa: E402
from models.encoder import encoder  # noqa: E402
from processes import Child, serve  # noqa: E402  (benchmarks/, the script's folder)
from profiles import emulator_profile  # noqa: E402
from timing import median_latency  # noqa: E402

TARGET, GOAL = 1.0, 0.7
ROUND_SECONDS = 1.0


def inputs_for(path: str, seq: int, seed: int = 1) -> Dict[str, np.ndarray]:
    """Batch-1 inputs at `seq` for the model's inputs: floats N(0, 1), ids in [0, 100), masks of ones."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for inp in onnx.load(path, load_external_data=False).graph.input:
        t = inp.type.tensor_type
        dims = [d.dim_value if d.dim_value > 0 else None for d in t.shape.dim]
        dims = [1 if i == 0 and d is None else (seq if d is None else d) for i, d in enumerate(dims)]
        if t.elem_type == TensorProto.FLOAT:
            feeds[inp.name] = rng.standard_normal(dims).astype(np.float32)
        elif "mask" in inp.name:
            feeds[inp.name] = np.ones(dims, np.int64)
        elif "type" in inp.name:
            feeds[inp.name] = np.zeros(dims, np.int64)
        else:
            feeds[inp.name] = rng.integers(0, 100, dims).astype(np.int64)
    return feeds


def runner(kind: str, path: str, feeds: Dict[str, np.ndarray]):
    """(run, outputs) for one of the four configurations."""
    if kind.startswith("ort"):
        import onnxruntime as ort

        opts = ort.SessionOptions()
        if kind == "ort 1t":
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        return (lambda: sess.run(None, feeds)), (lambda: sess.run(None, feeds)[0])
    import accel
    from accel import compiler

    dev = accel.open("emu:cores=1,threads=1" if kind == "emu 1t" else "emu")
    shapes = {k: list(v.shape) for k, v in feeds.items()}
    model = dev.load(compiler.compile_model(path, input_shapes=shapes))
    ins = [dev.tensor(feeds[t.name]) for t in model.inputs]
    outs = [dev.empty(o.shape, o.dtype) for o in model.outputs]
    return (lambda: model.run(ins, outputs=outs)), (lambda: outs[0].numpy())


def worker(kind: str, path: str, seq: int) -> int:
    """A child process: loads its runtime, then answers each line on stdin with a median latency."""
    feeds = inputs_for(path, seq)
    run, first = runner(kind, path, feeds)
    run()
    np.save(f"{path}.{kind.replace(' ', '_')}.npy", first())
    return serve(lambda seconds: median_latency(run, seconds))


def profile(path: str, seq: int, device: str) -> None:
    """The emulator's per-op-type and slowest-node times over a few runs on `device`."""
    print(emulator_profile(path, inputs_for(path, seq), device).summary())


KINDS = ("emu 1t", "ort 1t", "emu", "ort")


def measure(path: str, seq: int, rounds: int, seconds: float) -> Dict[str, float]:
    children = [Child(k, [__file__, "--worker", k, "--seq", str(seq), path]) for k in KINDS]
    try:
        for c in children:
            c.wait_ready()
        got: Dict[str, List[float]] = {k: [] for k in KINDS}
        for _ in range(rounds):
            for c in children:  # one at a time: the others wait on their stdin, idle
                got[c.name].append(c.measure(seconds))
    finally:
        for c in children:
            c.close()
    return {k: statistics.median(v) for k, v in got.items()}


def report(name: str, path: str, seq: int, rounds: int, seconds: float) -> None:
    t = measure(path, seq, rounds, seconds)
    outs = {k: np.load(f"{path}.{k.replace(' ', '_')}.npy") for k in KINDS}
    diff = float(np.max(np.abs(outs["emu"].astype(np.float64) - outs["ort 1t"])))
    print(f"{name:<22} {'1 thread ms':>12} {'every CPU ms':>13}")
    print(f"{'  emulator':<22} {t['emu 1t'] * 1e3:>12.2f} {t['emu'] * 1e3:>13.2f}")
    print(f"{'  onnxruntime int8':<22} {t['ort 1t'] * 1e3:>12.2f} {t['ort'] * 1e3:>13.2f}")
    r1, r2 = t["emu 1t"] / t["ort 1t"], t["emu"] / t["ort"]
    print(f"{'  emu / ort':<22} {r1:>11.2f}x {r2:>12.2f}x   (target <= {TARGET}, goal {GOAL})")
    print(f"  outputs: largest |emu - ort| {diff:.3g}; threads=1 vs every CPU identical: "
          f"{bool(np.array_equal(outs['emu'], outs['emu 1t']))}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--model", help="a float ONNX model to quantize and measure instead of the built encoder")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 1 layer, seq 32, 1 short round")
    ap.add_argument("--profile", action="store_true", help="print the emulator's per-op profile (one thread)")
    ap.add_argument("--device", default="emu:cores=1,threads=1", help="the device --profile runs on")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("path", nargs="?", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args.worker, args.path, args.seq)
    layers, seq, rounds, seconds = (1, 32, 1, 0.1) if args.quick else (args.layers, args.seq, args.rounds,
                                                                       ROUND_SECONDS)
    with tempfile.TemporaryDirectory() as tmp:
        if args.model:
            name, float_path = Path(args.model).stem, args.model
        else:
            name, float_path = f"encoder x{layers}, seq {seq}", f"{tmp}/encoder.onnx"
            onnx.save(encoder(layers, seq), float_path)
        qpath = quantized.quantize_dynamic_file(float_path, f"{tmp}/quantized.onnx")
        if args.profile:
            profile(qpath, seq, args.device)
            return 0
        print(f"dynamically quantized (quantize_dynamic defaults); {rounds} rounds of {seconds} s; "
              f"each runtime in its own process")
        report(name, qpath, seq, rounds, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
