"""The checks that run the model: one sync run (the reference), determinism, async runs, threads at
once, max_inflight jobs in flight, tiny timeouts, and the errors of bad inputs."""
from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import threading
import time
from typing import Any, List, Optional

import numpy as np

import accel

from ..comparison.index_inputs import index_limits
from ..comparison.inputs import random_array
from .framework import DEFAULT_MODEL, Context, Findings
from .._wording import counted
from .helpers import compare_outputs, describe, expect_error, in_thread, settle

# A timeout so short that a job nearly always times out; 1 µs is the shortest the API can express.
TINY_TIMEOUT_S = 1e-6
# A timeout no job of a conformance run comes near.
GENEROUS_TIMEOUT_S = 60.0


def random_inputs(ctx: Context, seed: int) -> List[np.ndarray]:
    """Deterministic inputs for the model under test, as accel compare draws them
    (accel.comparison.inputs.random_array): token ids and other positions valid for the model and for
    --compare's ONNX model."""
    assert ctx.model is not None
    if ctx.index_limits is None:
        models = [ctx.model_path or DEFAULT_MODEL] + ([ctx.compare_model] if ctx.compare_model else [])
        ctx.index_limits = index_limits(models)
    rng = np.random.default_rng(seed)
    return [random_array(i, rng, ctx.index_limits.get(i.name)) for i in ctx.model.inputs]


def check_sync_run(ctx: Context, f: Findings) -> None:
    """One sync run on seeded random inputs; FAIL if the outputs are not the model's count, shapes and
    dtypes, or a float output is not finite. Its outputs are the reference of later checks."""
    assert ctx.model is not None
    model = ctx.model
    inputs = random_inputs(ctx, seed=0)
    t0 = time.perf_counter()
    outputs = model.run(inputs)
    f.data["run_ms"] = (time.perf_counter() - t0) * 1e3
    if not f.expect(len(outputs) == len(model.outputs),
                    f"{counted(len(outputs), 'output')} for a model with {len(model.outputs)}"):
        return
    f.data["outputs"] = []
    usable = True
    for info, out in zip(model.outputs, outputs):
        out = np.asarray(out)
        if not f.expect(out.shape == info.shape and out.dtype == info.dtype,
                        f"output {info.name!r} is {out.dtype}{list(out.shape)}, expected {describe(info)}"):
            usable = False
            continue
        bad = int(np.count_nonzero(~np.isfinite(out))) if out.dtype.kind == "f" else 0
        f.expect(bad == 0, f"output {info.name!r} has {bad} non-finite values of {out.size}")
        values = out.astype(np.float64)
        f.note(f"{info.name!r}: {describe(info)} min {values.min():.6g} max {values.max():.6g} "
               f"mean {values.mean():.6g}" if out.size else f"{info.name!r}: empty")
        f.data["outputs"].append({"name": info.name, "non_finite": bad,
                                  "sha256": hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()})
    if usable:
        ctx.inputs = inputs
        ctx.reference = [np.array(o, copy=True) for o in outputs]
        t0 = time.perf_counter()  # the run time the later checks are fitted to, without first-run costs
        model.run(inputs)
        ctx.run_seconds = min(time.perf_counter() - t0, f.data["run_ms"] / 1e3)
        f.data["second_run_ms"] = ctx.run_seconds * 1e3
    f.summary = (f"{counted(len(outputs), 'output')} in {f.data['run_ms']:.2f} ms"
                 + ("" if f.problems else ", finite"))


def check_determinism(ctx: Context, f: Findings) -> None:
    """Reruns the reference inputs, each time after a run on other inputs; FAIL unless every rerun is
    bit-identical to the first run."""
    assert ctx.model is not None and ctx.inputs is not None
    other = random_inputs(ctx, seed=1)
    repeats = ctx.settings.repeats
    for r in range(1, repeats + 1):
        ctx.model.run(other)
        for text in compare_outputs(ctx.model.run(ctx.inputs), ctx, "the first run"):
            f.problem(f"repeat {r}: {text}")
    f.summary = f"{counted(repeats, 'repeat')}, interleaved with other inputs: " + (
        "bit-identical" if not f.problems else counted(len(f.problems), "difference"))


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

    model, inputs = ctx.model, ctx.inputs  # narrowed (not None) inside gather too

    async def gather() -> List[List[np.ndarray]]:
        return list(await asyncio.gather(*(model.run_async(inputs) for _ in range(2))))

    for k, outputs in enumerate(asyncio.run(asyncio.wait_for(gather(), limit))):
        for text in compare_outputs(outputs, ctx, "the sync run"):
            f.problem(f"awaited future {k}: {text}")
    f.summary = f"{counted(n, 'future')} + 2 awaited: " + ("agree with the sync run" if not f.problems
                                               else counted(len(f.problems), "difference"))


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
    f.summary = (f"{counted(threads, 'thread')} x {counted(runs, 'run')}, {f.data['runs_per_second']:.0f} runs/s: "
                 + ("identical" if not f.problems else counted(len(f.problems), "problem")))


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
    f.expect(submitted == n, f"the device counted {counted(submitted, 'job')} submitted, {n} were")
    f.expect(completed == n, f"the device counted {counted(completed, 'job')} completed of {n}")
    f.data.update(max_inflight=limit, jobs=n, pending_after_submit=pending)
    f.summary = (f"{n} jobs for max_inflight {limit} ({pending} still pending when the last was "
                 f"submitted): " + ("all agree" if not f.problems else counted(len(f.problems), "problem")))


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
    finished, outputs, error = in_thread(lambda: model.run(inputs, timeout=TINY_TIMEOUT_S), limit)
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
    inputs = random_inputs(ctx, seed=2)
    first = model.inputs[0]
    names = [i.name for i in model.inputs]
    bigger = first.shape[:-1] + (first.shape[-1] + 1,) if first.shape else (2,)
    bad_shape = list(inputs)
    bad_shape[0] = np.zeros(bigger, first.dtype)
    bad_dtype = list(inputs)
    bad_dtype[0] = inputs[0].astype(_wrong_dtype(first.dtype))
    expect_error(f, "wrong shape", lambda: model.run(bad_shape), accel.ShapeError, [first.name])
    expect_error(f, "wrong shape (async)", lambda: model.run_async(bad_shape), accel.ShapeError,
                  [first.name])
    expect_error(f, "wrong dtype", lambda: model.run(bad_dtype), accel.DTypeError, [first.name])
    expect_error(f, "one input too many", lambda: model.run(inputs + [inputs[0]]),
                  accel.InvalidArgumentError, names)
    unknown = dict(zip(names, inputs), not_an_input_of_this_model=inputs[0])
    expect_error(f, "unknown input name", lambda: model.run(unknown), accel.InvalidArgumentError,
                  ["not_an_input_of_this_model"])
    f.summary = f"{len(f.notes)} of 5 errors raised as expected"
