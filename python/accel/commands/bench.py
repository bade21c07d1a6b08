"""``accel bench``: latency of single runs and throughput with several jobs in flight, on random inputs."""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .._wording import counted
from ..cli import UsageError
from .common import (add_device_option, add_image_input_option, add_input_shape_option, add_max_pixels_option,
                     describe_tensors, existing_file, image_inputs, input_shapes, number_arg, reports_failures,
                     writable_path)
from .progress import ProgressBar
from .run import feeds, load_fed, read_inputs

DEFAULT_SECONDS = 2.0
DEFAULT_TOP = 10
# The options' ranges: past them a phase would never end (or a count would overflow the job counters), so they are
# usage errors rather than a bench that runs until killed.
MIN_SECONDS, MAX_SECONDS = 1e-3, 86400.0
MAX_RUNS = 10**9
MAX_JOBS = 4096
# The emulator's hint= values (emulator/src/device.cc), in the order --hint both measures them.
HINTS = ("latency", "throughput")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Adds ``bench`` to the ``accel`` command's subparsers (see accel.cli)."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "bench", help="latency and throughput of a model on a device",
        description="Runs a model on random inputs of its dtypes (token ids and other indices valid for it; or "
                    "those --input gives): first one job at a "
                    "time (latency p50 and p99), then with --jobs jobs in flight (throughput), each phase for "
                    f"--seconds or --runs runs (default {DEFAULT_SECONDS:g} s). Exit code: 0 ok, 1 failure, 2 usage "
                    "error.")
    p.add_argument("model", metavar="MODEL", help="the model: .onnx (emulator) or compiled (.accm, ...)")
    add_device_option(p)
    p.add_argument("--jobs", type=number_arg(int, 1, MAX_JOBS), default=None, metavar="N",
                   help="jobs in flight in the throughput phase (default: the device's cores; with --hint, "
                        "Model.optimal_jobs on each hint's device)")
    p.add_argument("--hint", choices=(*HINTS, "both"), default=None,
                   help="the emulator's performance hint: measure on --device with hint=latency (one job at a time "
                        "on every CPU), hint=throughput (one job per CPU), or each in turn (both), and print each "
                        "one's figures (default: the device as --device gives it)")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--seconds", type=number_arg(float, MIN_SECONDS, MAX_SECONDS), metavar="S",
                       help="how long each phase runs")
    limit.add_argument("--runs", type=number_arg(int, 1, MAX_RUNS), metavar="N",
                       help="how many runs each phase makes")
    p.add_argument("--trace", metavar="TRACE.json", help="write a Chrome trace of every job (accel.profile)")
    p.add_argument("--ops", action="store_true",
                   help="time every node (layer) of every job and print the per-op-type table and the slowest "
                        "nodes after the figures (accel.profile(ops=True); the trace then nests them in each job)")
    p.add_argument("--top", type=number_arg(int, 1), default=None, metavar="N",
                   help=f"with --ops: how many of the slowest nodes to print (default {DEFAULT_TOP})")
    p.add_argument("--progress", action="store_true", help="show the progress bar even if stderr is not a TTY")
    p.add_argument("--json", action="store_true", help="print the results as one JSON object")
    p.add_argument("--input", action="append", default=[], metavar="[NAME=]FILE",
                   help="an input instead of a random one: FILE.npy, or a picture for an image input or a float "
                        "input (as accel run takes them; repeatable)")
    add_input_shape_option(p)
    add_image_input_option(p)
    add_max_pixels_option(p)
    p.set_defaults(handler=command)
    return p


def usage_problem(args: argparse.Namespace) -> Optional[str]:
    if args.top is not None and not args.ops:
        return "--top is a count of layers to print: it needs --ops"
    if args.hint == "both" and args.trace is not None:
        return "--trace writes one device's jobs: give --hint latency or --hint throughput with it, not both"
    return None


def hinted_devices(device: str, hint: Optional[str]) -> List[str]:
    """The devices bench measures: ``device`` itself without a hint; with one, ``device`` with ``hint=`` added for
    each mode it names (a URI that sets hint= itself is a usage error: which would be measured?)."""
    if hint is None:
        return [device]
    from accel.runtime.device_uri import parse_uri

    uri = parse_uri(device)
    if "hint" in uri.keys:
        raise UsageError(f"--hint {hint}: the device {device!r} sets hint= already")
    return [str(uri.with_option("hint", mode)) for mode in (HINTS if hint == "both" else (hint,))]


