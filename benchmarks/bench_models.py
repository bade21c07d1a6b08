"""Real models on the emulator against onnxruntime (CPU), measured side by side in one run.

    python benchmarks/bench_models.py [--models resnet18,ppocr_det] [--rounds 5] [--quick]

For each model (tests/models/catalog.py: ResNet-18, MobileNetV2, PP-OCR det/cls/rec, the YOLO-style detector):
  * 1 thread: emulator latency on emu:cores=1,threads=1 (sync Model.run on preallocated DeviceTensors)
    against onnxruntime with intra_op_num_threads=1, inter_op_num_threads=1, sequential execution.
  * all CPUs (N = the CPUs this process may use), one job: the latency of plain `emu` (one core, N threads
    per job) against onnxruntime with its default intra-op threads.
  * all CPUs, jobs in flight: the emulator's throughput is the better of emu:cores=N,threads=1 with N jobs
    in flight (run_async) and `emu` with 2 in flight; onnxruntime's the better of 1/latency with its
    default threads and N threads calling run on a 1-thread session at once.
  * load: accel compile (ONNX -> .accm), accel load of the .accm, onnxruntime InferenceSession creation.
  * peak RSS of each engine in its own child process (the peak after load and a few runs, less the
    peak after the interpreter and its imports; see peak_kb).
Measurements are interleaved round by round, so that a noisy machine weighs on both engines alike;
figures are medians over all rounds. The ratios are checked against the targets: one thread, the
geometric mean <= 1.0 x onnxruntime and each model <= 1.15 x; all CPUs, one job, <= 1.1 x (the geometric
mean, and each model); jobs in flight, the emulator's throughput >= 1.2 x onnxruntime's. A model the
compiler rejects prints its CompileError.
"""
from __future__ import annotations

import argparse
import collections
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

# Issue 19's targets. One thread: emulator time / onnxruntime's, the geometric mean and each model at most.
TARGET_RATIO = 1.0
TARGET_EACH = 1.15
ALL_CPU_TARGET = 1.1  # one job on all CPUs: emulator time / onnxruntime's with its default threads, at most
THROUGHPUT_TARGET = 1.2  # jobs in flight: emulator runs/s over onnxruntime's best, at least
ROUND_SECONDS = 0.5  # the time each measurement aims to take in one round (0.2 with --quick)
WARMUP_RUNS = 2
RSS_RUNS = 3


# -- measurements --------------------------------------------------------------------------------------

def ort_session(path: str, threads: int):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def latencies(run: Callable[[], object], count: int) -> List[float]:
    out = []
    for _ in range(count):
        t0 = time.perf_counter()
        run()
        out.append(time.perf_counter() - t0)
    return out


def emu_throughput(model, x, outs: List[list], jobs: int) -> float:
    """Jobs per second with len(outs) jobs in flight (one set of output tensors each), `jobs` in all."""
    window: collections.deque = collections.deque()
    t0 = time.perf_counter()
    for i in range(jobs):
        if len(window) == len(outs):
            window.popleft().result()
        window.append(model.run_async([x], outputs=outs[i % len(outs)]))
    while window:
        window.popleft().result()
    return jobs / (time.perf_counter() - t0)


