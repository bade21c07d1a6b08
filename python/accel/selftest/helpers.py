"""Helpers that checks of several subjects share: comparing outputs with the reference, waiting for the
device's counters to settle, expecting an error, running a call with a time limit, wording."""
from __future__ import annotations

import gc
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Type

import numpy as np

import accel

from .._wording import counted
from .framework import Context, Findings

MIB = 1 << 20


def describe(info: accel.TensorInfo) -> str:
    """A tensor's dtype and shape: "float32[1, 3, 64, 64]"."""
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
        return [f"{counted(len(outputs), 'output')}, {against} gave {len(ctx.reference)}"]
    found = []
    for info, got, want in zip(ctx.model.outputs, outputs, ctx.reference):
        text = difference(np.asarray(got), want, info.name, against)
        if text:
            found.append(text)
    return found


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


def expect_error(f: Findings, what: str, call: Callable[[], Any], cls: Type[BaseException],
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


def in_thread(call: Callable[[], Any], seconds: float) -> Tuple[bool, Any, Optional[BaseException]]:
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
