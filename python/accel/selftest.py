"""``accel selftest``: a conformance run of a device and a model, with a report to attach to a bug.

    accel selftest --device emu:cores=2                    # the emulator and the bundled tiny CNN
    accel selftest --device bpu:0 --model net.hbm --json report.json
    accel selftest --device vart:0 --model net.xmodel --quick

Each check (``CHECKS``, in order; docs/selftest.md says what each one does) ends PASS; FAIL, when it found
the device or the runtime not doing what accel promises; ERROR, when something raised that the check did
not expect (a device error in the middle of a run, say); or SKIP, when it needs what an earlier check
failed to make (no device, no model). The exit code is 0 when every check passed, 1 otherwise, 2 for a
usage error. From Python: ``report = run_selftest("emu:cores=2")``, then ``report.exit_code`` and
``report.to_dict()``.
"""
from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import datetime
import gc
import hashlib
import json
import os
import platform
import re
import sys
import threading
import time
import traceback
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, TextIO, Tuple

import numpy as np

import accel

__all__ = ["CHECKS", "Check", "CheckFailed", "CheckResult", "Findings", "Report", "Settings", "FULL",
           "QUICK", "DEFAULT_MODEL", "run_selftest", "register", "command"]

PASS, FAIL, ERROR, SKIP = "PASS", "FAIL", "ERROR", "SKIP"
#: The report's format, in the JSON's ``format`` field.
REPORT_FORMAT = "accel-selftest/1"
PACKAGE_DIR = Path(accel.__file__).resolve().parent
#: The model the emulator runs when no ``--model`` is given.
DEFAULT_MODEL = PACKAGE_DIR / "models" / "tiny_cnn.onnx"
MIB = 1 << 20
# A timeout so short that a job nearly always times out; 1 µs is the shortest the API can express.
TINY_TIMEOUT_S = 1e-6
# A timeout no job of a conformance run comes near.
GENEROUS_TIMEOUT_S = 60.0
# RSS growth allowed over the RSS check's runs: a fixed slack for the allocators, plus a quarter of one
# run's inputs and outputs per run (a run that leaked its copies would exceed it).
RSS_SLACK_BYTES = 4 * MIB
RSS_LEAK_FRACTION = 0.25
STATS_KEYS = ("bytes_in_use", "peak_bytes_in_use", "live_buffers", "allocations", "bytes_copied",
              "jobs_submitted", "jobs_completed")


@dataclass(frozen=True)
class Settings:
    """How much work each check does (``FULL`` by default, ``QUICK`` with ``--quick``)."""

    repeats: int  # determinism: reruns of the first input
    async_jobs: int
    threads: int
    runs_per_thread: int
    leak_runs: int
    rss_warmup: int
    rss_runs: int
    latency_runs: int
    check_timeout: float  # seconds a check may take before it is reported as hung


FULL = Settings(repeats=5, async_jobs=16, threads=4, runs_per_thread=25, leak_runs=200, rss_warmup=100,
                rss_runs=2000, latency_runs=500, check_timeout=120.0)
QUICK = Settings(repeats=2, async_jobs=4, threads=2, runs_per_thread=5, leak_runs=30, rss_warmup=20,
                 rss_runs=300, latency_runs=50, check_timeout=120.0)


class CheckFailed(Exception):
    """Raised by a check that cannot go on: the device or runtime did not do what accel promises."""


class Findings:
    """What one check found: a one-line summary, notes (information), problems (each one a FAIL) and
    data for the JSON report. ``problem`` may be called from several threads at once."""

    def __init__(self) -> None:
        self.summary = ""
        self.notes: List[str] = []
        self.problems: List[str] = []
        self.data: Dict[str, Any] = {}

    def note(self, text: str) -> None:
        """Adds a line of information to the report."""
        self.notes.append(text)

    def problem(self, text: str) -> None:
        """Records a problem: the check will FAIL."""
        self.problems.append(text)

    def expect(self, condition: bool, text: str) -> bool:
        """Records ``text`` as a problem unless ``condition`` holds; returns ``condition``."""
        if not condition:
            self.problem(text)
        return condition


class Context:
    """What the checks share: the arguments, and what earlier checks made (device, model, inputs and the
    reference outputs of the first sync run)."""

    def __init__(self, uri: str, model_path: Optional[Path], settings: Settings) -> None:
        self.uri = uri
        self.scheme = uri.split(":", 1)[0]
        self.model_path = model_path
        self.settings = settings
        self.device: Optional[accel.Device] = None
        self.model: Optional[accel.Model] = None
        self.inputs: Optional[List[np.ndarray]] = None
        self.reference: Optional[List[np.ndarray]] = None


@dataclass(frozen=True)
class Check:
    """One check: ``run(context, findings)``; ``needs`` names the Context attributes it uses."""

    name: str
    run: Callable[[Context, Findings], None]
    needs: Tuple[str, ...]
    title: str


@dataclass
class CheckResult:
    """The outcome of one check, as the report shows it."""

    name: str
    status: str
    seconds: float
    summary: str = ""
    notes: List[str] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)
    data: Dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------
# helpers of the checks
# ---------------------------------------------------------------------------------------------------

def random_inputs(infos: Sequence[accel.TensorInfo], seed: int) -> List[np.ndarray]:
    """Deterministic inputs: normal floats, random bits for bool, the full range of 8- and 16-bit
    integers, and small non-negative 32- and 64-bit integers (those are usually indices or sizes)."""
    rng = np.random.default_rng(seed)
    return [_random_array(rng, i.shape, i.dtype) for i in infos]


