"""Device ops three ways, side by side in one run: eager (one job per op), a fusion scope (one job per
iteration), and the same graph loaded once as an ONNX model and run with Model.run.

    python benchmarks/bench_eager.py [--rounds 7] [--quick] [--uri emu:cores=1,threads=1]

Graphs:
  conv  conv3x3 16->16 + bias, relu, 2x2 max pool on x[1, 16, 64, 64]
  mlp   linear 256->512 + bias, gelu, linear 512->128 + bias on x[8, 256]

Columns (median time per iteration over the rounds; each round measures every graph and every way in turn):
  eager  dev.ops calls one after another (a job per op; intermediate results are device tensors)
  scope  the same calls in `with dev.fusion_scope():` (recorded, then one fused model run as one job)
  model  the scope's ONNX model (the same graph), loaded once; Model.run(x, outputs=[out]) per iteration
Every way has warmed up (its models are compiled and cached) before it is timed, so the columns measure
running, not compiling. The input is a DeviceTensor in every column. These machines are noisy: compare the
ratios, not the absolute figures.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any, Callable, Dict, List

import numpy as np

import accel

WAYS = ("eager", "scope", "model")


def conv_graph(ops: Any, x: Any, p: Dict[str, np.ndarray]) -> Any:
    return ops.max_pool2d(ops.relu(ops.conv2d(x, p["w"], p["b"], padding=1)), 2)


def mlp_graph(ops: Any, x: Any, p: Dict[str, np.ndarray]) -> Any:
    return ops.linear(ops.gelu(ops.linear(x, p["w1"], p["b1"])), p["w2"], p["b2"])


def graphs() -> Dict[str, Any]:
    r = np.random.default_rng(0)

    def f32(*shape: int, scale: float = 1.0) -> np.ndarray:
        return (r.standard_normal(shape) * scale).astype(np.float32)

    return {
        "conv": (conv_graph, f32(1, 16, 64, 64), {"w": f32(16, 16, 3, 3, scale=0.2), "b": f32(16)}),
        "mlp": (mlp_graph, f32(8, 256), {"w1": f32(512, 256, scale=0.06), "b1": f32(512),
                                         "w2": f32(128, 512, scale=0.04), "b2": f32(128)}),
    }


def runners(dev: accel.Device, graph: Callable[..., Any], x: np.ndarray,
            params: Dict[str, np.ndarray]) -> Dict[str, Callable[[], Any]]:
    """One callable per way, each computing the graph once; checked to agree."""
    xt = dev.tensor(x)

    def eager() -> Any:
        return graph(dev.ops, xt, params)

    def scope() -> Any:
        with dev.fusion_scope():
            y = graph(dev.ops, xt, params)
        return y

    with dev.fusion_scope() as s:
        y = graph(dev.ops, xt, params)
    onnx_bytes = s.onnx()
    assert onnx_bytes is not None
    model = dev.load(onnx_bytes)
    out = dev.empty(y.shape)

    def run_model() -> Any:
        return model.run(xt, outputs=[out])[0]

    ways = {"eager": eager, "scope": scope, "model": run_model}
    want = np.asarray(eager()).copy()
    for name, fn in ways.items():
        np.testing.assert_allclose(np.asarray(fn()), want, rtol=1e-4, atol=1e-5, err_msg=name)
    return ways


def per_iteration(fn: Callable[[], Any], warmup_s: float, target_s: float) -> float:
    """Seconds per call: warms up for warmup_s, then times as many calls as fit in about target_s."""
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < warmup_s or n < 3:
        fn()
        n += 1
    count = max(3, int(target_s / ((time.perf_counter() - t0) / n)))
    t0 = time.perf_counter()
    for _ in range(count):
        fn()
    return (time.perf_counter() - t0) / count


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="emu:cores=1,threads=1", help="the device (default emu:cores=1,threads=1)")
    ap.add_argument("--rounds", type=int, default=7, help="rounds; the table gives medians (default 7)")
    ap.add_argument("--target-ms", type=float, default=400.0, help="timed time per measurement (default 400)")
    ap.add_argument("--warmup-ms", type=float, default=150.0, help="warm-up per measurement (default 150)")
    ap.add_argument("--quick", action="store_true", help="a smoke run: 2 rounds of short measurements")
    a = ap.parse_args()
    rounds, target, warmup = (2, 0.03, 0.01) if a.quick else (a.rounds, a.target_ms / 1e3, a.warmup_ms / 1e3)

    with accel.open(a.uri) as dev:
        ways = {name: runners(dev, g, x, p) for name, (g, x, p) in graphs().items()}
        times: Dict[str, Dict[str, List[float]]] = {g: {w: [] for w in WAYS} for g in ways}
        for _ in range(rounds):
            for g, fns in ways.items():
                for w in WAYS:
                    times[g][w].append(per_iteration(fns[w], warmup, target))
        jobs = {}
        for g, fns in ways.items():
            row = {}
            for w in WAYS:
                before = dev.stats()["jobs_submitted"]
                fns[w]()
                row[w] = dev.stats()["jobs_submitted"] - before
            jobs[g] = row
        info = dev.ops.cache_info()

    print(f"device {a.uri}, front-end {accel.frontend}, {rounds} rounds (median µs per iteration)")
    print(f"{'graph':6s} {'eager':>10s} {'scope':>10s} {'model':>10s}   {'eager/model':>11s} {'scope/model':>11s} "
          f"{'eager/scope':>11s}   jobs per iteration (eager/scope/model)")
    for g, row in times.items():
        med = {w: statistics.median(v) * 1e6 for w, v in row.items()}
        j = jobs[g]
        print(f"{g:6s} {med['eager']:10.1f} {med['scope']:10.1f} {med['model']:10.1f}   "
              f"{med['eager'] / med['model']:10.2f}x {med['scope'] / med['model']:10.2f}x "
              f"{med['eager'] / med['scope']:10.2f}x   {j['eager']}/{j['scope']}/{j['model']}")
    print(f"op model cache: {info['loads']} models loaded, {info['hits']} calls only ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