def ort_parallel_throughput(pool: ThreadPoolExecutor, run: Callable[[], object], workers: int,
                            jobs: int) -> float:
    """Jobs per second with `workers` threads each calling `run` (onnxruntime releases the GIL)."""
    per = max(1, jobs // workers)
    t0 = time.perf_counter()
    list(pool.map(lambda _: [run() for _ in range(per)], range(workers)))
    return per * workers / (time.perf_counter() - t0)


class Bench:
    """One model, both engines, every measurement; `round()` takes one more sample of each."""

    def __init__(self, onnx_path: Path, accm: bytes, input_name: str, x: np.ndarray, cores: int,
                 round_seconds: float) -> None:
        import accel

        self.cores = cores
        self.dev1 = accel.open("emu:cores=1,threads=1")
        self.devn = accel.open(f"emu:cores={cores},threads=1")  # jobs side by side, one thread each
        self.deva = accel.open("emu")  # one job on every CPU
        self.m1 = self.dev1.load(accm)
        self.mn = self.devn.load(accm)
        self.ma = self.deva.load(accm)
        self.x1 = self.dev1.tensor(x)
        self.xn = self.devn.tensor(x)
        self.xa = self.deva.tensor(x)
        self.out1 = [self.dev1.empty(o.shape, o.dtype) for o in self.m1.outputs]
        # one set of outputs per job in flight, and one for the latency runs
        self.outn = [[self.devn.empty(o.shape, o.dtype) for o in self.mn.outputs] for _ in range(cores)]
        self.outa = [[self.deva.empty(o.shape, o.dtype) for o in self.ma.outputs] for _ in range(3)]
        self.s1 = ort_session(str(onnx_path), 1)
        self.sa = ort_session(str(onnx_path), 0)  # onnxruntime's default intra-op threads
        feed = {input_name: x}
        self.pool = ThreadPoolExecutor(cores)
        self.runs: Dict[str, Callable[[], object]] = {
            "emu1": lambda: self.m1.run([self.x1], outputs=self.out1),
            "ort1": lambda: self.s1.run(None, feed),
            "emua": lambda: self.ma.run([self.xa], outputs=self.outa[-1]),
            "orta": lambda: self.sa.run(None, feed),
        }
        self.samples: Dict[str, List[float]] = collections.defaultdict(list)
        for run in self.runs.values():
            latencies(run, WARMUP_RUNS)
        # how many runs make one round's sample of about round_seconds
        first = float(np.median(latencies(self.runs["emu1"], 1) + latencies(self.runs["ort1"], 1)))
        self.per_round = max(3, int(round_seconds / max(first, 1e-6)))

    def round(self, index: int) -> None:
        keys = list(self.runs) + ["emu_tput_n", "emu_tput_a", "ort_tput"]
        k = index % len(keys)
        for key in keys[k:] + keys[:k]:  # a different engine goes first each round
            if key in self.runs:
                self.samples[key] += latencies(self.runs[key], self.per_round)
            elif key == "emu_tput_n":
                self.samples[key].append(emu_throughput(self.mn, self.xn, self.outn, self.per_round * self.cores))
            elif key == "emu_tput_a":
                self.samples[key].append(emu_throughput(self.ma, self.xa, self.outa[:-1],
                                                        self.per_round * self.cores))
            else:
                self.samples[key].append(ort_parallel_throughput(self.pool, self.runs["ort1"], self.cores,
                                                                 self.per_round * self.cores))

    def result(self) -> Dict[str, float]:
        med = {k: float(np.median(v)) for k, v in self.samples.items()}
        return {
            "emu1_ms": med["emu1"] * 1e3, "ort1_ms": med["ort1"] * 1e3,
            "emua_ms": med["emua"] * 1e3, "orta_ms": med["orta"] * 1e3,
            "emu_tput": max(med["emu_tput_n"], med["emu_tput_a"]),
            "ort_tput": max(1.0 / med["orta"], med["ort_tput"]),
        }

    def close(self) -> None:
        self.pool.shutdown()
        self.dev1.close()
        self.devn.close()
        self.deva.close()


def load_times(onnx_path: Path, input_name: str, shape, accm_path: Path, repeats: int) -> Dict[str, float]:
    """Compile once (ONNX -> .accm), then the median of `repeats` accel loads and ORT session creations."""
    import accel
    from accel import compiler

    t0 = time.perf_counter()
    data = compiler.compile_model(str(onnx_path), {input_name: shape})
    compile_s = time.perf_counter() - t0
    accm_path.write_bytes(data)
    loads, sessions = [], []
    with accel.open("emu:cores=1,threads=1") as dev:
        for _ in range(repeats):
            t0 = time.perf_counter()
            m = dev.load(str(accm_path))
            loads.append(time.perf_counter() - t0)
            del m
            t0 = time.perf_counter()
            s = ort_session(str(onnx_path), 1)
            sessions.append(time.perf_counter() - t0)
            del s
    return {"compile_s": compile_s, "load_ms": float(np.median(loads)) * 1e3,
            "ort_create_ms": float(np.median(sessions)) * 1e3}


# -- peak RSS in child processes -----------------------------------------------------------------------

def peak_kb() -> int:
    """This process's peak RSS in KiB. Linux's ru_maxrss of RUSAGE_SELF starts a child at its parent's
    RSS at fork and keeps that through exec (the benchmark's own RSS, far above a child's); VmHWM is the
    high-water mark of the process's own memory, reset by exec. ru_maxrss where /proc is not there."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def rss_child(engine: str, path: str, shape: List[int]) -> None:
    """Runs in a child: prints {"base_kb", "peak_kb"} as JSON for one engine and one model."""
    if engine == "accel":
        import accel
    else:
        import onnxruntime  # noqa: F401
    base = peak_kb()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    if engine == "accel":
        dev = accel.open("emu:cores=1,threads=1")
        model = dev.load(path)
        xd = dev.tensor(x)
        outs = [dev.empty(o.shape, o.dtype) for o in model.outputs]
        for _ in range(RSS_RUNS):
            model.run([xd], outputs=outs)
    else:
        sess = ort_session(path, 1)
        for _ in range(RSS_RUNS):
            sess.run(None, {sess.get_inputs()[0].name: x})
    peak = peak_kb()
    print(json.dumps({"base_kb": base, "peak_kb": peak}))


def peak_rss_mb(engine: str, path: Path, shape) -> float:
    """The model's peak RSS in MB over the interpreter + imports baseline, in a fresh process."""
    cmd = [sys.executable, __file__, "--rss-child", engine, str(path), ",".join(map(str, shape))]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    r = json.loads(done.stdout.strip().splitlines()[-1])
    return (r["peak_kb"] - r["base_kb"]) / 1024.0


# -- the run -------------------------------------------------------------------------------------------

def geomean(values: List[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main(argv: Optional[List[str]] = None) -> int:
    from models import catalog

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(catalog.MODELS),
                    help=f"comma-separated, from {', '.join(catalog.MODELS)} (default: all)")
    ap.add_argument("--rounds", type=int, help="interleaved rounds (default 5; 2 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="2 rounds of shorter samples, the tests' input sizes (det 320x320), one load repeat")
    ap.add_argument("--rss-child", nargs=3, metavar=("ENGINE", "PATH", "SHAPE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rss_child:
        engine, path, shape = args.rss_child
        rss_child(engine, path, [int(d) for d in shape.split(",")])
        return 0

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in catalog.MODELS]
    if unknown:
        ap.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(catalog.MODELS)}")
    rounds = max(1, args.rounds or (2 if args.quick else 5))
    round_seconds = 0.2 if args.quick else ROUND_SECONDS
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

    import accel
    from accel import compiler

    print(f"{cores} CPUs, load average {os.getloadavg()[0]:.1f} at start; {rounds} rounds; "
          f"times are medians (ms), throughput in runs/s; ratio = emulator / onnxruntime time")
    rows, failures, ratios, all_cpu, tputs = [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            spec = catalog.MODELS[name]
            shape = spec.test_shape if args.quick else spec.bench_shape
            path = catalog.model_path(name)
            accm_path = Path(tmp) / f"{name}.accm"
            try:
                load = load_times(path, spec.input_name, shape, accm_path, 1 if args.quick else 3)
                bench = Bench(path, accm_path.read_bytes(), spec.input_name, spec.make_input(shape), cores,
                              round_seconds)
            except (compiler.CompileError, accel.AccelError) as e:
                failures.append(f"{name}: {type(e).__name__}: {e}")
                print(f"  {failures[-1]}", flush=True)
                continue
            try:
                for r in range(rounds):
                    bench.round(r)
                res = bench.result()
            finally:
                bench.close()
            res.update(load)
            res["emu_rss"] = peak_rss_mb("accel", accm_path, shape)
            res["ort_rss"] = peak_rss_mb("ort", path, shape)
            res["name"] = f"{name} {'x'.join(map(str, shape[2:]))}"
            ratios.append(res["emu1_ms"] / res["ort1_ms"])
            all_cpu.append(res["emua_ms"] / res["orta_ms"])
            tputs.append(res["emu_tput"] / res["ort_tput"])
            rows.append(res)
            print(f"  {name}: done", flush=True)

    print_table(rows, cores)
    for f in failures:
        print(f)
    if ratios:
        def verdict(ok: bool) -> str:
            return "MET" if ok else "MISSED"

        def over(xs: List[float], limit: float) -> str:
            bad = [f"{r['name'].split()[0]} {x:.2f}" for r, x in zip(rows, xs) if x > limit]
            return f"; over {limit}: {', '.join(bad)}" if bad else f"; every model <= {limit}"

        g = geomean(ratios)
        print(f"1 thread, geometric mean of the ratios over {len(ratios)} of {len(names)} model(s): {g:.2f} "
              f"(target <= {TARGET_RATIO}, each <= {TARGET_EACH}): "
              f"{verdict(g <= TARGET_RATIO and max(ratios) <= TARGET_EACH)}{over(ratios, TARGET_EACH)}")
        g = geomean(all_cpu)
        print(f"all CPUs, one job, geometric mean of the latency ratios: {g:.2f} (target <= {ALL_CPU_TARGET}): "
              f"{verdict(g <= ALL_CPU_TARGET and max(all_cpu) <= ALL_CPU_TARGET)}{over(all_cpu, ALL_CPU_TARGET)}")
        g = geomean(tputs)
        low = [f"{r['name'].split()[0]} {x:.2f}" for r, x in zip(rows, tputs) if x < THROUGHPUT_TARGET]
        print(f"jobs in flight, geometric mean of the throughput ratios (emulator runs/s over onnxruntime's): "
              f"{g:.2f} (target >= {THROUGHPUT_TARGET}): {verdict(g >= THROUGHPUT_TARGET)}"
              + (f"; under {THROUGHPUT_TARGET}: {', '.join(low)}" if low else ""))
    print(f"load average {os.getloadavg()[0]:.1f} at the end (above {cores}: other work shared the cores)")
    return 0


def print_table(rows: List[Dict], n: int) -> None:
    if not rows:
        return
    cols = [
        ("model", "name", "{}"),
        ("emu 1c", "emu1_ms", "{:.2f}"), ("ort 1t", "ort1_ms", "{:.2f}"),
        ("ratio", None, "{:.2f}"),
        (f"emu {n}t", "emua_ms", "{:.2f}"), ("ort dflt", "orta_ms", "{:.2f}"),
        ("ratio", None, "{:.2f}"),
        ("emu/s best", "emu_tput", "{:.1f}"), ("ort/s best", "ort_tput", "{:.1f}"),
        ("ratio", None, "{:.2f}"),
        ("compile s", "compile_s", "{:.2f}"), ("load ms", "load_ms", "{:.1f}"),
        ("ort new ms", "ort_create_ms", "{:.1f}"),
        ("emu MB", "emu_rss", "{:.0f}"), ("ort MB", "ort_rss", "{:.0f}"),
    ]
    lines = []
    for r in rows:
        # the three ratios: emulator time over onnxruntime time (for throughput, ort/s over emu/s)
        ratio = iter([r["emu1_ms"] / r["ort1_ms"], r["emua_ms"] / r["orta_ms"], r["ort_tput"] / r["emu_tput"]])
        lines.append([fmt.format(next(ratio) if key is None else r[key]) for _, key, fmt in cols])
    heads = [h for h, _, _ in cols]
    widths = [max(len(h), *(len(line[i]) for line in lines)) for i, h in enumerate(heads)]
    print("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(heads, widths))))
    for line in lines:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths))))


if __name__ == "__main__":
    sys.exit(main())
