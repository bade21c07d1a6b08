"""Per-job profiling: ``accel.profile()`` collects the device's own timing of every job, and with
``ops=True`` the start and end of every node (layer) of each job, where the device can time them.

    with accel.profile(ops=True) as p:
        for _ in range(100):
            model.run(x)
    print(p.summary())                      # per model, per op type, the slowest nodes
    p.export_chrome_trace("trace.json")     # chrome://tracing, https://ui.perfetto.dev

Profiles are process wide and nest: while several are active, each job is recorded in all of them,
whichever thread ran it. With no profile active, a run costs one truth test (of :data:`PROFILER`'s
``profiles``).
A device that cannot time nodes (the BPU and VART drivers) runs the job as usual: the profile then
records its job timing alone and warns once per model (``RuntimeWarning``), as a profiler should not
stop the program it observes.
"""
from __future__ import annotations

import json
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, NamedTuple, Tuple, Union

from ._forksafe import ForkSafeLock

__all__ = ["JobRecord", "NodeRecord", "NodeStat", "OpStat", "Profile", "profile"]

# accel.h's ACCEL_SUBMIT_PROFILE_NODES.
SUBMIT_PROFILE_NODES = 2


class NodeRecord(NamedTuple):
    """One node's run within a job (``accel.profile(ops=True)``), on the clock of :class:`JobRecord`.

    A node the compiler fused from several (Conv + BatchNormalization + Relu) is one record, named
    after the first of them, with the op type the device ran ("Conv+Relu")."""

    #: The node's name (the source model's name of its first node).
    name: str
    #: What ran: "Conv+Relu", "MaxPool", "Sigmoid", ...
    op_type: str
    #: When it started (CLOCK_MONOTONIC nanoseconds); 0 if it never ran (the job ended first).
    start_ns: int
    #: When it ended; 0 if it never ran.
    end_ns: int

    @property
    def duration_ns(self) -> int:
        """``end_ns - start_ns``; 0 if it never ran."""
        return self.end_ns - self.start_ns if self.start_ns and self.end_ns else 0


@dataclass(frozen=True)
class OpStat:
    """One op type's share of the node time (:meth:`Profile.op_stats`)."""

    op_type: str
    #: Nodes of this type run, over all recorded jobs.
    count: int
    total_ms: float
    mean_ms: float
    #: Of the time of all recorded nodes (0..1; the shares sum to 1).
    share: float


@dataclass(frozen=True)
class NodeStat:
    """One node of a model over the recorded jobs (:meth:`Profile.slowest_nodes`)."""

    model: str
    name: str
    op_type: str
    #: Times it ran.
    count: int
    total_ms: float
    mean_ms: float
    #: Of the time of all recorded nodes (0..1).
    share: float


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
    #: Its nodes in the order they ran (``accel.profile(ops=True)`` on a device that times them).
    nodes: Tuple[NodeRecord, ...] = ()

    @property
    def latency_ns(self) -> int:
        """Submission to completion (``finished_ns - queued_ns``)."""
        return self.finished_ns - self.queued_ns if self.finished_ns else 0

    @property
    def run_ns(self) -> int:
        """Time on the core (``finished_ns - started_ns``); 0 if it never ran."""
        return self.finished_ns - self.started_ns if self.started_ns and self.finished_ns else 0


class Profiler:
    """The profiles active in this process: what a run asks before it submits (:data:`PROFILER`, the one
    instance). ``profiles`` is replaced (never mutated) under a lock, so that the hot path of a run reads it
    without one: ``if PROFILER.profiles:`` is all a run pays while nothing is profiled."""

    __slots__ = ("profiles", "_node_times", "_lock")

    def __init__(self) -> None:
        #: The active profiles, in the order they started (read only: start and stop replace it).
        self.profiles: Tuple[Profile, ...] = ()
        self._node_times = False  # whether one of them wants node times
        self._lock = ForkSafeLock()

    def start(self, profile: Profile) -> bool:
        """Adds ``profile`` (False if it is active already)."""
        with self._lock:
            if profile in self.profiles:
                return False
            self._set(self.profiles + (profile,))
            return True

    def stop(self, profile: Profile) -> bool:
        """Removes ``profile`` (False if it is not active)."""
        with self._lock:
            if profile not in self.profiles:
                return False
            self._set(tuple(p for p in self.profiles if p is not profile))
            return True

    def _set(self, profiles: Tuple[Profile, ...]) -> None:
        self._node_times = any(p.ops for p in profiles)
        self.profiles = profiles

    def record(self, model: str, device: str, timing: Tuple[int, int, int, int], status: int = 0,
               nodes: Tuple[NodeRecord, ...] = ()) -> None:
        """Adds one job to every active profile. ``timing`` is a core's ``(queued_ns, started_ns,
        finished_ns, core)``. Called by Model.run/run_async only while ``profiles`` is non-empty."""
        profiles = self.profiles
        if not profiles:
            return
        q, s, f, c = timing
        rec = JobRecord(model, device, int(q), int(s), int(f), int(c), int(status), tuple(nodes))
        plain = rec._replace(nodes=()) if nodes else rec
        for p in profiles:
            p._add(rec if p.ops else plain)

    def submit_flags(self, nodes: ModelNodes) -> int:
        """The submit flags of a job of the model ``nodes`` describes while profiles are active: node
        profiling when one wants it and the model's device has not said it cannot."""
        return SUBMIT_PROFILE_NODES if self._node_times and nodes.meta is not False else 0