def as_input(value: Any, info: Any) -> Any:
    """A given input in the input's own shape where it has its size (a frame (H * 3/2, W) for (1, H * 3/2, W, 1)),
    so the runs measured take the common path; anything else as it is, for Model.run to word."""
    a = np.asarray(value)
    return np.ascontiguousarray(a).reshape(info.shape) if a.size == info.size and a.dtype == info.dtype else value


class Limit:
    """When a phase ends: after ``runs`` runs, or ``seconds`` after it started."""

    def __init__(self, runs: Optional[int], seconds: Optional[float]) -> None:
        self.runs = runs
        self.seconds = seconds if seconds is not None else 0.0  # read only when runs is None
        self.start = time.perf_counter()

    def progress(self, done: int) -> float:
        """How far the phase is, in its limit's unit: runs made, or seconds since it started."""
        return done if self.runs is not None else time.perf_counter() - self.start

    def reached(self, done: int) -> bool:
        return self.progress(done) >= (self.runs if self.runs is not None else self.seconds)

    def bar(self, phase: str, enabled: bool) -> ProgressBar:
        """The phase's progress bar on stderr, cleared when it closes (the figures follow on stdout)."""
        if self.runs is not None:
            return ProgressBar(self.runs, sys.stderr, desc=phase, unit=" runs", enabled=enabled, leave=False)
        return ProgressBar(self.seconds, sys.stderr, desc=phase, unit="s", enabled=enabled, leave=False,
                           bar_format="{l_bar}{bar}| {elapsed}<{remaining}")


def measure_latency(run: Callable[[], Any], limit: Limit, progress: ProgressBar) -> List[float]:
    """Seconds of each synchronous run until the limit."""
    latencies: List[float] = []
    while not limit.reached(len(latencies)):
        t0 = time.perf_counter()
        run()
        latencies.append(time.perf_counter() - t0)
        progress.update_to(limit.progress(len(latencies)))
    progress.finish()
    return latencies


def measure_throughput(submit: Callable[[], Any], jobs: int, limit: Limit,
                       progress: ProgressBar) -> Tuple[int, float]:
    """``(runs, seconds)`` with ``jobs`` jobs kept in flight until the limit, then drained."""
    in_flight: collections.deque[Any] = collections.deque()
    submitted = done = 0
    while not limit.reached(submitted):
        while len(in_flight) < jobs and not limit.reached(submitted):
            in_flight.append(submit())
            submitted += 1
        if in_flight:
            in_flight.popleft().result()
            done += 1
        progress.update_to(limit.progress(submitted))
    for fut in in_flight:
        fut.result()
        done += 1
    progress.finish()
    return done, time.perf_counter() - limit.start


def in_flight(jobs: int, cores: int) -> str:
    """The jobs in flight of the throughput phase, and, when they outnumber the device's cores, that the others
    queue: a figure for 4 jobs on 1 core is not 4 runs at once."""
    text = f"{counted(jobs, 'job')} in flight"
    if jobs <= cores:
        return text
    waiting = jobs - cores
    return f"{text} on {counted(cores, 'core')}: {waiting} {'waits' if waiting == 1 else 'wait'} in the device's queue"


