"""Quantized models on the emulator's int8 engine against onnxruntime's int8 kernels and its float model,
measured side by side in one run, N threads each (default 1).

    python benchmarks/bench_int8.py [--models resnet18,mobilenetv2,ppocr_det] [--rounds 5] [--quick]
                                    [--activation uint8|int8] [--threads N]

For each model (tests/models/quantized.py: QDQ with per-channel int8 weights and uint8 activations by
default, at the catalog's benchmark shape):
  * the emulator on emu:cores=1,threads=N (sync Model.run on preallocated DeviceTensors) running the QDQ model;
  * onnxruntime on the same QDQ model (intra_op_num_threads=N, session.qdqisint8allowed=1, its default
    optimizations: its fused int8 kernels);
  * onnxruntime on the float model (intra_op_num_threads=N).
With N > 1 each runtime's idle threads spin for a while after its turn (onnxruntime's pool, the emulator's
helpers), which a round's first runs of the next one may feel: compare ratios between runs of this script,
and rounds long enough that the hand-over is a small part of them.
Rounds interleave the three, so that a noisy machine weighs on each alike; each figure is the median over
all rounds. It prints the int8 code path the emulator ran (its device name), the latencies, the ratios
emulator / onnxruntime int8 (target <= 1.0, goal 0.5) and emulator / onnxruntime float (target <= 0.6),
and their geometric means. ACCEL_EMU_ISA=portable|avx2|avx512vnni|amx measures a slower path.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Dict, List

import onnx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from timing import median_latency  # noqa: E402  (benchmarks/, the script's folder)

TARGET_INT8, GOAL_INT8, TARGET_FLOAT = 1.0, 0.5, 0.6
ROUND_SECONDS = 0.5


def ort_session(path: str, int8: bool, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    if int8:
        opts.add_session_config_entry("session.qdqisint8allowed", "1")
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def float_model_at(name: str, shape, folder: Path) -> str:
    """The float model `name` with its input fixed to `shape`, as a file (what onnxruntime float runs)."""
    from models import quantized

    path = folder / f"{name}_float.onnx"
    onnx.save(quantized.float_model(name, shape), str(path))
    return str(path)


def bench_model(name: str, activation: str, rounds: int, seconds: float, folder: Path,
                threads: int) -> Dict[str, float]:
    import accel
    from accel import compiler
    from models import catalog, quantized

    spec = catalog.MODELS[name]
    shape = spec.bench_shape
    qpath = quantized.static_model(name, activation=activation, shape=shape)
    x = spec.make_input(shape)
    int8_sess = ort_session(str(qpath), True, threads)
    float_sess = ort_session(float_model_at(name, shape, folder), False, threads)
    in_name = int8_sess.get_inputs()[0].name
    with accel.open(f"emu:cores=1,threads={threads}") as dev:
        model = dev.load(compiler.compile_model(str(qpath)))
        xin = dev.tensor(x)
        outs = [dev.empty(o.shape, o.dtype) for o in model.outputs]
        runs = {
            "emu int8": lambda: model.run([xin], outputs=outs),
            "ort int8": lambda: int8_sess.run(None, {in_name: x}),
            "ort float": lambda: float_sess.run(None, {in_name: x}),
        }
        for run in runs.values():  # warm-up
            run()
        got: Dict[str, List[float]] = {k: [] for k in runs}
        for _ in range(rounds):
            for key, run in runs.items():
                got[key].append(median_latency(run, seconds))
    return {k: statistics.median(v) for k, v in got.items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="resnet18,mobilenetv2,ppocr_det")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--activation", default="uint8", choices=("uint8", "int8"))
    ap.add_argument("--quick", action="store_true", help="a smoke run: 1 round, short measurements")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads of each runtime: the emulator's emu:cores=1,threads=N, onnxruntime's intra-op")
    args = ap.parse_args(argv)
    rounds, seconds = (1, 0.1) if args.quick else (args.rounds, ROUND_SECONDS)

    import accel

    with accel.open(f"emu:cores=1,threads={args.threads}") as dev:
        print(f"emulator: {dev.info.name}; {args.threads} thread(s) each; {rounds} rounds; "
              f"{args.activation} activations")
    print(f"{'model':<12} {'emu int8 ms':>12} {'ort int8 ms':>12} {'ort float ms':>13} {'/ort int8':>10} "
          f"{'/ort float':>11}")
    r_int8, r_float = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            t = bench_model(name, args.activation, rounds, seconds, Path(tmp), args.threads)
            a, b = t["emu int8"] / t["ort int8"], t["emu int8"] / t["ort float"]
            r_int8.append(a)
            r_float.append(b)
            print(f"{name:<12} {t['emu int8'] * 1e3:>12.2f} {t['ort int8'] * 1e3:>12.2f} "
                  f"{t['ort float'] * 1e3:>13.2f} {a:>9.2f}x {b:>10.2f}x")
    g_int8 = math.exp(sum(map(math.log, r_int8)) / len(r_int8))
    g_float = math.exp(sum(map(math.log, r_float)) / len(r_float))
    print(f"geometric mean: {g_int8:.2f}x onnxruntime int8 (target <= {TARGET_INT8}, goal {GOAL_INT8}), "
          f"{g_float:.2f}x onnxruntime float (target <= {TARGET_FLOAT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