#: The process's profiler: Model and Future ask it, Profile.start and stop change it.
PROFILER = Profiler()


class ModelNodes:
    """What the profiler needs of one model to time its nodes: its core model (whose ``nodes()`` names
    them), its name and its device's URI (for the warning), and the node names once read. A Model makes
    one and hands it to :meth:`Profiler.submit_flags` and :func:`job_nodes`."""

    __slots__ = ("core", "name", "uri", "meta")

    def __init__(self, core: Any, name: str, uri: str) -> None:
        self.core = core
        self.name = name
        self.uri = uri
        # (name, op_type) per node once a profile with ops=True needed them; False: the device cannot
        # time nodes.
        self.meta: Any = None


def job_nodes(nodes: ModelNodes, job: Any) -> Tuple[NodeRecord, ...]:
    """The node records of ``job`` (a finished core job of the model ``nodes`` describes, submitted with
    :meth:`Profiler.submit_flags`); () where the device cannot time nodes (then warns, once per model)."""
    from .errors import AccelError, UnsupportedError

    try:
        meta = nodes.meta
        if meta is None:
            meta = nodes.meta = tuple(nodes.core.nodes())
        if meta is False:
            return ()
        times = job.node_times()
    except UnsupportedError as e:
        if nodes.meta is not False:
            nodes.meta = False
            warnings.warn(f"accel.profile(ops=True): device {nodes.uri!r} cannot time the nodes of model "
                          f"{nodes.name!r} ({e}); only its job timing is recorded", RuntimeWarning,
                          stacklevel=4)
        return ()
    except AccelError:
        return ()  # a job that never ran, say: its job record says why
    return tuple(NodeRecord(name, op, int(start), int(end)) for (name, op), (start, end) in zip(meta, times))