def bench_device(args: argparse.Namespace, device: str, path: Any, seconds: Optional[float], show: bool,
                 default_jobs: Callable[[Any], int]) -> Tuple[Dict[str, Any], Any]:
    """Measures the model on ``device``: its figures (bench's JSON object) and the profile of its runs."""
    import accel
    from accel.comparison.index_inputs import index_limits
    from accel.comparison.inputs import random_array

    with accel.open(device) as dev, accel.profile(ops=args.ops) as prof:
        pictures_or_arrays = read_inputs(args.input, args.max_pixels)
        model = load_fed(dev, path, input_shapes(args.input_shape), None, image_inputs(args.image_input),
                         pictures_or_arrays, "bench")
        rng = np.random.default_rng(0)
        given = feeds(model, pictures_or_arrays)
        limits = index_limits([path])
        x = [as_input(given[i.name], i) if i.name in given else random_array(i, rng, limits.get(i.name))
             for i in model.inputs]
        info = dev.info
        jobs = args.jobs or default_jobs(model)
        model.run(x)  # warm-up: first-run costs are not latency
        prof.clear()
        limit = Limit(args.runs, seconds)
        with limit.bar("latency", show) as bar:
            latencies = measure_latency(lambda: model.run(x), limit, bar)
        limit = Limit(args.runs, seconds)
        with limit.bar("throughput", show) as bar:
            runs, elapsed = measure_throughput(lambda: model.run_async(x), jobs, limit, bar)
    p50, p99 = (float(v) * 1e3 for v in np.percentile(latencies, [50, 99]))
    result = {"model": str(path), "device": device, "inputs": describe_tensors(model.inputs),
              "latency_runs": len(latencies), "latency_p50_ms": p50, "latency_p99_ms": p99,
              "jobs": jobs, "cores": info.cores, "throughput_runs": runs, "throughput_per_s": runs / elapsed}
    if info.hint:
        result.update(hint=info.hint, threads=info.threads)
    return result, prof


def print_figures(result: Dict[str, Any], path: Any, hinted: bool) -> None:
    """The figures of one device, as lines; ``hinted`` (--hint given): with the cores and threads the hint chose,
    so that the modes' figures read side by side."""
    where = result["device"]
    if hinted and "hint" in result:
        where += f" ({counted(result['cores'], 'core')} x {counted(result['threads'], 'thread')})"
    print(f"{path.name} on {where}: inputs {result['inputs']}")
    print(f"latency: p50 {result['latency_p50_ms']:.3f} ms, p99 {result['latency_p99_ms']:.3f} ms "
          f"({counted(result['latency_runs'], 'run')}, one at a time)")
    print(f"throughput: {result['throughput_per_s']:.1f} runs/s ({counted(result['throughput_runs'], 'run')}, "
          f"{in_flight(result['jobs'], result['cores'])})")


@reports_failures("bench")
def command(args: argparse.Namespace) -> int:
    """``accel bench``: measures, prints the figures, writes the trace; returns the exit code."""
    problem = usage_problem(args)
    if problem:
        raise UsageError(problem)
    path = existing_file("MODEL", args.model)
    trace_path = writable_path("--trace", args.trace) if args.trace else None
    seconds = args.seconds if args.seconds is not None or args.runs is not None else DEFAULT_SECONDS
    show = args.progress or sys.stderr.isatty()
    devices = hinted_devices(args.device, args.hint)
    # Without a hint the throughput phase keeps a job per core in flight, as it always has; with one, the jobs the
    # hint's device says keep its cores busy (Model.optimal_jobs), as an application on it would.
    default_jobs: Callable[[Any], int] = ((lambda model: model.device.info.cores) if args.hint is None
                                          else (lambda model: model.optimal_jobs))
    measured = [bench_device(args, device, path, seconds, show, default_jobs) for device in devices]
    top = args.top or DEFAULT_TOP
    for result, prof in measured:
        if args.ops:
            result["ops"] = [dataclasses.asdict(s) for s in prof.op_stats().values()]
            result["slowest_nodes"] = [dataclasses.asdict(s) for s in prof.slowest_nodes(top)]
        if trace_path is not None:
            prof.export_chrome_trace(trace_path)
            result["trace"] = str(trace_path)
    if args.json:
        if len(measured) == 1:
            print(json.dumps(measured[0][0], indent=2))
        else:
            print(json.dumps({"model": str(path), "hints": [r for r, _ in measured]}, indent=2))
        return 0
    for n, (result, prof) in enumerate(measured):
        if n:
            print()
        print_figures(result, path, args.hint is not None)
        if args.ops:
            table = prof.ops_summary(top)
            print(table if table else f"\nper-layer times: {result['device']} cannot time a model's nodes")
        if trace_path is not None:
            print(f"trace written to {trace_path} ({counted(len(prof), 'job')})")
    if len(measured) == 2:
        lat, tput = (r for r, _ in measured)
        print(f"\nthroughput hint against latency hint: {tput['throughput_per_s'] / lat['throughput_per_s']:.2f}x "
              f"the runs/s, {tput['latency_p50_ms'] / lat['latency_p50_ms']:.2f}x the p50 latency of one run")
    return 0
