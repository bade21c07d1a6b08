"""The checks of resources and of the end of a device's life: device memory back to its baseline, the
process's memory growth, latency, and a closed device."""
from __future__ import annotations

import gc
import os
import sys
import time
from typing import List, Optional, Tuple

import numpy as np

import accel

from .framework import DEFAULT_MODEL, CheckFailed, Context, Findings
from .._wording import counted
from .helpers import MIB, compare_outputs, expect_error, settle

# RSS growth allowed over the RSS check's runs: a fixed slack for the allocators, plus a quarter of one
# run's inputs and outputs per run (a run that leaked its copies would exceed it).
RSS_SLACK_BYTES = 4 * MIB
RSS_LEAK_FRACTION = 0.25


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


def _io_bytes(model: accel.Model) -> int:
    return sum(i.size * i.dtype.itemsize for i in model.inputs + model.outputs)


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
    f.summary = (f"{counted(runs, 'run')}: live buffers {baseline['live_buffers']} -> {at_once['live_buffers']}, "
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
    f.summary = (f"{kind} {start / MIB:.1f} -> {end / MIB:.1f} MiB over {counted(s.rss_runs, 'run')} "
                 f"({growth / s.rss_runs:+.0f} B/run; bound {bound / MIB:.1f} MiB)")
    f.expect(growth <= bound, f"{kind} grew by {growth / MIB:.1f} MiB over {counted(s.rss_runs, 'run')}, "
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
    f.summary = f"sync run p50 {p50:.3f} ms, p99 {p99:.3f} ms over {counted(n, 'run')}"
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
        expect_error(f, what, call, accel.ClosedError)
    for text in compare_outputs(held, ctx, "the sync run"):
        f.problem(f"an output held across the close: {text}")
    f.summary = f"{len(f.notes)} of 5 calls raised ClosedError" + (
        "; outputs held across the close intact" if not f.problems else "")