class Profile:
    """Job timing collected while a profile was active (see :func:`profile`). Thread safe."""

    def __init__(self, ops: bool = False) -> None:
        """An inactive profile with no records; see :func:`profile`."""
        self._records: List[JobRecord] = []
        self._records_lock = threading.Lock()
        self._running = False
        self._ops = bool(ops)

    @property
    def ops(self) -> bool:
        """Whether this profile records each job's nodes (``accel.profile(ops=True)``)."""
        return self._ops

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
        if PROFILER.start(self):
            self._running = True
        return self

    def stop(self) -> None:
        """Stops recording (what leaving the ``with`` block does). Idempotent."""
        if PROFILER.stop(self):
            self._running = False

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

    def _node_runs(self) -> List[Tuple[str, NodeRecord]]:
        return [(r.model, n) for r in self.records for n in r.nodes if n.duration_ns]

    def op_stats(self) -> Dict[str, OpStat]:
        """Per op type ("Conv+Relu", "MaxPool", ...), over every node of every recorded job (a
        profile with ``ops=True``): count, total and mean milliseconds, and share of all node time;
        the slowest type first. Empty without node records."""
        totals: Dict[str, List[int]] = {}
        for _, n in self._node_runs():
            t = totals.setdefault(n.op_type, [0, 0])
            t[0] += 1
            t[1] += n.duration_ns
        whole = sum(t[1] for t in totals.values()) or 1
        rows = sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0]))
        return {op: OpStat(op, count, ns / 1e6, ns / 1e6 / count, ns / whole) for op, (count, ns) in rows}

    def slowest_nodes(self, n: int = 10) -> List[NodeStat]:
        """The ``n`` nodes with the most time over the recorded jobs (a node of a model is one entry
        however often it ran: its count, total and mean milliseconds, share of all node time)."""
        totals: Dict[Tuple[str, str, str], List[int]] = {}
        for model, node in self._node_runs():
            t = totals.setdefault((model, node.name, node.op_type), [0, 0])
            t[0] += 1
            t[1] += node.duration_ns
        whole = sum(t[1] for t in totals.values()) or 1
        rows = sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0]))[:max(0, int(n))]
        return [NodeStat(model, name, op, count, ns / 1e6, ns / 1e6 / count, ns / whole)
                for (model, name, op), (count, ns) in rows]

    def ops_summary(self, top: int = 10) -> str:
        """The per-op-type table and the ``top`` slowest nodes, as :meth:`summary` ends with them;
        "" without node records."""
        stats = self.op_stats()
        if not stats:
            return ""
        lines = ["", "per op type (all nodes of all jobs):"]
        lines += _table(("op type", "count", "total ms", "mean ms", "share"),
                        [(s.op_type, str(s.count), f"{s.total_ms:.3f}", f"{s.mean_ms:.4f}", f"{s.share:6.1%}")
                         for s in stats.values()])
        slow = self.slowest_nodes(top)
        lines += ["", f"slowest nodes (top {len(slow)}):"]
        lines += _table(("model", "node", "op type", "count", "mean ms", "share"),
                        [(s.model, s.name, s.op_type, str(s.count), f"{s.mean_ms:.4f}", f"{s.share:6.1%}")
                         for s in slow], text_columns=3)
        return "\n".join(lines)

    def summary(self) -> str:
        """A text table, one row per model: job count, then mean, p50 and p99 in milliseconds of the
        latency (submission to completion) and of the run time (on a core). With node records
        (``ops=True``) a per-op-type table (count, total, mean, share) and the slowest nodes follow."""
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
        text = "\n".join(lines)
        if self._ops:
            ops = self.ops_summary()
            text += ops if ops else "\n(no node times recorded: the device cannot time nodes)"
        return text

    def chrome_trace(self) -> Dict[str, Any]:
        """The Trace Event Format document :meth:`export_chrome_trace` writes: ``"X"`` events (one per
        job that ran, category ``"job"``; ``ts``/``dur`` in microseconds), one process per device and
        one thread per core, named by ``"M"`` metadata events. Node records (``ops=True``) are
        ``"X"`` events of category ``"node"`` on their job's track, within its span, so viewers nest
        them under it."""
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
            # Nodes nest under their job: same track, inside its span.
            for n in r.nodes:
                if n.duration_ns:
                    events.append({
                        "name": n.name or n.op_type, "cat": "node", "ph": "X",
                        "ts": (n.start_ns - t0) / 1e3, "dur": n.duration_ns / 1e3,
                        "pid": pid, "tid": tid, "args": {"op_type": n.op_type, "model": r.model},
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
        # A job before its first node when both start at the same microsecond (viewers nest by order).
        events.sort(key=lambda e: (e["pid"], e["tid"], e["ts"], e["cat"] != "job"))
        return {"traceEvents": meta + events, "displayTimeUnit": "ms"}

    def export_chrome_trace(self, path: Union[str, os.PathLike[str]]) -> None:
        """Writes the jobs as a JSON trace that chrome://tracing and Perfetto open: one process per
        device (named by its URI), one track per core ("core N"), one slice per job named by its model."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            json.dump(self.chrome_trace(), f)

    def __repr__(self) -> str:
        state = "active" if self._running else "stopped"
        return f"<accel.Profile {state}, {len(self._records)} jobs>"


def _table(header: Tuple[str, ...], rows: List[Tuple[str, ...]], text_columns: int = 1) -> List[str]:
    """The lines of a table: the first ``text_columns`` left-aligned, the numbers right-aligned."""
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
              for i in range(len(header))]

    def fmt(cells: Tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if i < text_columns else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return [fmt(header), fmt(tuple("-" * w for w in widths))] + [fmt(r) for r in rows]


def profile(ops: bool = False) -> Profile:
    """A new :class:`Profile`; use it as a context manager (``with accel.profile() as p:``).

    While it is active, every job run through ``Model.run`` or ``Model.run_async`` (any thread) is
    recorded with the device's timing: model, device, queued/started/finished times and core.
    With ``ops=True`` each job also records when each of its nodes started and ended
    (:class:`NodeRecord`; :meth:`Profile.op_stats`, :meth:`Profile.slowest_nodes`), where the device
    can time them; where it cannot, the job timing alone is recorded and a ``RuntimeWarning`` says
    so once per model. Jobs run without ``ops`` pay nothing for it."""
    return Profile(ops)
