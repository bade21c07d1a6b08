"""Per-job profiling: ``accel.profile()`` collects the device's own timing of every job.

    with accel.profile() as p:
        for _ in range(100):
            model.run(x)
    print(p.summary())
    p.export_chrome_trace("trace.json")     # chrome://tracing, https://ui.perfetto.dev

Profiles are process wide and nest: while several are active, each job is recorded in all of them,
whichever thread ran it. With no profile active, a run costs one truth test of a module global.
"""
from __future__ import annotations

import json
import os
import threading
from typing import Any, Dict, Iterator, List, NamedTuple, Tuple, Union

from ._forksafe import ForkSafeLock

__all__ = ["JobRecord", "Profile", "profile"]


class JobRecord(NamedTuple):
    """One job's timing, as the device measured it (CLOCK_MONOTONIC nanoseconds)."""

    #: The model's name (``Model.name``).
    model: str
    #: The device's URI (``Device.uri``).
    device: str
    #: When the job was submitted.
    queued_ns: int
    #: When a core started it; 0 if it never ran.
    started_ns: int
    #: When it finished; 0 if it has not.
    finished_ns: int
    #: The core that ran it; -1 if it never ran.
    core: int
    #: The job's status code: 0 on success (see ``accel.errors``).
    status: int = 0

    @property
    def latency_ns(self) -> int:
        """Submission to completion (``finished_ns - queued_ns``)."""
        return self.finished_ns - self.queued_ns if self.finished_ns else 0

    @property
    def run_ns(self) -> int:
        """Time on the core (``finished_ns - started_ns``); 0 if it never ran."""
        return self.finished_ns - self.started_ns if self.started_ns and self.finished_ns else 0


# The active profiles. Replaced (never mutated) under _lock, so readers need no lock: the hot path
# of a run only tests it for truth.
_active: Tuple[Profile, ...] = ()
_lock = ForkSafeLock()


def record(model: str, device: str, timing: Tuple[int, int, int, int], status: int = 0) -> None:
    """Adds one job to every active profile. ``timing`` is a core's ``(queued_ns, started_ns,
    finished_ns, core)``. Called by Model.run/run_async only when ``_active`` is non-empty."""
    profiles = _active
    if not profiles:
        return
    q, s, f, c = timing
    rec = JobRecord(model, device, int(q), int(s), int(f), int(c), int(status))
    for p in profiles:
        p._add(rec)