def _random_array(rng: np.random.Generator, shape: Tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.itemsize >= 4:
        return rng.integers(0, 16, size=shape).astype(dtype)
    limits = np.iinfo(dtype)
    return rng.integers(limits.min, limits.max, size=shape, dtype=dtype, endpoint=True)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _describe(info: accel.TensorInfo) -> str:
    return f"{info.dtype}[{', '.join(str(d) for d in info.shape)}]"


def difference(got: np.ndarray, want: np.ndarray, name: str, against: str) -> Optional[str]:
    """None if ``got`` is bit-identical to ``want``, else a sentence saying how they differ."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return (f"output {name!r} is {got.dtype}{list(got.shape)}, {against} gave "
                f"{want.dtype}{list(want.shape)}")
    a, b = np.ascontiguousarray(got), np.ascontiguousarray(want)
    if a.tobytes() == b.tobytes():
        return None
    bits = np.dtype(f"u{a.dtype.itemsize}") if a.dtype.itemsize in (1, 2, 4, 8) else None
    differ = int(np.count_nonzero(a.view(bits) != b.view(bits))) if bits is not None else -1
    text = f"output {name!r} differs from {against} in {differ} of {a.size} elements"
    if a.dtype.kind in "fiu":
        gap = np.abs(a.astype(np.float64) - b.astype(np.float64))
        gap = gap[np.isfinite(gap)]
        if gap.size:
            text += f" (largest difference {float(gap.max()):.3g})"
    return text


def compare_outputs(outputs: Sequence[np.ndarray], ctx: Context, against: str) -> List[str]:
    """The differences of ``outputs`` from the context's reference outputs (empty if identical)."""
    assert ctx.model is not None and ctx.reference is not None
    if len(outputs) != len(ctx.reference):
        return [f"{len(outputs)} outputs, {against} gave {len(ctx.reference)}"]
    found = []
    for info, got, want in zip(ctx.model.outputs, outputs, ctx.reference):
        text = difference(np.asarray(got), want, info.name, against)
        if text:
            found.append(text)
    return found


def _io_bytes(model: accel.Model) -> int:
    return sum(i.size * i.dtype.itemsize for i in model.inputs + model.outputs)


def settle(device: accel.Device, baseline: Optional[Dict[str, int]] = None, timeout: float = 5.0,
           still: float = 0.25) -> Dict[str, int]:
    """Collects garbage until the device counts every submitted job as completed and, given a
    ``baseline`` (a stats dict), live buffers and bytes in use are back to it; or until its stats have
    not moved for ``still`` seconds with every job completed; or ``timeout`` passes. Returns the last
    stats. (A Future completes inside its job's completion callback, a moment before the device counts
    the job completed and drops its buffers.)"""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while True:
        gc.collect()
        s = device.stats()
        now = time.monotonic()
        if s != last:
            last, since = s, now
        done = s["jobs_completed"] >= s["jobs_submitted"]
        if done and (baseline is None or (s["live_buffers"] <= baseline["live_buffers"]
                                          and s["bytes_in_use"] <= baseline["bytes_in_use"])):
            return s
        if (done and now - since >= still) or now > deadline:
            return s
        time.sleep(0.01)


def rss_bytes() -> Tuple[Optional[int], str]:
    """The process's resident memory and what it is: the current RSS on Linux, else the peak RSS
    (``getrusage``), which only grows; ``(None, why)`` where neither is available."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE"), "RSS"
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
    except ImportError:
        return None, "no RSS on this platform"
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak * (1 if sys.platform == "darwin" else 1024), "peak RSS"


def _expect_error(f: Findings, what: str, call: Callable[[], Any], cls: type,
                  names: Sequence[str] = ()) -> None:
    """Records a problem unless ``call()`` raises ``cls`` whose message names one of ``names``."""
    try:
        call()
    except cls as e:
        message = str(e)
        if names and not any(repr(n) in message or n in message for n in names):
            f.problem(f"{what}: {type(e).__name__} does not name {', '.join(map(repr, names))}: {message!r}")
        else:
            f.note(f"{what}: {type(e).__name__}: {message}")
        return
    except Exception as e:  # the wrong class is the finding
        f.problem(f"{what}: expected accel.{cls.__name__}, got {type(e).__module__}.{type(e).__name__}: {e}")
        return
    f.problem(f"{what}: no error raised (expected accel.{cls.__name__})")


def _in_thread(call: Callable[[], Any], seconds: float) -> Tuple[bool, Any, Optional[BaseException]]:
    """Runs ``call`` in a daemon thread for at most ``seconds``: ``(finished, result, exception)``."""
    box: Dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = call()
        except BaseException as e:  # handed to the caller
            box["error"] = e

    t = threading.Thread(target=target, daemon=True, name="accel-selftest-call")
    t.start()
    t.join(seconds)
    return (not t.is_alive(), box.get("result"), box.get("error"))


# ---------------------------------------------------------------------------------------------------
# the checks, in the order they run
# ---------------------------------------------------------------------------------------------------

def _header_abi() -> Optional[Tuple[int, int]]:
    header = PACKAGE_DIR / "include" / "accel" / "accel.h"
    try:
        text = header.read_text()
    except OSError:
        return None
    major = re.search(r"#define\s+ACCEL_ABI_VERSION_MAJOR\s+(\d+)", text)
    minor = re.search(r"#define\s+ACCEL_ABI_VERSION_MINOR\s+(\d+)", text)
    return (int(major.group(1)), int(minor.group(1))) if major and minor else None


def _driver_files() -> List[str]:
    folders = [d for d in os.environ.get("ACCEL_DRIVER_PATH", "").split(os.pathsep) if d]
    folders.append(str(PACKAGE_DIR / "lib" / "accel-drivers"))
    found = []
    for folder in folders:
        try:
            found += sorted(str(p) for p in Path(folder).glob("libaccel_driver_*.so"))
        except OSError:
            continue
    return found


def environment_facts() -> Dict[str, Any]:
    """What a bug report needs to know about the installation and the machine."""
    abi = accel.abi_version()
    header_abi = _header_abi()
    return dict(
        accel_version=accel.__version__, library_version=accel.library_version(),
        abi=(abi >> 16, abi & 0xFFFF), abi_version="%d.%d" % (abi >> 16, abi & 0xFFFF), header_abi=header_abi,
        header_abi_version=None if header_abi is None else "%d.%d" % header_abi,
        frontend=accel.frontend, frontend_features=dict(accel.frontend_features),
        python=sys.version.split()[0], python_implementation=platform.python_implementation(),
        platform=platform.platform(), machine=platform.machine(), cpu_count=os.cpu_count(),
        numpy=np.__version__, backends=accel.backends(), driver_files=_driver_files(),
        environment={k: v for k, v in sorted(os.environ.items()) if k.startswith("ACCEL_")})


def check_environment(ctx: Context, f: Findings) -> None:
    """Versions, front-end, platform, the drivers found; FAIL if no driver serves the URI's scheme or
    libaccel's ABI major version is not the one the package was built for."""
    f.data.update(environment_facts())
    d = f.data
    runtime_abi, header_abi, backends = d["abi"], d["header_abi"], d["backends"]
    features = [k for k, v in d["frontend_features"].items() if v is True]
    fallback = d["frontend_features"].get("fallback_reason")
    f.summary = (f"accel {d['accel_version']}, libaccel {d['library_version']}, ABI {d['abi_version']}, "
                 f"front-end {d['frontend']}, Python {d['python']}, drivers: {', '.join(backends) or 'none'}")
    f.note(f"front-end {d['frontend']} ({', '.join(features)})" + (f"; {fallback}" if fallback else ""))
    f.note(f"platform {d['platform']} ({d['machine']}, {d['cpu_count']} CPUs), "
           f"{d['python_implementation']} {d['python']}, NumPy {d['numpy']}")
    f.note("driver files: " + (", ".join(d["driver_files"]) or "none"))
    if d["environment"]:
        f.note("environment: " + " ".join(f"{k}={v}" for k, v in d["environment"].items()))
    if header_abi is None:
        f.note("accel.h is not installed with the package: the ABI version is not compared")
    elif header_abi[0] != runtime_abi[0] or runtime_abi[1] < header_abi[1]:
        f.problem(f"libaccel's ABI is {d['abi_version']} but the package was built for "
                  f"{d['header_abi_version']}")
    f.expect(ctx.scheme in backends,
             f"no usable driver for {ctx.scheme!r} (usable: {', '.join(backends) or 'none'}); put "
             f"libaccel_driver_{ctx.scheme}.so in a folder named by ACCEL_DRIVER_PATH")


def check_open_device(ctx: Context, f: Findings) -> None:
    """Opens the device and reads its info and stats; FAIL on info that cannot be right."""
    t0 = time.perf_counter()
    ctx.device = device = accel.open(ctx.uri)
    f.data["open_ms"] = (time.perf_counter() - t0) * 1e3
    i = device.info
    f.data["info"] = asdict(i)
    f.summary = (f"{i.name!r}: backend {i.backend}, {i.cores} cores, max_inflight {i.max_inflight}, "
                 f"alignment {i.alignment}, pool {i.pool_bytes / MIB:.0f} MiB"
                 + (", debug" if i.debug else "") + f", opened in {f.data['open_ms']:.1f} ms")
    f.expect(i.backend == ctx.scheme, f"backend {i.backend!r} opened for URI scheme {ctx.scheme!r}")
    f.expect(i.cores >= 1, f"{i.cores} cores")
    f.expect(i.max_inflight >= 1, f"max_inflight {i.max_inflight}")
    f.expect(i.alignment >= 1 and i.alignment & (i.alignment - 1) == 0,
             f"alignment {i.alignment} is not a power of two")
    stats = device.stats()
    f.data["stats"] = stats
    f.expect(sorted(stats) == sorted(STATS_KEYS),
             f"stats keys {sorted(stats)}, expected {sorted(STATS_KEYS)}")
    f.expect(all(v >= 0 for v in stats.values()), f"negative stats: {stats}")


def check_load_model(ctx: Context, f: Findings) -> None:
    """Loads the model (an ONNX model compiles first on the emulator); FAIL if it has no input or
    no output."""
    assert ctx.device is not None
    path = ctx.model_path if ctx.model_path is not None else DEFAULT_MODEL
    data = path.read_bytes()
    f.data.update(path=str(path), bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    t0 = time.perf_counter()
    ctx.model = model = ctx.device.load(str(path))
    f.data["load_ms"] = (time.perf_counter() - t0) * 1e3
    f.summary = (f"{path.name} ({len(data)} bytes) in {f.data['load_ms']:.1f} ms: "
                 f"{_count(len(model.inputs), 'input')}, {_count(len(model.outputs), 'output')}")
    f.note(f"sha256 {f.data['sha256']}")
    f.expect(len(model.inputs) >= 1, "the model has no inputs")
    f.expect(len(model.outputs) >= 1, "the model has no outputs")


def _quant_text(q: Optional[accel.Quantization]) -> str:
    if q is None:
        return "not quantized"
    parts = [q.type]
    if q.axis is not None:
        parts.append(f"axis {q.axis}")
    if q.scales:
        parts.append(f"scales {list(q.scales)[:4]}{'...' if len(q.scales) > 4 else ''}")
    if q.zero_points is not None:
        parts.append(f"zero points {list(q.zero_points)[:4]}{'...' if len(q.zero_points) > 4 else ''}")
    if q.shifts is not None:
        parts.append(f"shifts {list(q.shifts)[:4]}")
    return ", ".join(parts)


def tensor_problems(info: accel.TensorInfo) -> List[str]:
    """What cannot be right in one tensor's metadata: strides that overlap or do not fit the byte size,
    a layout on a tensor that is not 4-D, quantization parameters that do not match the shape."""
    found = []
    what = f"{info.name!r}"
    itemsize = info.dtype.itemsize
    if not info.name:
        found.append("a tensor has an empty name")
    if any(d < 0 for d in info.shape):
        found.append(f"{what}: negative dimension in {info.shape}")
    if len(info.strides) != len(info.shape):
        found.append(f"{what}: {len(info.strides)} strides for {len(info.shape)} dimensions")
    elif info.size > 0:
        # Non-overlapping: sorted by stride, each dimension steps past the whole extent of the one inside.
        extent = itemsize
        for stride, dim in sorted((s, d) for s, d in zip(info.strides, info.shape) if d > 1):
            if stride < extent:
                found.append(f"{what}: strides {info.strides} overlap for shape {info.shape}")
                break
            extent = stride * dim
        span = sum((d - 1) * s for d, s in zip(info.shape, info.strides)) + itemsize
        if info.nbytes < span:
            found.append(f"{what}: {info.nbytes} bytes cannot hold shape {info.shape} with strides "
                         f"{info.strides} ({span} bytes)")
    if info.nbytes < info.size * itemsize:
        found.append(f"{what}: {info.nbytes} bytes for {info.size} elements of {itemsize} bytes")
    if info.layout is not None and len(info.shape) != 4:
        found.append(f"{what}: layout {info.layout} on a {len(info.shape)}-D tensor")
    if info.quant is not None:
        found += _quant_problems(info)
    return found


def _quant_problems(info: accel.TensorInfo) -> List[str]:
    q = info.quant
    assert q is not None
    what = f"{info.name!r}"
    found = []
    if info.dtype.kind not in "iu":
        found.append(f"{what}: quantized ({q.type}) but of dtype {info.dtype}")
    if q.type == "per_tensor" and len(q.scales) != 1:
        found.append(f"{what}: per-tensor quantization with {len(q.scales)} scales")
    if q.type == "per_axis":
        if q.axis is None or not 0 <= q.axis < len(info.shape):
            found.append(f"{what}: per-axis quantization on axis {q.axis} of a {len(info.shape)}-D tensor")
        elif len(q.scales) != info.shape[q.axis]:
            found.append(f"{what}: {len(q.scales)} scales for axis {q.axis} of size {info.shape[q.axis]}")
    if q.type == "shift" and not q.shifts:
        found.append(f"{what}: shift quantization with no shifts")
    if not all(np.isfinite(s) and s > 0 for s in q.scales):
        found.append(f"{what}: scales must be finite and > 0: {q.scales}")
    if q.zero_points is not None and len(q.zero_points) != len(q.scales):
        found.append(f"{what}: {len(q.zero_points)} zero points for {len(q.scales)} scales")
    return found


def check_introspection(ctx: Context, f: Findings) -> None:
    """Prints every input and output (dtype, shape, strides, layout, byte size, quantization); FAIL on
    duplicate names or metadata that cannot be right (``tensor_problems``)."""
    assert ctx.model is not None
    f.data["inputs"], f.data["outputs"] = [], []
    for kind, infos in (("input", ctx.model.inputs), ("output", ctx.model.outputs)):
        names = [i.name for i in infos]
        f.expect(len(set(names)) == len(names), f"duplicate {kind} names: {names}")
        for i in infos:
            padded = "" if i.dense else " (padded)"
            f.note(f"{kind} {i.name!r}: {_describe(i)} layout {i.layout or 'none'}, strides "
                   f"{list(i.strides)}, {i.nbytes} bytes{padded}, {_quant_text(i.quant)}")
            f.data[kind + "s"].append(dict(asdict(i), dtype=str(i.dtype), dense=i.dense))
            for text in tensor_problems(i):
                f.problem(text)
    f.summary = ("(" + ", ".join(_describe(i) for i in ctx.model.inputs) + ") -> ("
                 + ", ".join(_describe(o) for o in ctx.model.outputs) + ")")


def check_sync_run(ctx: Context, f: Findings) -> None:
    """One sync run on seeded random inputs; FAIL if the outputs are not the model's count, shapes and
    dtypes, or a float output is not finite. Its outputs are the reference of later checks."""
    assert ctx.model is not None
    model = ctx.model
    inputs = random_inputs(model.inputs, seed=0)
    t0 = time.perf_counter()
    outputs = model.run(inputs)
    f.data["run_ms"] = (time.perf_counter() - t0) * 1e3
    if not f.expect(len(outputs) == len(model.outputs),
                    f"{len(outputs)} outputs for a model with {len(model.outputs)}"):
        return
    f.data["outputs"] = []
    usable = True
    for info, out in zip(model.outputs, outputs):
        out = np.asarray(out)
        if not f.expect(out.shape == info.shape and out.dtype == info.dtype,
                        f"output {info.name!r} is {out.dtype}{list(out.shape)}, expected {_describe(info)}"):
            usable = False
            continue
        bad = int(np.count_nonzero(~np.isfinite(out))) if out.dtype.kind == "f" else 0
        f.expect(bad == 0, f"output {info.name!r} has {bad} non-finite values of {out.size}")
        values = out.astype(np.float64)
        f.note(f"{info.name!r}: {_describe(info)} min {values.min():.6g} max {values.max():.6g} "
               f"mean {values.mean():.6g}" if out.size else f"{info.name!r}: empty")
        f.data["outputs"].append({"name": info.name, "non_finite": bad,
                                  "sha256": hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()})
    if usable:
        ctx.inputs = inputs
        ctx.reference = [np.array(o, copy=True) for o in outputs]
    f.summary = (f"{_count(len(outputs), 'output')} in {f.data['run_ms']:.2f} ms"
                 + ("" if f.problems else ", finite"))


def check_determinism(ctx: Context, f: Findings) -> None:
    """Reruns the reference inputs, each time after a run on other inputs; FAIL unless every rerun is
    bit-identical to the first run."""
    assert ctx.model is not None and ctx.inputs is not None
    other = random_inputs(ctx.model.inputs, seed=1)
    repeats = ctx.settings.repeats
    for r in range(1, repeats + 1):
        ctx.model.run(other)
        for text in compare_outputs(ctx.model.run(ctx.inputs), ctx, "the first run"):
            f.problem(f"repeat {r}: {text}")
    f.summary = f"{repeats} repeats, interleaved with other inputs: " + (
        "bit-identical" if not f.problems else f"{len(f.problems)} differences")


def check_async_runs(ctx: Context, f: Findings) -> None:
    """Submits N runs with ``run_async`` and waits for them with ``result()`` and with ``await``; FAIL
    unless each agrees bit for bit with the sync run."""
    assert ctx.model is not None and ctx.inputs is not None
    n = ctx.settings.async_jobs
    limit = ctx.settings.check_timeout
    t0 = time.perf_counter()
    futures = [ctx.model.run_async(ctx.inputs) for _ in range(n)]
    for k, fut in enumerate(futures):
        for text in compare_outputs(fut.result(timeout=limit), ctx, "the sync run"):
            f.problem(f"future {k}: {text}")
    f.data["seconds_result"] = time.perf_counter() - t0

    async def gather() -> List[List[np.ndarray]]:
        return list(await asyncio.gather(*(ctx.model.run_async(ctx.inputs) for _ in range(2))))

    for k, outputs in enumerate(asyncio.run(asyncio.wait_for(gather(), limit))):
        for text in compare_outputs(outputs, ctx, "the sync run"):
            f.problem(f"awaited future {k}: {text}")
    f.summary = f"{n} futures + 2 awaited: " + ("agree with the sync run" if not f.problems
                                               else f"{len(f.problems)} differences")


def check_concurrency(ctx: Context, f: Findings) -> None:
    """Several threads run the model at once (released together by a barrier); FAIL unless every result
    agrees bit for bit with the sync run and no thread raised."""
    assert ctx.model is not None and ctx.inputs is not None
    model, inputs = ctx.model, ctx.inputs
    threads, runs = ctx.settings.threads, ctx.settings.runs_per_thread
    barrier = threading.Barrier(threads)

    def worker(t: int) -> None:
        barrier.wait()
        for r in range(runs):
            for text in compare_outputs(model.run(inputs), ctx, "the sync run"):
                f.problem(f"thread {t} run {r}: {text}")

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(threads, thread_name_prefix="accel-selftest") as pool:
        for t, fut in enumerate([pool.submit(worker, t) for t in range(threads)]):
            error = fut.exception(timeout=ctx.settings.check_timeout)
            if error is not None:
                f.problem(f"thread {t} raised {type(error).__name__}: {error}")
    seconds = time.perf_counter() - t0
    f.data.update(threads=threads, runs_per_thread=runs, runs_per_second=threads * runs / seconds)
    f.summary = (f"{threads} threads x {runs} runs, {f.data['runs_per_second']:.0f} runs/s: "
                 + ("identical" if not f.problems else f"{len(f.problems)} problems"))


def check_inflight(ctx: Context, f: Findings) -> None:
    """Submits max_inflight + 2 jobs at once (the last ones wait for a free slot); FAIL unless all
    complete, agree with the sync run, and the device counts every one of them."""
    assert ctx.device is not None and ctx.model is not None and ctx.inputs is not None
    limit = ctx.device.info.max_inflight
    n = min(limit, 256) + 2
    before = settle(ctx.device)
    futures = [ctx.model.run_async(ctx.inputs) for _ in range(n)]
    pending = sum(not fut.done() for fut in futures)
    for k, fut in enumerate(futures):
        for text in compare_outputs(fut.result(timeout=ctx.settings.check_timeout), ctx, "the sync run"):
            f.problem(f"job {k}: {text}")
    after = settle(ctx.device)
    submitted = after["jobs_submitted"] - before["jobs_submitted"]
    completed = after["jobs_completed"] - before["jobs_completed"]
    f.expect(submitted == n, f"the device counted {submitted} jobs submitted, {n} were")
    f.expect(completed == n, f"the device counted {completed} jobs completed of {n}")
    f.data.update(max_inflight=limit, jobs=n, pending_after_submit=pending)
    f.summary = (f"{n} jobs for max_inflight {limit} ({pending} still pending when the last was "
                 f"submitted): " + ("all agree" if not f.problems else f"{len(f.problems)} problems"))


def _tiny_timeout_outcome(ctx: Context, f: Findings, what: str, outputs: Any,
                          error: Optional[BaseException]) -> str:
    if error is None:
        for text in compare_outputs(outputs, ctx, "the sync run"):
            f.problem(f"{what}: completed, but {text}")
        return "completed"
    if isinstance(error, accel.TimeoutError):
        return "timed out"
    f.problem(f"{what}: expected completion or accel.TimeoutError, got {type(error).__name__}: {error}")
    return "failed"


def check_timeouts(ctx: Context, f: Findings) -> None:
    """Runs with a 1 µs timeout (sync, then async) must each complete or raise accel.TimeoutError within
    the check's time limit; a run with a generous timeout and a plain run afterwards must give the
    reference outputs (the device is still usable)."""
    assert ctx.model is not None and ctx.inputs is not None
    model, inputs, limit = ctx.model, ctx.inputs, ctx.settings.check_timeout
    finished, outputs, error = _in_thread(lambda: model.run(inputs, timeout=TINY_TIMEOUT_S), limit)
    if not f.expect(finished, f"a sync run with a {TINY_TIMEOUT_S * 1e6:g} µs timeout hung ({limit:g} s)"):
        return
    outcomes = {"sync": _tiny_timeout_outcome(ctx, f, "sync run", outputs, error)}
    errors = [error]
    futures = [model.run_async(inputs, timeout=TINY_TIMEOUT_S) for _ in range(4)]
    for k, fut in enumerate(futures):
        done, _ = concurrent.futures.wait([fut], timeout=limit)
        if not f.expect(bool(done), f"async run {k} with a tiny timeout hung ({limit:g} s)"):
            return
        errors.append(fut.exception())
        outcomes[f"async {k}"] = _tiny_timeout_outcome(ctx, f, f"async run {k}",
                                                       None if errors[-1] else fut.result(), errors[-1])
    for text in compare_outputs(model.run(inputs, timeout=GENEROUS_TIMEOUT_S), ctx, "the sync run"):
        f.problem(f"run with a {GENEROUS_TIMEOUT_S:g} s timeout: {text}")
    for text in compare_outputs(model.run(inputs), ctx, "the sync run"):
        f.problem(f"run after the timeouts: {text}")
    f.data["outcomes"] = outcomes
    counts = {o: list(outcomes.values()).count(o) for o in sorted(set(outcomes.values()))}
    f.summary = (f"{TINY_TIMEOUT_S * 1e6:g} µs timeout: " + ", ".join(f"{v} {k}" for k, v in counts.items())
                 + ("; device usable afterwards" if not f.problems else ""))
    for e in errors:
        if isinstance(e, accel.TimeoutError):
            f.note(f"the timeout's message: {e}")
            break


def _wrong_dtype(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.int32) if dtype.kind == "f" else np.dtype(np.float32)


def check_error_paths(ctx: Context, f: Findings) -> None:
    """A wrong shape (sync and async), a wrong dtype, one input too many and an unknown input name must
    raise ShapeError, DTypeError and InvalidArgumentError naming the input; FAIL otherwise."""
    assert ctx.model is not None
    model = ctx.model
    inputs = random_inputs(model.inputs, seed=2)
    first = model.inputs[0]
    names = [i.name for i in model.inputs]
    bigger = first.shape[:-1] + (first.shape[-1] + 1,) if first.shape else (2,)
    bad_shape = list(inputs)
    bad_shape[0] = np.zeros(bigger, first.dtype)
    bad_dtype = list(inputs)
    bad_dtype[0] = inputs[0].astype(_wrong_dtype(first.dtype))
    _expect_error(f, "wrong shape", lambda: model.run(bad_shape), accel.ShapeError, [first.name])
    _expect_error(f, "wrong shape (async)", lambda: model.run_async(bad_shape), accel.ShapeError,
                  [first.name])
    _expect_error(f, "wrong dtype", lambda: model.run(bad_dtype), accel.DTypeError, [first.name])
    _expect_error(f, "one input too many", lambda: model.run(inputs + [inputs[0]]),
                  accel.InvalidArgumentError, names)
    unknown = dict(zip(names, inputs), not_an_input_of_this_model=inputs[0])
    _expect_error(f, "unknown input name", lambda: model.run(unknown), accel.InvalidArgumentError,
                  ["not_an_input_of_this_model"])
    f.summary = f"{len(f.notes)} of 5 errors raised as expected"


def _run_at_once(model: accel.Model, inputs: List[np.ndarray], n: int, limit: float) -> None:
    """Submits ``n`` runs, then waits for them all; keeps none of their outputs."""
    for fut in [model.run_async(inputs) for _ in range(n)]:
        fut.result(timeout=limit)


def check_device_memory(ctx: Context, f: Findings) -> None:
    """N sync runs and N/4 async runs one at a time, then N/4 async runs at once, dropping the outputs;
    FAIL unless the device's live buffers return to what they were before, and its bytes in use too
    after the one-at-a-time runs (a device may keep a workspace per job running at once, made on first
    use, so bytes in use after the runs at once are information)."""
    assert ctx.device is not None and ctx.model is not None and ctx.inputs is not None
    device, model, inputs, limit = ctx.device, ctx.model, ctx.inputs, ctx.settings.check_timeout
    n = ctx.settings.leak_runs
    baseline = settle(device)
    for _ in range(n):
        model.run(inputs)
    for _ in range(max(1, n // 4)):
        model.run_async(inputs).result(timeout=limit)
    one_at_a_time = settle(device, baseline)
    _run_at_once(model, inputs, max(1, n // 4), limit)
    at_once = settle(device, baseline)
    runs = n + 2 * max(1, n // 4)
    f.data.update(baseline=baseline, one_at_a_time=one_at_a_time, after=at_once, runs=runs)
    for what, after in (("one at a time", one_at_a_time), ("at once", at_once)):
        f.expect(after["live_buffers"] <= baseline["live_buffers"],
                 f"live buffers {baseline['live_buffers']} -> {after['live_buffers']} after the runs {what}")
    f.expect(one_at_a_time["bytes_in_use"] <= baseline["bytes_in_use"],
             f"bytes in use {baseline['bytes_in_use']} -> {one_at_a_time['bytes_in_use']} after the runs "
             f"one at a time")
    f.note(f"bytes in use after the runs at once: {at_once['bytes_in_use']}")
    copied = (at_once["bytes_copied"] - baseline["bytes_copied"]) / runs
    f.note(f"the runtime copied {copied:.0f} bytes per run (inputs: {sum(a.nbytes for a in inputs)} bytes)")
    f.summary = (f"{runs} runs: live buffers {baseline['live_buffers']} -> {at_once['live_buffers']}, "
                 f"bytes in use {baseline['bytes_in_use']} -> {one_at_a_time['bytes_in_use']}")


def check_rss(ctx: Context, f: Findings) -> None:
    """The process's RSS over many sync runs after a warm-up; FAIL if it grows by more than
    RSS_SLACK_BYTES plus a quarter of one run's input and output bytes per run."""
    assert ctx.model is not None and ctx.inputs is not None
    model, inputs, s = ctx.model, ctx.inputs, ctx.settings
    for _ in range(s.rss_warmup):
        model.run(inputs)
    gc.collect()
    start, kind = rss_bytes()
    if start is None:
        raise CheckFailed(kind)
    for _ in range(s.rss_runs):
        model.run(inputs)
    gc.collect()
    end, _ = rss_bytes()
    assert end is not None
    growth = end - start
    bound = RSS_SLACK_BYTES + int(s.rss_runs * _io_bytes(model) * RSS_LEAK_FRACTION)
    f.data.update(kind=kind, start=start, end=end, growth=growth, bound=bound, runs=s.rss_runs)
    f.summary = (f"{kind} {start / MIB:.1f} -> {end / MIB:.1f} MiB over {s.rss_runs} runs "
                 f"({growth / s.rss_runs:+.0f} B/run; bound {bound / MIB:.1f} MiB)")
    f.expect(growth <= bound, f"{kind} grew by {growth / MIB:.1f} MiB over {s.rss_runs} runs, "
                              f"more than {bound / MIB:.1f} MiB")


def check_latency(ctx: Context, f: Findings) -> None:
    """For information: p50/p90/p99 of sync runs (wall clock), and the device's own run time of a few
    profiled runs. FAIL only if a run's outputs differ from the sync run."""
    assert ctx.model is not None and ctx.inputs is not None
    model, inputs = ctx.model, ctx.inputs
    n = ctx.settings.latency_runs
    ms = np.empty(n)
    for k in range(n):
        t0 = time.perf_counter()
        outputs = model.run(inputs)
        ms[k] = (time.perf_counter() - t0) * 1e3
        for text in compare_outputs(outputs, ctx, "the sync run"):
            f.problem(f"run {k}: {text}")
    with accel.profile() as p:
        for _ in range(min(n, 50)):
            model.run(inputs)
    run_ms = np.asarray([r.run_ns for r in p.records if r.status == 0], dtype=np.float64) / 1e6
    p50, p90, p99 = (float(v) for v in np.percentile(ms, [50, 90, 99]))
    f.data.update(runs=n, p50_ms=p50, p90_ms=p90, p99_ms=p99, min_ms=float(ms.min()),
                  max_ms=float(ms.max()), mean_ms=float(ms.mean()),
                  device_run_p50_ms=float(np.median(run_ms)) if run_ms.size else None)
    f.summary = f"sync run p50 {p50:.3f} ms, p99 {p99:.3f} ms over {n} runs"
    f.note(f"min {ms.min():.3f} ms, p90 {p90:.3f} ms, max {ms.max():.3f} ms, mean {ms.mean():.3f} ms")
    if run_ms.size:
        f.note(f"time on a core (device timing, profiled runs): p50 {np.median(run_ms):.3f} ms")


def check_closed_device(ctx: Context, f: Findings) -> None:
    """Closes the device: run, run_async, stats, empty and load must raise ClosedError, and outputs read
    before the close must stay readable and unchanged; FAIL otherwise. (It runs last.)"""
    assert ctx.device is not None and ctx.model is not None and ctx.inputs is not None
    device, model, inputs = ctx.device, ctx.model, ctx.inputs
    held = model.run(inputs)
    device.close()
    device.close()  # idempotent
    path = str(ctx.model_path or DEFAULT_MODEL)
    for what, call in (("run", lambda: model.run(inputs)), ("run_async", lambda: model.run_async(inputs)),
                       ("stats", device.stats), ("empty", lambda: device.empty((1,))),
                       ("load", lambda: device.load(path))):
        _expect_error(f, what, call, accel.ClosedError)
    for text in compare_outputs(held, ctx, "the sync run"):
        f.problem(f"an output held across the close: {text}")
    f.summary = f"{len(f.notes)} of 5 calls raised ClosedError" + (
        "; outputs held across the close intact" if not f.problems else "")


#: The checks, in the order they run. ``needs``: what an earlier check must have made.
CHECKS: Tuple[Check, ...] = (
    Check("environment", check_environment, (), "versions, front-end, platform, drivers"),
    Check("open_device", check_open_device, (), "open the device, read info and stats"),
    Check("load_model", check_load_model, ("device",), "load the model"),
    Check("introspection", check_introspection, ("model",), "inputs and outputs, metadata sanity"),
    Check("sync_run", check_sync_run, ("model",), "one sync run: counts, shapes, dtypes, finite"),
    Check("determinism", check_determinism, ("reference",), "repeats are bit-identical"),
    Check("async_runs", check_async_runs, ("reference",), "run_async agrees with run"),
    Check("concurrency", check_concurrency, ("reference",), "threads at once agree"),
    Check("inflight", check_inflight, ("device", "reference"), "max_inflight jobs in flight"),
    Check("timeouts", check_timeouts, ("reference",), "tiny timeouts complete or raise, never hang"),
    Check("error_paths", check_error_paths, ("model",), "bad inputs raise the right errors"),
    Check("device_memory", check_device_memory, ("device", "reference"), "buffers back to baseline"),
    Check("rss", check_rss, ("reference",), "process memory growth, bounded"),
    Check("latency", check_latency, ("reference",), "p50/p99 of sync runs"),
    Check("closed_device", check_closed_device, ("device", "reference"), "a closed device raises"),
)
_MADE_BY = {"device": "open_device", "model": "load_model", "reference": "sync_run"}


# ---------------------------------------------------------------------------------------------------
# running the checks, and the report
# ---------------------------------------------------------------------------------------------------

@dataclass
class Report:
    """The results of a run, in check order; ``hung`` names a check that never finished."""

    uri: str
    model: str
    quick: bool
    started: str
    results: List[CheckResult] = field(default_factory=list)
    seconds: float = 0.0
    hung: Optional[str] = None

    def counts(self) -> Dict[str, int]:
        """How many checks ended with each status."""
        return {s: sum(r.status == s for r in self.results) for s in (PASS, FAIL, ERROR, SKIP)}

    @property
    def passed(self) -> bool:
        """True when every check passed."""
        return bool(self.results) and all(r.status == PASS for r in self.results)

    @property
    def exit_code(self) -> int:
        """0 when every check passed, 1 otherwise."""
        return 0 if self.passed else 1

    def result(self, name: str) -> CheckResult:
        """The result of the check called ``name``."""
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    def to_dict(self) -> Dict[str, Any]:
        """The whole report as JSON-ready data (``format`` says its version)."""
        return {"format": REPORT_FORMAT, "result": PASS if self.passed else FAIL, "exit_code": self.exit_code,
                "device": self.uri, "model": self.model, "quick": self.quick, "started": self.started,
                "seconds": self.seconds, "hung": self.hung, "counts": self.counts(),
                "checks": [asdict(r) for r in self.results]}

    def write_json(self, path: "os.PathLike[str] | str") -> None:
        """Writes :meth:`to_dict` to ``path`` as JSON."""
        with open(path, "w", encoding="utf-8") as out:
            json.dump(self.to_dict(), out, indent=2, default=_jsonable)
            out.write("\n")

    def header(self) -> str:
        """The report's first line: device, model, mode, start time."""
        return (f"accel selftest: device {self.uri!r}, model {self.model}"
                f"{' (quick)' if self.quick else ''}, started {self.started}")

    def footer(self) -> str:
        """The report's last line: the counts and the result."""
        c = self.counts()
        text = (f"{c[PASS]} passed, {c[FAIL]} failed, {c[ERROR]} errors, {c[SKIP]} skipped in "
                f"{self.seconds:.2f} s: {PASS if self.passed else FAIL}")
        return text + (f" (check {self.hung!r} hung)" if self.hung else "")


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (np.dtype, Path)):
        return str(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    return repr(value)


def format_result(r: CheckResult) -> str:
    """A check's lines in the text report: status, name, time and summary, then notes and problems."""
    lines = [f"{r.status:<6} {r.name:<14} {r.seconds * 1e3:9.1f} ms  {r.summary}".rstrip()]
    lines += [f"{'':23}{n}" for n in r.notes]
    lines += [f"{'':21}! {p}" for p in r.problems]
    return "\n".join(lines)


def _skip_reason(check: Check, ctx: Context, report: Report) -> Optional[str]:
    if report.hung:
        return f"not run: check {report.hung!r} did not finish"
    missing = [n for n in check.needs if getattr(ctx, n) is None]
    if missing:
        return f"not run: needs the {missing[0]} that {_MADE_BY[missing[0]]} makes"
    return None


def run_check(check: Check, ctx: Context, report: Report) -> CheckResult:
    """Runs one check in a worker thread, at most ``settings.check_timeout`` seconds."""
    reason = _skip_reason(check, ctx, report)
    if reason:
        return CheckResult(check.name, SKIP, 0.0, reason)
    f = Findings()
    t0 = time.perf_counter()
    finished, _, error = _in_thread(lambda: check.run(ctx, f), ctx.settings.check_timeout)
    seconds = time.perf_counter() - t0
    status = PASS
    if not finished:
        report.hung = check.name
        f.problem(f"did not finish within {ctx.settings.check_timeout:g} s")
    elif isinstance(error, CheckFailed):
        f.problem(str(error))
    elif error is not None:
        status = ERROR
        f.summary = f"{type(error).__name__}: {error}"
        f.data["traceback"] = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        f.notes.append(f"at {traceback.extract_tb(error.__traceback__)[-1].name}(), "
                       f"see the JSON report's traceback")
    if status == PASS and f.problems:
        status = FAIL
        f.summary = f.summary or f.problems[0]
    return CheckResult(check.name, status, seconds, f.summary, f.notes, list(f.problems), f.data)


def run_selftest(uri: str, model: "Optional[os.PathLike[str] | str]" = None, *, quick: bool = False,
                 check_timeout: Optional[float] = None, out: Optional[TextIO] = None,
                 checks: Sequence[Check] = CHECKS) -> Report:
    """Runs ``checks`` on the device at ``uri`` with ``model`` (default: the bundled tiny CNN, which
    only the emulator can load) and returns the :class:`Report`; each result is written to ``out`` as
    it comes."""
    settings = QUICK if quick else FULL
    if check_timeout is not None:
        settings = replace(settings, check_timeout=float(check_timeout))
    path = Path(model) if model is not None else None
    ctx = Context(uri, path, settings)
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    report = Report(uri, str(path or DEFAULT_MODEL), quick, started)
    _emit(out, report.header())
    t0 = time.perf_counter()
    try:
        for check in checks:
            result = run_check(check, ctx, report)
            report.results.append(result)
            _emit(out, format_result(result))
    finally:
        if ctx.device is not None and not report.hung:
            ctx.device.close()
    report.seconds = time.perf_counter() - t0
    _emit(out, report.footer())
    return report


def _emit(out: Optional[TextIO], text: str) -> None:
    if out is not None:
        out.write(text + "\n")
        out.flush()


# ---------------------------------------------------------------------------------------------------
# the `accel selftest` subcommand
# ---------------------------------------------------------------------------------------------------

def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``selftest`` to the ``accel`` command's subparsers (see accel.cli)."""
    p = subparsers.add_parser(
        "selftest", help="check that a device and a model work as accel promises",
        description="Runs conformance checks on a device (a board or the emulator) and prints a report "
                    "to attach to a bug. Exit code: 0 all passed, 1 a check failed, 2 usage error.")
    p.add_argument("--device", required=True, metavar="URI",
                   help="the device: emu[:options], bpu:0, vart:0, ...")
    p.add_argument("--model", metavar="PATH",
                   help="the model to run (required except on the emulator, which runs the bundled "
                        "tiny CNN by default): .hbm/.bin on BPU, .xmodel on VART, .onnx or .accm on emu")
    p.add_argument("--json", metavar="REPORT.json", help="also write the full report as JSON")
    p.add_argument("--quick", action="store_true", help="fewer runs per check")
    p.add_argument("--check-timeout", type=float, default=FULL.check_timeout, metavar="SECONDS",
                   help=f"report a check as hung after this long (default {FULL.check_timeout:g})")
    p.set_defaults(handler=command)
    return p


def usage_problem(args: argparse.Namespace) -> Optional[str]:
    """What is wrong with the arguments before anything runs, or None."""
    scheme = args.device.split(":", 1)[0]
    if not scheme:
        return f"--device {args.device!r} has no scheme: use emu, bpu:0, vart:0, ..."
    if args.model is None and scheme != "emu":
        return (f"--model is required for --device {args.device!r}: the bundled ONNX model compiles only "
                f"for the emulator; pass a model compiled for the board (.hbm/.bin on BPU, .xmodel on VART)")
    if args.model is not None and scheme != "emu" and args.model.lower().endswith(".onnx"):
        return (f"--model {args.model!r} is ONNX, which compiles only for the emulator; pass a model "
                f"compiled for {scheme!r} with the vendor's toolchain")
    if args.model is not None and not Path(args.model).is_file():
        return f"--model {args.model!r}: no such file"
    if args.json is not None and not Path(args.json).resolve().parent.is_dir():
        return f"--json {args.json!r}: no such folder"
    if not args.check_timeout > 0:
        return f"--check-timeout must be > 0 seconds, got {args.check_timeout:g}"
    return None


def command(args: argparse.Namespace) -> int:
    """``accel selftest``: runs the checks, prints the report, writes the JSON; returns the exit code."""
    from .cli import UsageError

    problem = usage_problem(args)
    if problem:
        raise UsageError(problem)
    report = run_selftest(args.device, args.model, quick=args.quick, check_timeout=args.check_timeout,
                          out=sys.stdout)
    if args.json:
        report.write_json(args.json)
        print(f"report written to {args.json}")
    if report.hung:
        # A hung job may never let the device close or the interpreter finalize: leave at once.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(report.exit_code)
    return report.exit_code
