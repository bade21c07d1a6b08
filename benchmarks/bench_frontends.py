"""The Python front-ends side by side over the same C ABI, in one table measured in one run:

    python benchmarks/bench_frontends.py [--rounds 5] [--quick] [--frontends ctypes,pybind,cffi]

Columns ("engines"): the C loop (benchmarks/c_loop.c), a ctypes binding written the way a user would
(benchmarks/ctypes_accel.py), and the public `accel` API over its pybind11 core and over its cffi core
(ACCEL_FRONTEND=pybind / cffi). Every engine uses the installed package's libaccel.so and emulator
driver, on a device opened with --uri (default emu:cores=1,threads=1), and runs in its own long-lived child
process (a process picks one front-end at import). Rows:

  run_tensors  sync run of a tiny model (x[1,16] -> relu(x @ W + b)[1,8]) on preallocated device
               tensors: model.run(t, outputs=[o]) / accel_run
  run_numpy    the same with a NumPy input and fresh outputs: model.run(x) (alloc, one copy in, alloc, run)
  async        K jobs in flight (--inflight, default 8): K x model.run_async(t, outputs=[o_k]), then
               .result() on each / accel_job_submit with a completion callback, then accel_job_wait
  view         a NumPy view of a 1024x1024 float32 device tensor: np.asarray(t) / accel_buffer_host_ptr
  copy_in      the copy path: model.run(x) with a 1024x1024 float32 NumPy x on a model with that
               input and a tiny output (x[0:1, 0:8])
  memcpy       a copy of the same 4 MiB between two host arrays (np.copyto / memcpy), the reference
               for view and copy_in

Rounds interleave the engines (each round: every row, measured on C, ctypes, pybind11, cffi in turn);
each measurement warms up for --warmup-ms (default 300: the OS takes that long to settle where the
caller and the device's threads run), then times the calls the warm-up rate says fit in --target-ms.
The table gives medians over the rounds and their ratios. Target: cffi within 1.5x of pybind11 per
call (the sync run rows). These machines are noisy: compare the ratios, not the absolute figures.
"""
from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Sequence, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

TINY_IN, TINY_OUT = (1, 16), (1, 8)
BIG_IN = (1024, 1024)
BIG_SLICE = (slice(0, 1), slice(0, 8))

ENGINES = ("c", "ctypes", "pybind", "cffi")
FRONTENDS = ENGINES[1:]
TITLES = {"c": "C loop", "ctypes": "ctypes", "pybind": "pybind11", "cffi": "cffi"}
ROWS: Tuple[Tuple[str, str], ...] = (
    ("run_tensors", "sync run, tiny model, DeviceTensors in and out (µs/call)"),
    ("run_numpy", "sync run, tiny model, NumPy in, fresh output (µs/call)"),
    ("async", "async submit + wait, {k} in flight (µs/job)"),
    ("view", "NumPy view of a 1024x1024 float32 device tensor (µs)"),
    ("copy_in", "sync run with a 1024x1024 float32 NumPy input: the copy path (µs/call)"),
    ("memcpy", "memcpy of the same 4 MiB, host to host (µs)"),
)
PER_CALL = ("run_tensors", "run_numpy")  # the rows the 1.5x target is about
TARGET = 1.5


# ---- the models and their data (made by the parent, shared by every engine) ---------------------------

def _onnx_model(nodes, inputs, outputs, initializers=()):
    from onnx import helper

    m = helper.make_model(helper.make_graph(nodes, "bench", inputs, outputs, list(initializers)),
                          opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def tiny_model(w: np.ndarray, b: np.ndarray):
    """x[1, 16] -> relu(x @ W + b) [1, 8]: almost no compute, so the call path is what is measured."""
    from onnx import TensorProto, helper, numpy_helper

    return _onnx_model(
        [helper.make_node("MatMul", ["x", "w"], ["xw"]), helper.make_node("Add", ["xw", "b"], ["xwb"]),
         helper.make_node("Relu", ["xwb"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(TINY_IN))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(TINY_OUT))],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])