class Profile:
    """Job timing collected while a profile was active (see :func:`profile`). Thread safe."""

    def __init__(self) -> None:
        """An inactive profile with no records; see :func:`profile`."""
        self._records: List[JobRecord] = []
        self._records_lock = threading.Lock()
        self._running = False

    def _add(self, rec: JobRecord) -> None:
        with self._records_lock:
            self._records.append(rec)

    @property
    def records(self) -> List[JobRecord]:
        """The jobs recorded so far, in completion order (a copy)."""
        with self._records_lock:
            return list(self._records)

    @property
    def active(self) -> bool:
        """True between entering and leaving the ``with`` block."""
        return self._running

    def start(self) -> Profile:
        """Starts recording (what entering the ``with`` block does). Returns self."""
        global _active
        with _lock:
            if not self._running:
                self._running = True
                _active = _active + (self,)
        return self

    def stop(self) -> None:
        """Stops recording (what leaving the ``with`` block does). Idempotent."""
        global _active
        with _lock:
            if self._running:
                self._running = False
                _active = tuple(p for p in _active if p is not self)

    def __enter__(self) -> Profile:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def clear(self) -> None:
        """Forgets the records collected so far."""
        with self._records_lock:
            self._records.clear()

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[JobRecord]:
        return iter(self.records)

    def stats(self) -> Dict[str, Dict[str, float]]:
        """Per model: ``count``, ``failed``, and ``latency_{mean,p50,p99}_ms`` (submission to
        completion) and ``run_{mean,p50,p99}_ms`` (time on a core), over the successful jobs."""
        import numpy as np

        groups: Dict[str, List[JobRecord]] = {}
        for r in self.records:
            groups.setdefault(r.model, []).append(r)
        out: Dict[str, Dict[str, float]] = {}
        for name in sorted(groups):
            recs = groups[name]
            ok = [r for r in recs if r.status == 0 and r.finished_ns]
            row: Dict[str, float] = {"count": len(ok), "failed": len(recs) - len(ok)}
            for key, values in (("latency", [r.latency_ns for r in ok]), ("run", [r.run_ns for r in ok])):
                if values:
                    ms = np.asarray(values, dtype=np.float64) / 1e6
                    row[f"{key}_mean_ms"] = float(ms.mean())
                    row[f"{key}_p50_ms"] = float(np.percentile(ms, 50))
                    row[f"{key}_p99_ms"] = float(np.percentile(ms, 99))
                else:
                    row[f"{key}_mean_ms"] = row[f"{key}_p50_ms"] = row[f"{key}_p99_ms"] = float("nan")
            out[name] = row
        return out

    def summary(self) -> str:
        """A text table, one row per model: job count, then mean, p50 and p99 in milliseconds of the
        latency (submission to completion) and of the run time (on a core)."""
        stats = self.stats()
        header = ("model", "count", "lat mean", "lat p50", "lat p99", "run mean", "run p50", "run p99")
        rows = []
        for name, s in stats.items():
            count = str(int(s["count"]))
            if s["failed"]:
                count += f" (+{int(s['failed'])} failed)"
            rows.append((name, count) + tuple(
                f"{s[k]:.3f}" for k in ("latency_mean_ms", "latency_p50_ms", "latency_p99_ms",
                                        "run_mean_ms", "run_p50_ms", "run_p99_ms")))
        widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
                  for i in range(len(header))]

        def fmt(cells: Tuple[str, ...]) -> str:
            first = cells[0].ljust(widths[0])
            return "  ".join([first] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])])

        lines = [fmt(header), fmt(tuple("-" * w for w in widths))]
        lines += [fmt(r) for r in rows]
        lines.append("(times in ms; latency = finished - queued, run = finished - started)")
        if not rows:
            lines.insert(2, "(no jobs recorded)")
        return "\n".join(lines)

    def chrome_trace(self) -> Dict[str, Any]:
        """The Trace Event Format document :meth:`export_chrome_trace` writes: ``"X"`` events (one per
        job that ran; ``ts``/``dur`` in microseconds), one process per device and one thread per core,
        named by ``"M"`` metadata events."""
        records = self.records
        events: List[Dict[str, Any]] = []
        if not records:
            return {"traceEvents": events, "displayTimeUnit": "ms"}
        t0 = min(r.queued_ns for r in records)
        pids: Dict[str, int] = {}
        threads: Dict[Tuple[int, int], None] = {}
        for r in records:
            pid = pids.setdefault(r.device, len(pids) + 1)
            if not r.started_ns or not r.finished_ns:
                continue
            tid = r.core if r.core >= 0 else 0
            threads[(pid, tid)] = None
            events.append({
                "name": r.model, "cat": "job", "ph": "X",
                "ts": (r.started_ns - t0) / 1e3, "dur": (r.finished_ns - r.started_ns) / 1e3,
                "pid": pid, "tid": tid,
                "args": {"queued_us": (r.queued_ns - t0) / 1e3,
                         "wait_us": (r.started_ns - r.queued_ns) / 1e3,
                         "latency_us": (r.finished_ns - r.queued_ns) / 1e3,
                         "status": r.status},
            })
        meta: List[Dict[str, Any]] = []
        for device, pid in pids.items():
            meta.append({"name": "process_name", "ph": "M", "pid": pid, "tid": 0,
                         "args": {"name": device}})
            meta.append({"name": "process_sort_index", "ph": "M", "pid": pid, "tid": 0,
                         "args": {"sort_index": pid}})
        for pid, tid in sorted(threads):
            meta.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                         "args": {"name": f"core {tid}"}})
            meta.append({"name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid,
                         "args": {"sort_index": tid}})
        events.sort(key=lambda e: (e["pid"], e["tid"], e["ts"]))
        return {"traceEvents": meta + events, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path: Union[str, os.PathLike[str]]) -> None:
        """Writes the jobs as a JSON trace that chrome://tracing and Perfetto open: one process per
        device (named by its URI), one track per core ("core N"), one slice per job named by its model."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            json.dump(self.chrome_trace(), f)

    def __repr__(self) -> str:
        state = "active" if self._running else "stopped"
        return f"<accel.Profile {state}, {len(self._records)} jobs>"


def profile() -> Profile:
    """A new :class:`Profile`; use it as a context manager (``with accel.profile() as p:``).

    While it is active, every job run through ``Model.run`` or ``Model.run_async`` (any thread) is
    recorded with the device's timing: model, device, queued/started/finished times and core."""
    return Profile()
