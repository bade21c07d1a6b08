"""What the Python API costs, measured side by side in one run (these machines are noisy: compare the
ratios, not the absolute figures):

(a) the per-call cost of a synchronous run of a tiny model through the Python API (model.run with
    preallocated DeviceTensor inputs and outputs; with a NumPy input; run_async().result()) against a
    plain C loop calling accel_run on the same compiled model (benchmarks/sync_loop.c), interleaved
    round by round. Target: the preallocated Python run within 2x of the C loop.
(b) making a NumPy view of a float32 DeviceTensor (np.asarray(t)) against a memcpy of the same bytes
    (np.copyto into a preallocated array), at 64x64, 1024x1024 and 4096x4096. Target: the view under 1%
    of the memcpy and independent of the size. (The seed article's figures to beat, for 1024x1024:
    0.8 ms with pybind11, 3.2 ms with ctypes.)

    python benchmarks/bench_overhead.py [--rounds 7] [--calls 3000]

Builds sync_loop with CMake into build/bench; uses the installed accel package, and runs sync_loop on the
installed package's emulator driver so that both sides drive the same device code.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build" / "bench"
URI = "emu:cores=1"


def build() -> Path:
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(BUILD), "-G", "Ninja", "-DACCEL_BUILD_BENCHMARKS=ON"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(BUILD), "--target", "sync_loop", "accel_driver_emu"], check=True,
                   stdout=subprocess.DEVNULL)
    return BUILD / "bin" / "sync_loop"


def tiny_model_bytes() -> bytes:
    """x[1, 16] -> relu(x @ W + b) [1, 8]: almost no compute, so the call path is what is measured."""
    from onnx import TensorProto, helper, numpy_helper

    r = np.random.default_rng(1)
    w = r.standard_normal((16, 8)).astype(np.float32)
    b = r.standard_normal(8).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["xwb"]),
         helper.make_node("Relu", ["xwb"], ["y"])], "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    from accel import compiler

    return compiler.compile_model(m)


def c_loop_ns(exe: Path, accm: Path, calls: int, env: dict) -> float:
    out = subprocess.run([str(exe), str(accm), str(calls), "--uri", URI, "--rounds", "1",
                          "--warmup-ms", str(int(WARMUP_S * 1000))], check=True,
                         capture_output=True, text=True, env=env).stdout
    for line in out.splitlines():
        if line.startswith("ns_per_call"):
            return float(line.split()[1])
    raise RuntimeError(f"sync_loop printed no result: {out!r}")


WARMUP_S = 0.3  # both sides: the OS takes that long to settle where the caller and the device threads run


def py_loop_ns(fn, calls: int) -> float:
    end = time.perf_counter() + WARMUP_S
    while time.perf_counter() < end:
        fn()
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t0) / calls


def per_call_ns(fn, target_s: float = 0.1, rounds: int = 7) -> float:
    """Median over `rounds` rounds of the per-call time of fn; the rounds take ~target_s together."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= 0.005 or n >= 1 << 22:
            break
        n *= 4
    n = max(1, int(n * (target_s / rounds) / max(elapsed, 1e-9)))
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        times.append((time.perf_counter_ns() - t0) / n)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--calls", type=int, default=10000, help="calls per round and side (default 10000)")
    args = ap.parse_args(argv)

    exe = build()
    import accel

    pkg = Path(accel.__file__).resolve().parent
    env = dict(os.environ)
    drivers = pkg / "lib" / "accel-drivers"
    if drivers.is_dir():
        env["ACCEL_DRIVER_PATH"] = str(drivers)  # the very driver the Python side uses

    print(f"accel {accel.__version__}, front-end {accel.frontend}, device {URI!r}, "
          f"Python {sys.version.split()[0]}, NumPy {np.__version__}")
    print(f"C baseline: {exe} (driver: {env.get('ACCEL_DRIVER_PATH', 'build tree')})")

    with tempfile.TemporaryDirectory() as tmp:
        accm = Path(tmp) / "tiny.accm"
        accm.write_bytes(tiny_model_bytes())

        with accel.open(URI) as dev:
            m = dev.load(str(accm))
            x = np.random.default_rng(0).standard_normal((1, 16)).astype(np.float32)
            t_in = dev.tensor(x)
            t_out = dev.empty((1, 8), np.float32)
            outs = [t_out]
            # same answer both ways before timing anything
            assert np.array_equal(m.run(t_in, outputs=outs)[0], m.run(x)[0])

            cases = {
                "pre": lambda: m.run(t_in, outputs=outs),
                "numpy": lambda: m.run(x),
                "async": lambda: m.run_async(t_in, outputs=outs).result(),
            }
            res = {"c": [], "pre": [], "numpy": [], "async": []}
            for _ in range(args.rounds):
                res["c"].append(c_loop_ns(exe, accm, args.calls, env))
                for k, fn in cases.items():
                    res[k].append(py_loop_ns(fn, args.calls))
            med = {k: statistics.median(v) for k, v in res.items()}
            best = {k: min(v) for k, v in res.items()}

            print()
            print(f"(a) synchronous run of a tiny model, ns per call "
                  f"(median of {args.rounds} interleaved rounds x {args.calls} calls)")
            print(f"    {'path':60s} {'median':>8s} {'vs C':>6s} {'best':>8s} {'vs C':>6s}")
            rows = [
                ("c", "C loop: accel_run, preallocated buffers"),
                ("pre", "Python: model.run(DeviceTensor, outputs=[DeviceTensor])"),
                ("numpy", "Python: model.run(numpy array) (1 copy in, new output)"),
                ("async", "Python: model.run_async(DeviceTensor, outputs=...).result()"),
            ]
            for k, label in rows:
                print(f"    {label:60s} {med[k]:8.0f} {med[k] / med['c']:5.2f}x {best[k]:8.0f} "
                      f"{best[k] / best['c']:5.2f}x")
            overhead = med["pre"] / med["c"]
            print(f"    target: preallocated Python run within 2x of the C loop (medians): "
                  f"{overhead:.2f}x -> {'MET' if overhead <= 2.0 else 'MISSED'} "
                  f"(best rounds: {best['pre'] / best['c']:.2f}x)")

            print()
            print("(b) DeviceTensor -> NumPy view (np.asarray(t)) vs memcpy of the same bytes "
                  "(np.copyto into a preallocated array)")
            print(f"    {'float32 tensor':16s} {'bytes':>10s} {'view (us)':>10s} {'memcpy (us)':>12s} "
                  f"{'view/memcpy':>12s}")
            views = []
            worst = 0.0
            for n in (64, 1024, 4096):
                t = dev.empty((n, n), np.float32)
                src = np.asarray(t)
                src[...] = 1.0
                dst = np.empty((n, n), np.float32)
                v = per_call_ns(lambda: np.asarray(t))
                c = per_call_ns(lambda: np.copyto(dst, src), target_s=0.3)
                assert np.shares_memory(np.asarray(t), src) and np.array_equal(dst, src)
                views.append(v)
                ratio = v / c
                worst = max(worst, ratio) if n >= 1024 else worst
                print(f"    {f'{n}x{n}':16s} {n * n * 4:10d} {v / 1e3:10.3f} {c / 1e3:12.3f} "
                      f"{100 * ratio:11.4f}%")
            spread = max(views) / min(views)
            print(f"    view cost across sizes: max/min = {spread:.2f} (independent of size: ~1)")
            print(f"    target: view under 1% of the memcpy (1024x1024 and up): worst {100 * worst:.4f}% -> "
                  f"{'MET' if worst < 0.01 else 'MISSED'}")
            print("    seed article, 1024x1024 float32 transfer: 0.8 ms (pybind11), 3.2 ms (ctypes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