def big_input_model():
    """x[1024, 1024] -> x[0:1, 0:8]: a large input and almost no compute, so the copy in dominates."""
    from onnx import TensorProto, helper, numpy_helper

    consts = [numpy_helper.from_array(np.array(v, np.int64), n)
              for n, v in (("starts", [0, 0]), ("ends", [1, 8]))]
    return _onnx_model(
        [helper.make_node("Slice", ["x", "starts", "ends"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(BIG_IN))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], consts)


class Inputs:
    """Where the parent left the compiled models and their inputs, and what each engine must compute."""

    def __init__(self, folder: Path) -> None:
        self.tiny = folder / "tiny.accm"
        self.big = folder / "big.accm"
        self.tiny_x = folder / "tiny_x.bin"
        self.big_x = folder / "big_x.bin"

    def files(self) -> List[str]:
        return [str(p) for p in (self.tiny, self.big, self.tiny_x, self.big_x)]

    def write(self) -> np.ndarray:
        """Compiles both models, writes them and their inputs; returns the expected outputs (16 floats)."""
        from accel import compiler

        r = np.random.default_rng(1)
        w = r.standard_normal((16, 8)).astype(np.float32)
        b = r.standard_normal(8).astype(np.float32)
        x = r.standard_normal(TINY_IN).astype(np.float32)
        xbig = r.standard_normal(BIG_IN).astype(np.float32)
        self.tiny.write_bytes(compiler.compile_model(tiny_model(w, b)))
        self.big.write_bytes(compiler.compile_model(big_input_model()))
        x.tofile(self.tiny_x)
        xbig.tofile(self.big_x)
        return np.concatenate([np.maximum(x @ w + b, 0).ravel(), xbig[BIG_SLICE].ravel()])


# ---- the Python children ---------------------------------------------------------------------------

Row = Tuple[Callable[[], object], int]  # (one call, jobs per call)


def measure(fn: Callable[[], object], warmup_s: float, target_s: float) -> float:
    """ns per call of fn: warm up for warmup_s (at least one call), then time the calls the warm-up
    rate says fit in target_s (c_loop.c measures the same way)."""
    t0 = time.perf_counter()
    end = t0 + warmup_s
    warm = 0
    while True:
        fn()
        warm += 1
        t = time.perf_counter()
        if t >= end:
            break
    n = max(1, math.ceil(target_s * warm / (t - t0)))
    t0_ns = time.perf_counter_ns()
    for _ in range(n):
        fn()
    return (time.perf_counter_ns() - t0_ns) / n


def api_rows(files: Inputs, uri: str, inflight: int, frontend: str) -> Tuple[Dict[str, Row], List[float]]:
    """The rows through the public API, on the front-end the child was started with."""
    import accel

    if accel.frontend != frontend:
        raise ImportError(f"asked for front-end {frontend!r}, accel selected {accel.frontend!r}")
    x = np.fromfile(files.tiny_x, np.float32).reshape(TINY_IN)
    xbig = np.fromfile(files.big_x, np.float32).reshape(BIG_IN)
    dev = accel.open(uri)
    tiny = dev.load(files.tiny.read_bytes())
    big = dev.load(files.big.read_bytes())
    t_in = dev.tensor(x)
    outs = [dev.empty(TINY_OUT, np.float32)]
    slots = [[dev.empty(TINY_OUT, np.float32)] for _ in range(inflight)]
    t_view = dev.empty(BIG_IN, np.float32)
    dst = np.empty_like(xbig)

    def async_batch() -> None:
        for f in [tiny.run_async(t_in, outputs=o) for o in slots]:
            f.result()

    rows = {
        "run_tensors": (lambda: tiny.run(t_in, outputs=outs), 1),
        "run_numpy": (lambda: tiny.run(x), 1),
        "async": (async_batch, inflight),
        "view": (lambda: np.asarray(t_view), 1),
        "copy_in": (lambda: big.run(xbig), 1),
        "memcpy": (lambda: np.copyto(dst, xbig), 1),
    }
    got = [tiny.run(t_in, outputs=outs)[0], big.run(xbig)[0]]
    assert np.shares_memory(np.asarray(t_view), t_view.numpy())
    return rows, [float(v) for a in got for v in a.ravel()]


def ctypes_rows(files: Inputs, uri: str, inflight: int) -> Tuple[Dict[str, Row], List[float]]:
    """The rows through ctypes_accel, a ctypes binding as a user would write it."""
    import ctypes_accel as ca

    x = np.fromfile(files.tiny_x, np.float32).reshape(TINY_IN)
    xbig = np.fromfile(files.big_x, np.float32).reshape(BIG_IN)
    dev = ca.Device(uri)
    tiny = dev.load(files.tiny.read_bytes())
    big = dev.load(files.big.read_bytes())
    ins = [dev.alloc(tiny.inputs[0].byte_size)]
    ins[0].write(x)
    outs = [dev.alloc(tiny.outputs[0].byte_size)]
    slots = [[dev.alloc(tiny.outputs[0].byte_size)] for _ in range(inflight)]
    b_view = dev.alloc(xbig.nbytes)
    dst = np.empty_like(xbig)
    statuses: List[int] = []

    def async_batch() -> None:
        jobs = [tiny.submit(ins, o, statuses.append) for o in slots]
        for j in jobs:
            j.wait()
            j.release()
        statuses.clear()

    rows = {
        "run_tensors": (lambda: tiny.run_buffers(ins, outs), 1),
        "run_numpy": (lambda: tiny.run([x]), 1),
        "async": (async_batch, inflight),
        "view": (lambda: b_view.numpy(BIG_IN, np.float32), 1),
        "copy_in": (lambda: big.run([xbig]), 1),
        "memcpy": (lambda: np.copyto(dst, xbig), 1),
    }
    tiny.run_buffers(ins, outs)
    got = [outs[0].numpy(TINY_OUT, np.float32), big.run([xbig])[0]]
    return rows, [float(v) for a in got for v in a.ravel()]


def child_main(argv: Sequence[str]) -> int:
    """A Python engine: sets up, prints "ready <outputs>", then serves the commands c_loop.c serves."""
    ap = argparse.ArgumentParser(prog="bench_frontends.py --child")
    ap.add_argument("engine", choices=FRONTENDS)
    ap.add_argument("files", nargs=4)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--inflight", type=int, required=True)
    args = ap.parse_args(argv)
    files = Inputs(Path(args.files[0]).parent)
    if args.engine == "ctypes":
        rows, got = ctypes_rows(files, args.uri, args.inflight)
    else:
        rows, got = api_rows(files, args.uri, args.inflight, args.engine)
    print("ready", " ".join(f"{v:.9g}" for v in got), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        fn, jobs = rows[words[0]]
        ns = measure(fn, float(words[1]) / 1e3, float(words[2]) / 1e3) / jobs
        print(f"{ns:.1f}", flush=True)
    return 0


# ---- the parent --------------------------------------------------------------------------------------

def package_dir() -> Path:
    spec = importlib.util.find_spec("accel")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("bench_frontends: the accel package is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def blas_dir() -> str:
    """scipy-openblas32's lib folder ("" if absent): what the driver needs where its RUNPATH misses it
    (accel/runtime/_blas.py preloads it for Python; the C loop gets it through LD_LIBRARY_PATH)."""
    try:
        import scipy_openblas32
    except ImportError:
        return ""
    return scipy_openblas32.get_lib_dir()


def build_c_loop(out: Path, pkg: Path) -> Path:
    """Compiles c_loop.c against the installed package's libaccel.so (one file: about a second)."""
    exe = out / "c_loop"
    lib = pkg / "lib"
    cmd = [os.environ.get("CC", "cc"), "-O2", "-std=c11", "-Wall", "-Wextra", "-I", str(ROOT / "libaccel" / "include"),
           str(HERE / "c_loop.c"), "-o", str(exe), "-L", str(lib), "-laccel", f"-Wl,-rpath,{lib}", "-lm"]
    subprocess.run(cmd, check=True)
    return exe


class Engine:
    """One engine's long-lived child process, driven one measurement at a time."""

    def __init__(self, name: str, cmd: List[str], env: Dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        self._err = open(log, "w")  # noqa: SIM115 (the child's stderr for the engine's life; closed in close())
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._err,
                                     env=env, text=True)

    def _failure(self, what: str) -> SystemExit:
        self.proc.kill()
        self.proc.wait()
        self._err.flush()
        # The error itself: the last line that is not a traceback's indented frame.
        lines = [line for line in self.log.read_text().splitlines() if line.strip() and not line[0].isspace()]
        err = lines[-1] if lines else "(it printed no error)"
        hint = ""
        if self.name != "c":
            hint = f"\n(leave it out with --frontends {','.join(f for f in FRONTENDS if f != self.name)})"
        return SystemExit(f"bench_frontends: the {TITLES[self.name]} engine {what}:\n{err}{hint}")

    def _reply(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            raise self._failure("stopped")
        return line

    def ready(self) -> List[float]:
        """Waits for the set-up; returns the outputs the engine computed."""
        line = self.proc.stdout.readline()
        if not line.startswith("ready"):
            what = "cannot be imported or set up" if self.name != "c" else "cannot set up"
            raise self._failure(what)
        return [float(v) for v in line.split()[1:]]

    def measure(self, row: str, warmup_ms: float, target_ms: float) -> float:
        self.proc.stdin.write(f"{row} {warmup_ms} {target_ms}\n")
        self.proc.stdin.flush()
        return float(self._reply())

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.close()
            except OSError:
                pass
            self.proc.wait(timeout=30)
        self._err.close()


def start_engines(names: Sequence[str], exe: Path, files: Inputs, args, tmp: Path) -> List[Engine]:
    base = dict(os.environ)
    base.pop("ACCEL_FRONTEND", None)
    engines = []
    for name in names:
        env = dict(base)
        if name == "c":
            cmd = [str(exe), *files.files(), "--uri", args.uri, "--inflight", str(args.inflight)]
            blas = blas_dir()
            if blas:
                env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (blas, env.get("LD_LIBRARY_PATH")) if p)
        else:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", name, *files.files(),
                   "--uri", args.uri, "--inflight", str(args.inflight)]
            if name != "ctypes":
                env["ACCEL_FRONTEND"] = name
        engines.append(Engine(name, cmd, env, tmp / f"{name}.log"))
    return engines


def _fmt(us: float) -> str:
    if us >= 100:
        return f"{us:.0f}"
    if us >= 1:
        return f"{us:.2f}"
    return f"{us:.3f}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x"


def table(med: Dict[str, Dict[str, float]], names: Sequence[str], inflight: int) -> List[str]:
    """The markdown table: medians in µs, then the ratios."""
    pys = [n for n in names if n != "c"]
    both = "pybind" in names and "cffi" in names
    ratio_cols = (["cffi / pybind11"] if both else []) + [f"{TITLES[n]} / C" for n in pys]
    head = ["measurement"] + [TITLES[n] for n in names] + ratio_cols
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for row, label in ROWS:
        cells = [label.format(k=inflight)] + [_fmt(med[n][row] / 1e3) for n in names]
        if both:
            r = med["cffi"][row] / med["pybind"][row]
            verdict = f" ({'met' if r <= TARGET else 'missed'}: target ≤ {TARGET}x)" if row in PER_CALL else ""
            cells.append(f"{r:.2f}x{verdict}")
        cells += [_ratio(med[n][row], med["c"][row]) for n in pys]
        lines.append("| " + " | ".join(cells) + " |")
    for row, label in (("view", "view ÷ memcpy"), ("copy_in", "copy path ÷ memcpy")):
        cells = [label] + [f"{100 * med[n][row] / med[n]['memcpy']:.3f}%" if row == "view"
                           else _ratio(med[n][row], med[n]["memcpy"]) for n in names]
        lines.append("| " + " | ".join(cells + [""] * len(ratio_cols)) + " |")
    jobs = ", ".join(f"{TITLES[n]} {1e9 / med[n]['async']:,.0f}" for n in names)
    lines += ["", f"Async throughput (jobs/s, {inflight} in flight): {jobs}."]
    return lines


def parse_frontends(text: str) -> List[str]:
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in chosen if f not in FRONTENDS]
    if unknown or not chosen:
        raise SystemExit(f"bench_frontends: --frontends takes a comma-separated list of "
                         f"{', '.join(FRONTENDS)}; got {text!r}")
    return ["c"] + [f for f in FRONTENDS if f in chosen]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--child"]:
        return child_main(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5; --quick: 3)")
    ap.add_argument("--warmup-ms", type=float, default=300, help="warm-up per measurement (default 300)")
    ap.add_argument("--target-ms", type=float, default=200, help="timed calls per measurement (default 200 ms)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run of a few seconds: 3 rounds, 20 ms warm-up, 20 ms timed")
    ap.add_argument("--frontends", default="ctypes,pybind,cffi",
                    help="Python columns, a subset of ctypes,pybind,cffi (default all); the C loop always runs")
    ap.add_argument("--inflight", type=int, default=8, help="async jobs in flight (default 8)")
    ap.add_argument("--uri", default="emu:cores=1,threads=1", help="device (default emu:cores=1,threads=1)")
    args = ap.parse_args(argv)
    if args.quick:
        args.rounds, args.warmup_ms, args.target_ms = 3, 20, 20
    if args.rounds < 1 or not 1 <= args.inflight <= 64:
        raise SystemExit("bench_frontends: --rounds must be >= 1 and --inflight from 1 to 64")
    names = parse_frontends(args.frontends)

    pkg = package_dir()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        exe = build_c_loop(tmp, pkg)
        files = Inputs(tmp)
        expected = files.write()
        engines = start_engines(names, exe, files, args, tmp)
        try:
            for e in engines:
                got = np.array(e.ready(), np.float32)
                if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
                    raise SystemExit(f"bench_frontends: the {TITLES[e.name]} engine computed {got}, "
                                     f"expected {expected}")
            res: Dict[str, Dict[str, List[float]]] = {n: {r: [] for r, _ in ROWS} for n in names}
            for _ in range(args.rounds):
                for row, _ in ROWS:
                    for e in engines:
                        res[e.name][row].append(e.measure(row, args.warmup_ms, args.target_ms))
        finally:
            for e in engines:
                e.close()

    med = {n: {r: statistics.median(v) for r, v in rows.items()} for n, rows in res.items()}
    spread = {n: max(max(v) / min(v) for v in rows.values()) for n, rows in res.items()}
    from accel import __version__

    print(f"accel {__version__}, device {args.uri!r}, Python {sys.version.split()[0]}, NumPy {np.__version__}; "
          f"medians of {args.rounds} interleaved rounds, {args.warmup_ms:g} ms warm-up + "
          f"{args.target_ms:g} ms timed per measurement")
    print()
    print("\n".join(table(med, names, args.inflight)))
    print("Worst round-to-round spread (max/min over rounds, any row): "
          + ", ".join(f"{TITLES[n]} {spread[n]:.2f}" for n in names) + ".")
    return 0


if __name__ == "__main__":
    sys.exit(main())
